"""A ``jax.jit`` function whose static argument changes on every call → that argument
taken out of ``static_argnums`` / ``static_argnames``: JAX then traces it as an array, an
input of one compiled program, where each new static value was a new compilation.

The record names the function (its name and where it is defined) and the argument (JAX's
cache-miss explanation, read as data from the finding's evidence). The edit is made where
the function is jitted in the user's files — a decorator (``@partial(jax.jit,
static_argnums=1)``) or a call (``jax.jit(step, static_argnums=(1,))``,
``partial(jax.jit, static_argnums=1)(step)``) — and only there. It is not made where the
function uses the argument as a Python value (an ``if`` test, ``range``, an index, an
f-string: as an array it would fail to trace), nor where the numbers are not literals (a
computed ``static_argnums`` is not read).
"""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst

from tfdiag.fix.edits.base import Edit, Files, NoEdit, Target, edited
from tfdiag.fix.edits.constant import _position, _python_use, defined
from tfdiag.fix.source import Source, dotted

#: ``JAX compiled `step` (train.py:9) 29× …`` and ``` `scale` is a static argument ```
#: (the evidence of :func:`tfdiag.advise.jit.recompiled`).
_COMPILED = re.compile(r"JAX compiled `(?P<function>[\w.<>]+)` \((?P<file>[^()]+):(?P<line>\d+)\)")
_STATIC = re.compile(r"^`(?P<argument>\w+)` is a static argument")
_KEYWORDS = ("static_argnums", "static_argnames")


def _named(evidence: tuple[str, ...]) -> tuple[str, str, int, str] | None:
    """``(function, file name, line, argument)`` from the finding's evidence."""
    compiled = next((m for e in evidence if (m := _COMPILED.search(e))), None)
    static = next((m for e in evidence if (m := _STATIC.search(e))), None)
    if compiled is None or static is None:
        return None
    name = compiled["function"].rsplit(".", 1)[-1]
    return name, compiled["file"].rsplit("/", 1)[-1], int(compiled["line"]), static["argument"]


def _is_jit(node: cst.BaseExpression) -> bool:
    return dotted(node).rsplit(".", 1)[-1] == "jit"


def _is_partial_jit(call: cst.Call) -> bool:
    """``partial(jax.jit, ...)`` / ``functools.partial(jax.jit, ...)``."""
    return (
        dotted(call.func).rsplit(".", 1)[-1] == "partial"
        and bool(call.args)
        and call.args[0].keyword is None
        and _is_jit(call.args[0].value)
    )


def _jit_calls(source: Source, fn: cst.FunctionDef) -> list[cst.Call]:
    """The calls that jit ``fn``: its decorators' ``partial(jax.jit, …)`` /
    ``jax.jit(…)``, and ``jax.jit(fn, …)`` / ``partial(jax.jit, …)(fn)`` in the file."""
    name = fn.name.value
    out = []
    for d in fn.decorators:
        if isinstance(d.decorator, cst.Call) and (
            _is_partial_jit(d.decorator) or _is_jit(d.decorator.func)
        ):
            out.append(d.decorator)
    for node in source.nodes(cst.Call):
        assert isinstance(node, cst.Call)
        first = node.args[0].value if node.args and node.args[0].keyword is None else None
        if _is_jit(node.func) and isinstance(first, cst.Name) and first.value == name:
            out.append(node)
        elif (
            isinstance(node.func, cst.Call)
            and _is_partial_jit(node.func)
            and isinstance(first, cst.Name)
            and first.value == name
        ):
            out.append(node.func)
    return out


def _without(
    value: cst.BaseExpression, drop: int | str
) -> tuple[cst.BaseExpression | None, bool] | str:
    """``static_argnums``'s value without ``drop`` (None: nothing left), and whether it was
    there; a str: why it is not read (not literal numbers / names)."""
    if isinstance(value, (cst.Integer, cst.SimpleString)):
        elements: list[cst.BaseExpression] = [value]
    elif isinstance(value, (cst.Tuple, cst.List)):
        elements = [e.value for e in value.elements]
    else:
        return f"`{cst.Module([]).code_for_node(value)}` is not a literal"
    kept, found = [], False
    for e in elements:
        if isinstance(e, cst.Integer):
            key: int | str = int(e.value)
        elif isinstance(e, cst.SimpleString):
            key = e.evaluated_value if isinstance(e.evaluated_value, str) else ""
        else:
            return "its static arguments are not literals"
        if key == drop:
            found = True
        else:
            kept.append(e)
    if not kept:
        return None, found
    if len(kept) == 1 and not isinstance(value, (cst.Tuple, cst.List)):
        return kept[0], found
    return cst.Tuple([cst.Element(e) for e in kept]), found


def _edited_call(call: cst.Call, index: int | None, param: str) -> cst.Call | None | str:
    """``call`` without ``param`` among its static arguments (None: it was not there)."""
    args, changed = [], False
    for a in call.args:
        word = a.keyword.value if a.keyword is not None else ""
        if word in _KEYWORDS:
            drop: int | str | None = param if word == "static_argnames" else index
            if drop is None:
                args.append(a)
                continue
            left = _without(a.value, drop)
            if isinstance(left, str):
                return left
            value, found = left
            changed = changed or found
            if found and value is None:
                continue
            args.append(a.with_changes(value=value) if found and value is not None else a)
        else:
            args.append(a)
    if not changed:
        return None
    if args:  # the last argument keeps no trailing comma of a dropped one
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def jit_static(files: Files, target: Target) -> Edit | NoEdit:
    named = _named(target.evidence)
    if named is None:
        return NoEdit("the record names no static argument of a jitted function of yours")
    name, file, def_line, param = named
    found = defined(files, name, file, def_line)
    if isinstance(found, NoEdit):
        return found
    source, fn = found
    index, has = _position(fn, param, method=False)
    if not has:
        return NoEdit(f"`{name}` has no parameter `{param}`")
    use = _python_use(fn, param)
    if use is not None:
        return NoEdit(
            f"`{name}` uses `{param}` as a Python value ({use}): traced as an array it would fail"
        )
    edits: list[tuple[cst.Call, cst.Call]] = []
    for call in _jit_calls(source, fn):
        new = _edited_call(call, index, param)
        if isinstance(new, str):
            line = source.position(call).start.line
            return NoEdit(f"the jit of `{name}` at line {line}: {new}")
        if new is not None:
            edits.append((call, new))
    if not edits:
        return NoEdit(f"no jit of `{name}` in {Path(source.path).name} makes `{param}` static")
    if len(edits) > 1:
        return NoEdit(f"`{name}` is jitted {len(edits)} times with `{param}` static: which one")
    call, new = edits[0]
    decorator = next((d for d in fn.decorators if d.decorator is call), None)
    if decorator is not None and _is_partial_jit(new) and len(new.args) == 1:
        # partial(jax.jit) with nothing else: the decorator is jax.jit itself
        replacement: cst.Decorator | cst.Call = decorator.with_changes(decorator=new.args[0].value)
        module = source.module.deep_replace(decorator, replacement)
    else:
        module = source.module.deep_replace(call, new)
    assert isinstance(module, cst.Module)
    line = source.position(call).start.line
    return edited(
        source,
        "jit-static",
        line,
        module,
        f"`{param}` of `{name}` no longer static (line {line}): traced as an array",
    )
