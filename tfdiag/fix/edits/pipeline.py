"""A ``tf.data`` chain that keeps the step waiting → ``num_parallel_calls=tf.data.AUTOTUNE``
on each ``map`` that lacks it, and ``.prefetch(tf.data.AUTOTUNE)`` last when the chain has
none: the elements are then made on several threads, and the next batch while the step
runs. ``map`` stays deterministic (its default), so the elements come in the same order.

The finding names the line that reads the dataset (``model.fit(ds)``, ``for x in ds:``,
``iter(ds)``) or the chain itself. The chain is the assignments to that name before the
line, in one block, back to the one that builds it from ``tf.data`` (``ds = ds.map(f)``
continues ``ds = tf.data.Dataset.from_tensor_slices(x)``). ``.cache()`` is not added: that
the work is the same every epoch (no random augmentation before it) is not in the code.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from tfdiag.fix.edits.base import Edit, Files, NoEdit, Target, source_for
from tfdiag.fix.source import Source, dotted

#: Methods that end a chain with something that is not a dataset.
NOT_DATASETS = frozenset(
    {"as_numpy_iterator", "get_single_element", "cardinality", "reduce", "numpy", "save"}
)
#: Keras calls that read a dataset passed as their first argument.
READERS = frozenset({"fit", "predict", "evaluate"})


def _chain(expr: cst.BaseExpression) -> tuple[list[cst.Call], cst.BaseExpression]:
    """``a.f(..).g(..)``'s calls, outermost first, and its root (``a``)."""
    calls = []
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        calls.append(expr)
        expr = expr.func.value
    return calls, expr


def _method(call: cst.Call) -> str:
    assert isinstance(call.func, cst.Attribute)
    return call.func.attr.value


def _assigned(stmt: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """``name = <expr>`` as (name, expr), None for any other statement."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    a = stmt.body[0]
    if isinstance(a, cst.Assign) and len(a.targets) == 1:
        target = a.targets[0].target
        if isinstance(target, cst.Name):
            return target.value, a.value
    return None


def _read_name(source: Source, line: int) -> str | None:
    """The dataset the statement at ``line`` reads: ``fit(ds)``, ``for x in ds``, ``iter(ds)``."""
    for node in source.on_line(line, cst.For):
        assert isinstance(node, cst.For)
        if isinstance(node.iter, cst.Name):
            return node.iter.value
    for node in source.on_line(line, cst.Call):
        assert isinstance(node, cst.Call)
        name = dotted(node.func).rsplit(".", 1)[-1]
        if (name in READERS or name == "iter") and node.args and node.args[0].keyword is None:
            if isinstance(node.args[0].value, cst.Name):
                return node.args[0].value.value
    stmt = source.statement_at(line)
    found = _assigned(stmt) if stmt is not None else None
    return found[0] if found is not None else None


def _statements(source: Source, name: str, line: int) -> list[cst.SimpleStatementLine] | str:
    """The assignments that build ``name``, first to last, or why they are not one chain."""
    before = [
        n
        for n in source.nodes(cst.SimpleStatementLine)
        if source.position(n).start.line <= line and (a := _assigned(n)) and a[0] == name
    ]
    if not before:
        return f"`{name}` is not assigned in {Path(source.path).name} before line {line}"
    out: list[cst.SimpleStatementLine] = []
    for stmt in reversed(before):
        assert isinstance(stmt, cst.SimpleStatementLine)
        out.insert(0, stmt)
        assigned = _assigned(stmt)
        assert assigned is not None
        _, root = _chain(assigned[1])
        if not (isinstance(root, cst.Name) and root.value == name):
            break
    else:
        return f"`{name}` is only ever built from itself before line {line}"
    first = _assigned(out[0])
    assert first is not None
    calls, root = _chain(first[1])
    maker = root if isinstance(root, cst.Call) else (calls[-1] if calls else root)
    made_by = dotted(maker.func if isinstance(maker, cst.Call) else maker)
    if "data" not in made_by.split(".") and "dataset" not in made_by.lower():
        return f"`{name}` is made by `{source.code(first[1])}`, not a tf.data chain built here"
    if len({id(source.parent(s)) for s in out}) != 1:
        return f"the assignments that build `{name}` are in different blocks"
    return out


def _with_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """``call`` with ``arg`` last, in the call's own layout (a trailing comma kept last)."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[arg])
    last = args[-1]
    trailing = not isinstance(last.comma, cst.MaybeSentinel)
    sep = call.whitespace_before_args if trailing else cst.SimpleWhitespace(" ")
    if isinstance(sep, cst.SimpleWhitespace) and not sep.value:
        sep = cst.SimpleWhitespace(" ")
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=sep))
    return call.with_changes(args=[*args, arg.with_changes(comma=last.comma)])


