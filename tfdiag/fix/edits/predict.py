"""``model.predict(x)`` per batch → ``model.predict_on_batch(x)``: one step on the batch,
without the data adapter, epoch iterator, callbacks and output buffers ``predict`` builds
on every call (both return NumPy arrays)."""

from __future__ import annotations

import libcst as cst

from tfdiag.fix.edits.base import Edit, Files, NoEdit, Target, edited, source_for
from tfdiag.fix.source import Source

#: ``predict``'s keywords that ``predict_on_batch`` does not need: the batch is one batch.
DROPPED = frozenset({"verbose", "batch_size"})


def _predict_calls(source: Source, line: int) -> list[cst.Call]:
    return [
        n
        for n in source.on_line(line, cst.Call)
        if isinstance(n, cst.Call)
        and isinstance(n.func, cst.Attribute)
        and n.func.attr.value == "predict"
    ]


def predict_on_batch(files: Files, target: Target) -> Edit | NoEdit:
    source = source_for(files, target)
    if isinstance(source, NoEdit):
        return source
    calls = _predict_calls(source, target.line)
    if len(calls) != 1:
        return NoEdit(f"line {target.line} holds no single `.predict(...)` call to change")
    call = calls[0]
    positional = [a for a in call.args if a.keyword is None and not a.star]
    kept = [a for a in call.args if a.keyword is not None and a.keyword.value not in DROPPED]
    x = [a for a in kept if a.keyword is not None and a.keyword.value == "x"]
    others = [a for a in kept if a not in x]
    if others or any(a.star for a in call.args):
        names = ", ".join(f"`{a.keyword.value}=`" for a in others if a.keyword is not None)
        return NoEdit(
            f"`predict` is called with {names or 'unpacked arguments'}, which "
            "`predict_on_batch` does not take"
        )
    if len(positional) + len(x) != 1:
        return NoEdit("`predict` is not called on one input here")
    arg = (positional or x)[0].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
    arg = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    assert isinstance(call.func, cst.Attribute)
    new_call = call.with_changes(
        func=call.func.with_changes(attr=cst.Name("predict_on_batch")), args=[arg]
    )
    new = source.module.deep_replace(call, new_call)
    assert isinstance(new, cst.Module)
    receiver = source.code(call.func.value)
    return edited(
        source,
        "predict-on-batch",
        target.line,
        new,
        f"`{receiver}.predict(...)` → `{receiver}.predict_on_batch({source.code(arg.value)})`",
    )
