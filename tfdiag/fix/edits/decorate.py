"""An eager training step or per-batch body → ``@tf.function`` on the function that holds
it: its ops then run as one graph call instead of one Python dispatch each.

A function already decorated runs eagerly only when something turns every
``tf.function`` off: that switch (``tf.config.run_functions_eagerly(True)``) is removed
instead. A body that reads values into Python (``.numpy()``, ``float(...)``), prints, or
yields is not decorated: in a graph those run once, when it is traced.
"""

from __future__ import annotations

import libcst as cst

from tfdiag.fix.edits.base import Edit, Files, NoEdit, Target, edited, source_for
from tfdiag.fix.edits.switch import remove_switch
from tfdiag.fix.source import Source, dotted

#: Calls whose work a graph would do once, at trace time, or not at all.
PYTHON_ONLY = frozenset({"print", "float", "int", "bool", "numpy", "item", "input", "open"})


def _python_only(fn: cst.FunctionDef) -> str | None:
    found: list[str] = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            name = dotted(node.func).rsplit(".", 1)[-1]
            if name in PYTHON_ONLY:
                found.append(name)

        def visit_Yield(self, node: cst.Yield) -> None:
            found.append("yield")

    fn.body.visit(_Find())
    return found[0] if found else None


def _decorated(source: Source, fn: cst.FunctionDef) -> bool:
    return any(
        dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator).endswith(
            "function"
        )
        for d in fn.decorators
    )


def _holding(source: Source, target: Target) -> cst.FunctionDef | None:
    """The innermost function around the finding's line, when it is the one it names."""
    found = None
    for node in source.nodes(cst.FunctionDef):
        assert isinstance(node, cst.FunctionDef)
        r = source.position(node)
        if r.start.line <= target.line <= r.end.line:
            found = node
    name = target.function.rsplit(".", 1)[-1]
    return found if found is not None and (not name or found.name.value == name) else None


def held(files: Files, target: Target) -> tuple[Source, cst.FunctionDef] | NoEdit:
    """The file of the finding's line and the function that holds it, or why none."""
    source = source_for(files, target)
    if isinstance(source, NoEdit):
        return source
    fn = _holding(source, target)
    if fn is None:
        return NoEdit("the finding names no function of yours to compile")
    return source, fn


def decorate(source: Source, fn: cst.FunctionDef, decorator: str, kind: str) -> Edit:
    """``fn`` with ``@decorator`` put first (``tf.function``, ``jax.jit``)."""
    first = cst.Decorator(cst.parse_expression(decorator))
    new = source.module.deep_replace(fn, fn.with_changes(decorators=[first, *fn.decorators]))
    assert isinstance(new, cst.Module)
    line = source.position(fn).start.line
    return edited(source, kind, line, new, f"`@{decorator}` on `{fn.name.value}` (line {line})")


def tf_function(files: Files, target: Target) -> Edit | NoEdit:
    found = held(files, target)
    if isinstance(found, NoEdit):
        return found
    source, fn = found
    if _decorated(source, fn):
        undone = remove_switch(
            files, Target(target.finding, "debug-switch:tf-functions-eagerly", api="")
        )
        if isinstance(undone, Edit):
            return undone
        return NoEdit(f"`{fn.name.value}` is a `tf.function` already, and nothing turns it off")
    tf = source.tensorflow_alias()
    if tf is None:
        return NoEdit(f"{source.path.rsplit('/', 1)[-1]} does not import tensorflow")
    python = _python_only(fn)
    if python is not None:
        return NoEdit(
            f"`{fn.name.value}` calls `{python}`, which in a graph would run once, when traced"
        )
    return decorate(source, fn, f"{tf}.function", "tf-function")
