"""A Python number passed to a ``tf.function`` that is traced again for each new value →
the value wrapped in ``tf.constant(...)`` at the call: a tensor is an input of one graph,
where a Python number is part of the graph's signature.

The record names the traced function (its name and where it is defined) and the argument
whose value changes (the finding's evidence, read as data). The edit is made at the one
call of that function in your files that passes a value which is not a literal, positional
or by keyword. It is not made where the function uses the parameter as a Python value
(an ``if`` or ``while`` test, ``range``/``int``/``float``/``len``/``str``/…, an index, an
f-string): as a tensor it would be a graph conditional or loop, or fail.
"""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst

from tfdiag.fix.edits.base import Edit, Files, NoEdit, Target, edited
from tfdiag.fix.source import Source, dotted, reads

#: ``step`` (train.py:12) was traced 10× in the steady calls; argument `scale` is a Python
#: value that changes (the evidence line of :func:`tfdiag.advise.tracing.retrace_cause`).
_TRACED = re.compile(
    r"`(?P<function>[\w.<>]+)` \((?P<file>[^()]+):(?P<line>\d+)\) was traced \d+× in the "
    r"steady calls; argument `(?P<argument>\w+)` is a Python value that changes"
)
#: Builtins that read a parameter as a Python value (a tensor there fails or is one value).
PYTHON_READS = frozenset(
    {"range", "int", "float", "bool", "str", "len", "round", "print", "format", "list", "abs"}
)
#: Calls whose result is a tensor already.
TENSORS = frozenset({"constant", "convert_to_tensor", "Variable", "cast"})


def _traced(evidence: tuple[str, ...]) -> tuple[str, str, int, str] | None:
    """``(function, file name, line, argument)`` from the finding's evidence."""
    for line in evidence:
        m = _TRACED.search(line)
        if m:
            name = m["function"].rsplit(".", 1)[-1]
            return name, m["file"].rsplit("/", 1)[-1], int(m["line"]), m["argument"]
    return None


def _definition(
    files: Files, name: str, file: str, line: int
) -> tuple[Source, cst.FunctionDef] | None:
    """The ``def`` of the traced function: its name, in a file of that name, starting (or
    its first decorator starting) at ``line``."""
    for source in files.sources():
        if Path(source.path).name != file:
            continue
        for node in source.nodes(cst.FunctionDef):
            assert isinstance(node, cst.FunctionDef)
            lines = {source.position(node).start.line}
            lines |= {source.position(d).start.line for d in node.decorators}
            if node.name.value == name and line in lines:
                return source, node
    return None


def defined(
    files: Files, name: str, file: str, line: int
) -> tuple[Source, cst.FunctionDef] | NoEdit:
    """:func:`_definition`, or why there is none to edit."""
    found = _definition(files, name, file, line)
    if found is None:
        return NoEdit(f"`{name}` ({file}:{line}) is not a function in your files")
    return found


