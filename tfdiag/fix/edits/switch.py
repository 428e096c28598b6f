"""A debugging switch left on → removed: the ``run_eagerly=True`` / ``dynamic=True``
keyword, the ``model.run_eagerly = True`` line, or the statement that turns a global
debug mode on (``tf.config.run_functions_eagerly(True)``,
``tf.data.experimental.enable_debug_mode()``).

The record names the switch, not always its line (a compiled model's flag is read from
the model): the edit looks for that switch's spelling in the user's files, the script
first, and changes the first file that has it.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tfdiag.fix.edits.base import Edit, Files, NoEdit, Target
from tfdiag.fix.edits.blocks import remove
from tfdiag.fix.source import Source, dotted


@dataclass(frozen=True)
class Switch:
    """How a switch is spelled: keywords set to True, attributes assigned True, and
    functions whose call statement turns it on (with True, or with no argument)."""

    spelled: str
    keywords: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()


#: The record's name for a switch (the finding's line API, the remedy's key) → spelling.
SWITCHES: dict[str, Switch] = {
    "run-eagerly": Switch("run_eagerly=True", keywords=("run_eagerly",)),
    "eager-step": Switch("run_eagerly=True", keywords=("run_eagerly", "dynamic")),
    "dynamic": Switch("dynamic=True", keywords=("dynamic",)),
    "tf-functions-eagerly": Switch(
        "tf.config.run_functions_eagerly(True)",
        calls=("run_functions_eagerly", "experimental_run_functions_eagerly"),
    ),
    "tf-data-debug": Switch(
        "tf.data.experimental.enable_debug_mode()", calls=("enable_debug_mode",)
    ),
    "tf-check-numerics": Switch(
        "tf.debugging.enable_check_numerics()", calls=("enable_check_numerics",)
    ),
}


def _true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _switch_calls(source: Source, switch: Switch) -> list[cst.SimpleStatementLine]:
    """Statements that turn the switch on: a call statement, or ``x.run_eagerly = True``."""
    out = []
    for stmt in source.nodes(cst.SimpleStatementLine):
        assert isinstance(stmt, cst.SimpleStatementLine)
        if len(stmt.body) != 1:
            continue
        small = stmt.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            name = dotted(call.func).rsplit(".", 1)[-1]
            args = [a for a in call.args if a.keyword is None]
            if name in switch.calls and (not args or _true(args[0].value)):
                out.append(stmt)
        elif isinstance(small, cst.Assign) and _true(small.value):
            for t in small.targets:
                if isinstance(t.target, cst.Attribute) and t.target.attr.value in switch.keywords:
                    out.append(stmt)
    return out


def _keyword_calls(source: Source, switch: Switch) -> list[cst.Call]:
    return [
        n
        for n in source.nodes(cst.Call)
        if isinstance(n, cst.Call)
        and any(
            a.keyword is not None and a.keyword.value in switch.keywords and _true(a.value)
            for a in n.args
        )
    ]


class _DropKeywords(cst.CSTTransformer):
    def __init__(self, calls: list[cst.Call], keywords: tuple[str, ...]) -> None:
        self.calls, self.keywords = calls, keywords

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not any(original_node is c for c in self.calls):
            return updated_node
        args = list(updated_node.args)
        kept = [
            a
            for a in args
            if not (a.keyword is not None and a.keyword.value in self.keywords and _true(a.value))
        ]
        if kept and kept[-1] is not args[-1] and args[-1].comma is cst.MaybeSentinel.DEFAULT:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(args=kept)


def _in(source: Source, node: cst.CSTNode, line: int) -> bool:
    r = source.position(node)
    return line == 0 or r.start.line <= line <= r.end.line


def remove_switch(files: Files, target: Target) -> Edit | NoEdit:
    name = target.remedy.split(":", 1)[-1] if ":" in target.remedy else target.api
    switch = SWITCHES.get(name) or SWITCHES.get(target.api)
    if switch is None:
        return NoEdit(f"`{name}` is a switch this edit does not know how to turn off")
    found = files.get(target.file) if target.file and target.line else None
    sources = [found] if isinstance(found, Source) else list(files.sources())
    line = target.line if isinstance(found, Source) else 0
    for source in sources:
        calls = [c for c in _keyword_calls(source, switch) if _in(source, c, line)]
        stmts = [s for s in _switch_calls(source, switch) if _in(source, s, line)]
        if not calls and not stmts:
            continue
        module = source.module
        if calls:
            module = module.visit(_DropKeywords(calls, switch.keywords))
        at = min(source.position(n).start.line for n in (*calls, *stmts))
        if stmts:  # the calls above are in other statements: the tree still holds these
            for stmt in stmts:
                module = remove(module, _same(module, stmt))
        return Edit(
            "remove-switch",
            source.path,
            at,
            at,
            source.text,
            module.code,
            f"removed `{switch.spelled}` (line {at})",
            source.encoding,
        )
    return NoEdit(f"`{switch.spelled}` is set nowhere in your files, so it is not removed here")


def _same(module: cst.Module, stmt: cst.SimpleStatementLine) -> cst.CSTNode:
    """The node of ``module`` equal to ``stmt`` (the tree may have been rebuilt)."""
    found: list[cst.CSTNode] = []

    class _Find(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            if not found and node.deep_equals(stmt):
                found.append(node)

    module.visit(_Find())
    return found[0] if found else stmt
