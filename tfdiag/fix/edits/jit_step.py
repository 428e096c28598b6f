"""An eager JAX step (Keras on JAX: ``stateless_call`` and ``jax.grad`` run op by op from
Python every step) → ``@jax.jit`` on the function that holds it: the twin of
:mod:`tfdiag.fix.edits.decorate`'s ``@tf.function``.

A jitted function runs its Python once, when traced: it must be a function of its
arguments that returns its results. It is not decorated where its body does what a trace
would do once or not at all — prints, reads values into Python (``float``, ``.item()``,
``np.asarray``), yields, assigns to a variable (``.assign``), an attribute or an item, or
declares ``global``/``nonlocal`` — nor where it returns nothing (jitted, its work would be
dropped), nor where it is jitted already.
"""

from __future__ import annotations

import libcst as cst

from tfdiag.fix.edits.base import Edit, Files, NoEdit, Target
from tfdiag.fix.edits.decorate import PYTHON_ONLY, decorate, held
from tfdiag.fix.source import dotted
from tfdiag.records.catalog.backends import JAX

#: Calls that change state outside the function (a traced function runs them once).
_STATEFUL = frozenset({"assign", "assign_add", "assign_sub", "append", "extend", "update"})


def _impure(fn: cst.FunctionDef) -> str | None:
    """What in the body a trace would run once, or not at all (None: nothing found)."""
    found: list[str] = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            name = dotted(node.func)
            last = name.rsplit(".", 1)[-1]
            if last in PYTHON_ONLY or name in ("np.asarray", "np.array", "numpy.asarray"):
                found.append(f"`{name or last}(...)`")
            elif last in _STATEFUL and isinstance(node.func, cst.Attribute):
                found.append(f"`.{last}(...)`")

        def visit_Yield(self, node: cst.Yield) -> None:
            found.append("`yield`")

        def visit_Global(self, node: cst.Global) -> None:
            found.append("`global`")

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            found.append("`nonlocal`")

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, (cst.Attribute, cst.Subscript)):
                found.append("an assignment to an attribute or an item")

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, (cst.Attribute, cst.Subscript)):
                found.append("an assignment to an attribute or an item")

    fn.body.visit(_Find())
    return found[0] if found else None


def _returns(fn: cst.FunctionDef) -> bool:
    """Does the function return a value (its own ``return x``, not a nested function's)?"""
    found = False

    class _Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is fn  # nested definitions' returns are theirs

        def visit_Return(self, node: cst.Return) -> None:
            nonlocal found
            found = found or node.value is not None

    fn.visit(_Find())
    return found


def _jitted(fn: cst.FunctionDef) -> bool:
    for d in fn.decorators:
        expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        if dotted(expr).rsplit(".", 1)[-1] == "jit":
            return True
        if isinstance(d.decorator, cst.Call) and any(
            dotted(a.value).rsplit(".", 1)[-1] == "jit" for a in d.decorator.args
        ):
            return True  # partial(jax.jit, ...)
    return False


def jax_jit(files: Files, target: Target) -> Edit | NoEdit:
    found = held(files, target)
    if isinstance(found, NoEdit):
        return found
    source, fn = found
    if _jitted(fn):
        return NoEdit(f"`{fn.name.value}` is jitted already")
    jax = source.import_alias(JAX.module)
    if jax is None:
        return NoEdit(f"{source.path.rsplit('/', 1)[-1]} does not `import jax`")
    impure = _impure(fn)
    if impure is not None:
        return NoEdit(
            f"`{fn.name.value}` has {impure}, which a jitted function runs once, when traced"
        )
    if not _returns(fn):
        return NoEdit(f"`{fn.name.value}` returns nothing: jitted, its work would be dropped")
    return decorate(source, fn, f"{jax}.jit", "jax-jit")
