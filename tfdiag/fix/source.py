"""A user's source file as a concrete syntax tree: the statement at a line, the blocks
around it, and the names a piece of code reads or binds.

libcst keeps every comment, blank line and bracket of the file, so an edit changes the
nodes it names and nothing else: the rest of the file prints back byte for byte.
"""

from __future__ import annotations

import hashlib
import io
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, ParentNodeProvider, PositionProvider

#: Folders that are never the user's source (copied or scanned).
SKIPPED_DIRS = frozenset({".git", ".venv", "venv", "__pycache__", "node_modules", ".tox"})
#: Statements that hold a body of statements, the blocks an edit walks out of.
LOOPS = (cst.For, cst.While)
BLOCKS = (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.If, cst.Try, cst.With)


def digest(data: bytes) -> str:
    """The hash ``--apply`` compares a file's bytes with before writing it."""
    return hashlib.sha256(data).hexdigest()


def decode(data: bytes) -> tuple[str, str]:
    """A Python file's bytes as its text and encoding, the way Python reads it (a BOM, a
    PEP 263 ``coding:`` line; UTF-8 otherwise), its line endings left as they are:
    ``text.encode(encoding)`` gives the same bytes back, so an edit changes only what it
    edits (a CRLF file stays CRLF, a BOM stays). Raises SyntaxError (a bad declaration) or
    UnicodeDecodeError."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding), encoding


def read(path: Path) -> tuple[str, str]:
    """:func:`decode` of the file at ``path``."""
    return decode(path.read_bytes())


@dataclass
class Source:
    """One parsed file: its text (line endings as in the file), the encoding it is
    written back in, its tree and where each node sits."""

    path: str
    text: str
    encoding: str = "utf-8"
    module: cst.Module = field(init=False)
    wrapper: MetadataWrapper = field(init=False)

    def __post_init__(self) -> None:
        self.module = cst.parse_module(self.text)
        self.wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self._pos = self.wrapper.resolve(PositionProvider)
        self._parent = self.wrapper.resolve(ParentNodeProvider)

    @property
    def sha256(self) -> str:
        return digest(self.text.encode(self.encoding))

    def position(self, node: cst.CSTNode) -> CodeRange:
        return self._pos[node]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parent.get(node)

    def nodes(
        self, kind: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...]
    ) -> Iterator[cst.CSTNode]:
        """Every node of ``kind``, in file order."""
        for node in self._pos:
            if isinstance(node, kind):
                yield node

    def statement_at(self, line: int) -> cst.SimpleStatementLine | None:
        """The simple statement (one logical line) that holds ``line``."""
        for node in self.nodes(cst.SimpleStatementLine):
            r = self._pos[node]
            if r.start.line <= line <= r.end.line:
                assert isinstance(node, cst.SimpleStatementLine)
                return node
        return None

    def on_line(self, line: int, kind: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """The nodes of ``kind`` that start on ``line``."""
        return [n for n in self.nodes(kind) if self._pos[n].start.line == line]

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """The compound statements around ``node``, innermost first (up to the module)."""
        at = self.parent(node)
        while at is not None:
            if isinstance(at, (*BLOCKS, cst.Module)):
                yield at
            at = self.parent(at)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def tensorflow_alias(self) -> str | None:
        """The name the file imports TensorFlow as (``tf``), None when it does not."""
        return self.import_alias("tensorflow")

    def import_alias(self, module: str) -> str | None:
        """The name ``import <module>`` binds in the file (``tf`` for ``import tensorflow as
        tf``), None when the file does not import it so."""
        for node in self.nodes(cst.Import):
            assert isinstance(node, cst.Import)
            for alias in node.names:
                if _dotted(alias.name) == module:
                    return alias.evaluated_alias or module
        return None


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def dotted(node: cst.BaseExpression) -> str:
    """``tf.config.run_functions_eagerly`` for that attribute chain, "" for anything else."""
    return _dotted(node)


class _Reads(cst.CSTVisitor):
    """The names an expression reads (not attribute names, keywords or lambda parameters)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self._own: list[set[str]] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        own = {p.name.value for p in node.params.params}
        inner = _Reads()
        node.body.visit(inner)
        self.names |= inner.names - own
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def reads(node: cst.CSTNode) -> set[str]:
    """The names ``node`` reads."""
    v = _Reads()
    node.visit(v)
    return v.names


class _Binds(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._target(el.value)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._target(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            self.names.add(dotted(node.name).split(".")[0])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_Del(self, node: cst.Del) -> None:
        self._target(node.target)


def target_names(target: cst.BaseExpression) -> set[str]:
    """The names an assignment target (a ``for`` target) binds: ``i, (a, b)`` → i, a, b."""
    v = _Binds()
    v._target(target)
    return v.names


def binds(nodes: Sequence[cst.CSTNode]) -> set[str]:
    """The names ``nodes`` assign (a loop's target, assignments, imports, defs)."""
    v = _Binds()
    for n in nodes:
        n.visit(v)
    return v.names


#: Method names that change the object they are called on.
MUTATORS = frozenset(
    {"append", "extend", "insert", "update", "pop", "setdefault", "clear", "add", "remove"}
)


class _Mutated(cst.CSTVisitor):
    """The names whose object a block changes in place: ``x.append(..)``, ``x[i] = ..``,
    ``x.attr = ..``, ``x.assign(..)``."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name):
            name = f.attr.value
            if name in MUTATORS or name.startswith("assign"):
                self.names.add(f.value.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        t = node.target
        if isinstance(t, (cst.Subscript, cst.Attribute)):
            base = dotted(t.value).split(".")[0] if not isinstance(t.value, cst.Call) else ""
            if base:
                self.names.add(base)


def mutated(nodes: Sequence[cst.CSTNode]) -> set[str]:
    v = _Mutated()
    for n in nodes:
        n.visit(v)
    return v.names