def _autotune(tf: str) -> cst.BaseExpression:
    return cst.parse_expression(f"{tf}.data.AUTOTUNE")


class _Tune(cst.CSTTransformer):
    """``num_parallel_calls`` on the chain's ``map`` calls; ``prefetch`` on ``last``."""

    def __init__(self, maps: set[cst.Call], last: cst.BaseExpression | None, tf: str) -> None:
        self.maps, self.last, self.tf = maps, last, tf

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        out: cst.BaseExpression = updated_node
        if original_node in self.maps:
            kw = cst.Arg(
                _autotune(self.tf),
                keyword=cst.Name("num_parallel_calls"),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
            out = _with_arg(updated_node, kw)
        if original_node is self.last:
            out = _prefetched(out, self.tf)
        return out


def _prefetched(expr: cst.BaseExpression, tf: str) -> cst.Call:
    """``expr.prefetch(tf.data.AUTOTUNE)``, inside ``expr``'s parentheses, its dot laid
    out as the chain's last one (``\\n    .prefetch(...)`` in a chain of one per line)."""
    dot = (
        expr.func.dot
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
        else cst.Dot()
    )
    inner = expr.with_changes(lpar=[], rpar=[])
    return cst.Call(
        cst.Attribute(inner, cst.Name("prefetch"), dot=dot),
        [cst.Arg(_autotune(tf))],
        lpar=expr.lpar,
        rpar=expr.rpar,
    )


def tune_pipeline(files: Files, target: Target) -> Edit | NoEdit:
    source = source_for(files, target)
    if isinstance(source, NoEdit):
        return source
    name = _read_name(source, target.line)
    if name is None:
        return NoEdit(f"line {target.line} reads no dataset by name (`fit(ds)`, `for x in ds`)")
    stmts = _statements(source, name, target.line)
    if isinstance(stmts, str):
        return NoEdit(stmts)
    tf = source.tensorflow_alias()
    if tf is None:
        return NoEdit(f"{Path(source.path).name} does not import tensorflow")
    chains = []
    for s in stmts:
        assigned = _assigned(s)
        assert assigned is not None
        chains.append(_chain(assigned[1])[0])
    calls = [c for chain in chains for c in chain]
    last_value = _assigned(stmts[-1])[1]  # type: ignore[index]
    if not chains[-1]:
        return NoEdit(f"`{name}` at line {source.position(stmts[-1]).start.line} is no chain")
    if _method(chains[-1][0]) in NOT_DATASETS:
        return NoEdit(f"`{name}` ends in `.{_method(chains[-1][0])}()`, not a dataset")
    maps = {
        c
        for c in calls
        if _method(c) == "map"
        and not any(
            a.keyword is not None and a.keyword.value == "num_parallel_calls" for a in c.args
        )
    }
    has_prefetch = any(_method(c) == "prefetch" for c in calls)
    if not maps and has_prefetch:
        return NoEdit(f"`{name}`'s `map` calls are parallel and it prefetches already")
    tuned = source.module.visit(_Tune(maps, None if has_prefetch else last_value, tf))
    added = len(tuned.code.splitlines()) - len(source.text.splitlines())
    what = [f"`num_parallel_calls={tf}.data.AUTOTUNE` on {len(maps)} `map`"] if maps else []
    if not has_prefetch:
        what.append(f"`.prefetch({tf}.data.AUTOTUNE)` last")
    at = source.position(stmts[0]).start.line
    line = target.line
    return Edit(
        "tune-pipeline",
        source.path,
        line,
        line + added if line > source.position(stmts[-1]).end.line else line,
        source.text,
        tuned.code,
        f"`{name}` (line {at}): " + " and ".join(what),
        source.encoding,
    )