def _python_use(fn: cst.FunctionDef, param: str) -> str | None:
    """How the body uses ``param`` as a Python value, None when it does not."""
    found: list[str] = []

    class _Find(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            if param in reads(node.test):
                found.append("an `if` test")

        def visit_While(self, node: cst.While) -> None:
            if param in reads(node.test):
                found.append("a `while` test")

        def visit_IfExp(self, node: cst.IfExp) -> None:
            if param in reads(node.test):
                found.append("a conditional expression's test")

        def visit_Call(self, node: cst.Call) -> None:
            name = dotted(node.func)
            if name in PYTHON_READS and any(param in reads(a.value) for a in node.args):
                found.append(f"`{name}(...)`")

        def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
            if param in reads(node.slice):
                found.append("an index")

        def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
            if param in reads(node.expression):
                found.append("an f-string")

    fn.body.visit(_Find())
    return found[0] if found else None


def _position(fn: cst.FunctionDef, param: str, method: bool) -> tuple[int | None, bool]:
    """``param``'s index among the positional arguments of a call (None: keyword only),
    and whether the function has it at all."""
    positional = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    if method and positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    if param in positional:
        return positional.index(param), True
    return None, param in {p.name.value for p in fn.params.kwonly_params}


def _calls(source: Source, name: str, line: int = 0) -> list[cst.Call]:
    """The calls of ``name`` (``name(...)``, ``obj.name(...)``), on ``line`` when given."""
    out = []
    for node in source.nodes(cst.Call):
        assert isinstance(node, cst.Call)
        f = node.func
        called = (
            f.value
            if isinstance(f, cst.Name)
            else (f.attr.value if isinstance(f, cst.Attribute) else "")
        )
        if called == name and (not line or source.position(node).start.line == line):
            out.append(node)
    return out


def _passed(call: cst.Call, index: int | None, param: str) -> cst.Arg | None | str:
    """The argument of ``call`` that binds ``param`` (None: not passed; a str: why it is
    not known)."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value == param:
            return a
    if index is None:
        return None
    positional = []
    for a in call.args:
        if a.keyword is not None:
            break
        if a.star:
            return "the call unpacks its arguments (`*args`)"
        positional.append(a)
    return positional[index] if index < len(positional) else None


def _imports(source: Source, fn: cst.FunctionDef, defined: Source) -> bool:
    """Does ``source`` import the function (``from train import step``, ``from train import
    *``) or the module that defines it (``import train``)? Read from its import statements,
    by name."""
    name, module = fn.name.value, Path(defined.path).stem
    for node in source.nodes((cst.Import, cst.ImportFrom)):
        if isinstance(node, cst.ImportFrom):
            if node.module is None or dotted(node.module).rsplit(".", 1)[-1] != module:
                continue
            if isinstance(node.names, cst.ImportStar) or any(
                dotted(a.name) == name for a in node.names
            ):
                return True
        elif isinstance(node, cst.Import) and any(
            dotted(a.name).rsplit(".", 1)[-1] == module for a in node.names
        ):
            return True
    return False


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString))


def tf_constant(files: Files, target: Target) -> Edit | NoEdit:
    traced = _traced(target.evidence)
    if traced is None:
        return NoEdit("the record names no Python argument of a traced function of yours")
    name, file, def_line, param = traced
    found = defined(files, name, file, def_line)
    if isinstance(found, NoEdit):
        return found
    def_source, fn = found
    method = any(isinstance(a, cst.ClassDef) for a in def_source.ancestors(fn))
    index, has = _position(fn, param, method)
    if index is None and not has:
        return NoEdit(f"`{name}` has no parameter `{param}` to pass a tensor to")
    use = _python_use(fn, param)
    if use is not None:
        return NoEdit(
            f"`{name}` uses `{param}` as a Python value ({use}): as a tensor it would be a "
            "graph conditional or loop, or fail"
        )
    at = files.get(target.file) if target.file and target.line else None
    if isinstance(at, Source) and _calls(at, name, target.line):
        scope = [(at, target.line)]  # the finding's own line calls it
    else:  # the line is inside the traced function (or a library's): every call of yours
        # that can reach it: in its own file, or in a file that imports it (a file beside it
        # with a function of the same name is another function)
        scope = [
            (s, 0)
            for s in files.sources()
            if s.path == def_source.path or _imports(s, fn, def_source)
        ]
    sites: list[tuple[Source, cst.Call, cst.Arg]] = []
    for source, line in scope:
        for call in _calls(source, name, line):
            arg = _passed(call, index, param)
            if isinstance(arg, str):
                return NoEdit(f"`{name}` at line {source.position(call).start.line}: {arg}")
            if arg is not None and not _literal(arg.value):
                sites.append((source, call, arg))
    if not sites:
        return NoEdit(f"no call of `{name}` in your files passes `{param}` a changing value")
    if len(sites) > 1:
        where = ", ".join(f"{Path(s.path).name}:{s.position(c).start.line}" for s, c, _ in sites)
        return NoEdit(
            f"`{name}` gets `{param}` from {len(sites)} calls ({where}): which one "
            "changes it is not known"
        )
    source, call, arg = sites[0]
    value = arg.value
    if isinstance(value, cst.Call) and dotted(value.func).rsplit(".", 1)[-1] in TENSORS:
        return NoEdit(f"`{param}` is passed a tensor already ({source.code(value)})")
    tf = source.tensorflow_alias()
    if tf is None:
        return NoEdit(f"{Path(source.path).name} does not import tensorflow")
    wrapped = cst.Call(cst.parse_expression(f"{tf}.constant"), [cst.Arg(value)])
    new = source.module.deep_replace(arg, arg.with_changes(value=wrapped))
    assert isinstance(new, cst.Module)
    line = source.position(call).start.line
    return edited(
        source,
        "tf-constant",
        line,
        new,
        f"`{param}` of `{name}` passed as `{tf}.constant({source.code(value)})` (line {line})",
    )
