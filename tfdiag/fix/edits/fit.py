"""``fit`` called once per epoch in a loop → one ``fit`` of all the epochs: the data
adapter, epoch iterator and callbacks are set up once instead of on every call, and the
step is traced once.

``for epoch in range(E): model.fit(x, y, epochs=k, ...)`` becomes
``model.fit(x, y, epochs=E * k, ...)``, and ``model.fit(x, y, initial_epoch=epoch,
epochs=epoch + 1)`` becomes ``model.fit(x, y, epochs=E)``. The loop must hold nothing
but that call, and its variable be read nowhere else. Every argument must be the same on
every iteration: a name, an attribute, a literal, an index or slice of them, never a
call (it could return new data each time) nor the loop variable (a batch per iteration:
the data the fits see is not one array here, so one ``fit`` over it is not mechanical).
Refused as well: ``callbacks=`` (``on_train_begin``/``end`` would run once, so
early stopping or a schedule would act differently), ``steps_per_epoch=`` (an iterator
that goes on across the epochs of one ``fit`` starts again at each call),
``validation_freq=`` (it counts the epochs of one ``fit``), and a ``History`` that is
read (one ``fit``'s holds every epoch; the loop's last, one).

Shuffling (``fit``'s default) draws one permutation per epoch in both versions; under a
set seed the orders were the same on Keras 3.15 / TensorFlow 2.21, and the run of both
versions compares what the program prints.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import ScopeProvider

from tfdiag.fix.edits.base import Edit, Files, NoEdit, Target, statement_for
from tfdiag.fix.edits.blocks import line_of
from tfdiag.fix.source import Source, dotted, reads

#: Keywords whose meaning is not the same over one ``fit`` as over one call per epoch.
REFUSED = {
    "callbacks": "`on_train_begin`/`on_train_end` would run once, not once per epoch",
    "steps_per_epoch": "an iterator that goes on across the epochs of one `fit` starts again "
    "at each of the loop's calls",
    "validation_freq": "it counts the epochs of one `fit`",
}
#: Expressions evaluated the same way on every iteration (when their names do not change).
_FIXED = (
    cst.Name,
    cst.Attribute,
    cst.Integer,
    cst.Float,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.Tuple,
    cst.List,
    cst.Dict,
    cst.Subscript,
    cst.SubscriptElement,
    cst.Index,
    cst.Slice,
    cst.Element,
    cst.DictElement,
    cst.UnaryOperation,
    cst.BinaryOperation,
)


def _unfixed(node: cst.CSTNode) -> str | None:
    """What in ``node`` may give another value on another iteration (None: nothing)."""
    found: list[str] = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if isinstance(n, cst.BaseExpression) and not isinstance(n, _FIXED):
                found.append(type(n).__name__)
                return False
            return True

    node.visit(_Find())
    if not found:
        return None
    return "a call" if found[0] == "Call" else f"a {found[0]}"


def _fit_call(stmt: cst.SimpleStatementLine) -> tuple[cst.Call, str | None] | NoEdit:
    """The statement's ``x.fit(...)`` call and the name its result is assigned to."""
    if len(stmt.body) != 1:
        return NoEdit("the line holds more than one statement")
    small = stmt.body[0]
    value: cst.BaseExpression | None = None
    name = None
    if isinstance(small, cst.Expr):
        value = small.value
    elif isinstance(small, cst.Assign) and len(small.targets) == 1:
        value = small.value
        t = small.targets[0].target
        if not isinstance(t, cst.Name):
            return NoEdit("the result of `fit` is assigned to something that is not a name")
        name = t.value
    if (
        not isinstance(value, cst.Call)
        or not isinstance(value.func, cst.Attribute)
        or value.func.attr.value != "fit"
    ):
        return NoEdit("the line is not a `.fit(...)` call (or an assignment of one)")
    return value, name


def _read_outside(source: Source, name: str, inside: cst.CSTNode) -> bool:
    """Is ``name`` read anywhere in the file outside ``inside``?"""
    scopes = source.wrapper.resolve(ScopeProvider)
    for scope in set(scopes.values()):
        if scope is None:
            continue
        for access in scope.accesses[name]:
            if not _within(source, access.node, inside):
                return True
    return False


def _within(source: Source, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
    at: cst.CSTNode | None = node
    while at is not None:
        if at is outer:
            return True
        at = source.parent(at)
    return False


def _is_plus_one(node: cst.BaseExpression, var: str) -> bool:
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Add)
        and isinstance(node.left, cst.Name)
        and node.left.value == var
        and isinstance(node.right, cst.Integer)
        and node.right.evaluated_value == 1
    )


def _epochs(loop_n: cst.BaseExpression, k: int | None, code: str) -> cst.BaseExpression:
    """``E * k`` epochs (``k`` None: the loop counts epochs itself, ``E``)."""
    if k is None or k == 1:
        return loop_n
    if isinstance(loop_n, cst.Integer):
        return cst.Integer(str(loop_n.evaluated_value * k))
    return cst.parse_expression(
        f"({code}) * {k}" if not isinstance(loop_n, cst.Name) else f"{code} * {k}"
    )


def _new_args(
    call: cst.Call, var: str, loop_n: cst.BaseExpression, n_code: str
) -> list[cst.Arg] | NoEdit:
    """The call's arguments for one ``fit`` of every epoch."""
    if any(a.star for a in call.args):
        return NoEdit("`fit` is called with unpacked arguments")
    if sum(1 for a in call.args if a.keyword is None) > 2:
        return NoEdit("`fit` is given more than `x, y` by position")
    by_name = {a.keyword.value: a for a in call.args if a.keyword is not None}
    for key, why in REFUSED.items():
        if key in by_name:
            return NoEdit(f"`fit` is given `{key}=`: {why}")
    epochs, initial = by_name.get("epochs"), by_name.get("initial_epoch")
    k: int | None
    if initial is not None:
        if not (isinstance(initial.value, cst.Name) and initial.value.value == var):
            return NoEdit("`initial_epoch=` is not the loop's variable")
        if epochs is None or not _is_plus_one(epochs.value, var):
            return NoEdit(
                f"`initial_epoch={var}` without `epochs={var} + 1`: those calls do not train "
                "one epoch each"
            )
        k = None
    elif epochs is None:
        k = 1
    elif isinstance(epochs.value, cst.Integer) and epochs.value.evaluated_value >= 1:
        k = int(epochs.value.evaluated_value)
    else:
        return NoEdit("`epochs=` is not a number written in the call")
    for a in call.args:
        if a is epochs or a is initial:
            continue
        label = f"`{a.keyword.value}=`" if a.keyword is not None else "a positional argument"
        if var in reads(a.value):
            return NoEdit(
                f"{label} reads `{var}`: the data or settings change every iteration (a batch "
                "per call), and one `fit` over them is not mechanical"
            )
        what = _unfixed(a.value)
        if what is not None:
            return NoEdit(f"{label} is {what}, which could give another value each iteration")
    new_epochs = _epochs(loop_n, k, n_code)
    args: list[cst.Arg] = []
    for a in call.args:
        if a is initial:
            continue
        args.append(a.with_changes(value=new_epochs) if a is epochs else a)
    if epochs is None:
        last = args[-1] if args else None
        new = cst.Arg(
            new_epochs,
            keyword=cst.Name("epochs"),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )
        if last is not None:
            trailing = last.comma
            args[-1] = last.with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            )
            new = new.with_changes(comma=trailing)
        args.append(new)
    elif initial is not None and args and isinstance(call.args[-1].comma, cst.MaybeSentinel):
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return args


def _only(body: Sequence[cst.BaseStatement], stmt: cst.SimpleStatementLine) -> bool:
    return len(body) == 1 and body[0] is stmt


class _Replace(cst.CSTTransformer):
    def __init__(self, loop: cst.For, by: cst.SimpleStatementLine) -> None:
        self.loop, self.by = loop, by

    def leave_For(self, original_node: cst.For, updated_node: cst.For) -> cst.BaseStatement:
        return self.by if original_node is self.loop else updated_node


def one_fit(files: Files, target: Target) -> Edit | NoEdit:
    found_stmt = statement_for(files, target)
    if isinstance(found_stmt, NoEdit):
        return found_stmt
    source, stmt = found_stmt
    found = _fit_call(stmt)
    if isinstance(found, NoEdit):
        return found
    call, result = found
    block = source.parent(stmt)
    loop = source.parent(block) if block is not None else None
    if not isinstance(loop, cst.For) or not isinstance(block, cst.IndentedBlock):
        return NoEdit("the `fit` call is not directly in a `for` loop's body")
    at = source.position(loop).start.line
    if not _only(block.body, stmt):
        return NoEdit(
            f"the loop at line {at} does more than call `fit` (what it does between the calls "
            "would run once)"
        )
    if loop.orelse is not None or loop.asynchronous is not None:
        return NoEdit(f"the loop at line {at} has an `else` or is `async`")
    it = loop.iter
    if not (
        isinstance(it, cst.Call)
        and dotted(it.func) == "range"
        and len(it.args) == 1
        and it.args[0].keyword is None
        and not it.args[0].star
    ):
        return NoEdit(f"the loop at line {at} is not `for … in range(n)`")
    if not isinstance(loop.target, cst.Name):
        return NoEdit(f"the loop at line {at} unpacks its target")
    var = loop.target.value
    if var != "_" and _read_outside(source, var, loop):
        return NoEdit(f"`{var}` is read after the loop, where it would not be set")
    if result is not None and _read_outside(source, result, stmt):
        return NoEdit(
            f"`{result}` (the `History`) is read: one `fit`'s holds every epoch, the loop's "
            "last only one"
        )
    n = it.args[0].value
    args = _new_args(call, var, n, source.code(n))
    if isinstance(args, NoEdit):
        return args
    new_call = call.with_changes(args=args)
    comments = [e for e in stmt.leading_lines if e.comment]
    new_stmt = stmt.deep_replace(call, new_call)
    assert isinstance(new_stmt, cst.SimpleStatementLine)
    new_stmt = new_stmt.with_changes(leading_lines=[*loop.leading_lines, *comments])
    new = source.module.visit(_Replace(loop, new_stmt))
    new_line = line_of(new, new_stmt.with_changes(leading_lines=()))
    receiver = source.code(call.func.value) if isinstance(call.func, cst.Attribute) else "model"
    return Edit(
        "one-fit",
        source.path,
        target.line,
        new_line,
        source.text,
        new.code,
        f"the loop at line {at}, one `{receiver}.fit` per iteration → one "
        f"`{receiver}.fit(..., epochs={_epochs_of(new_call)})`",
        source.encoding,
        same_call=False,
    )


def _epochs_of(call: cst.Call) -> str:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "epochs":
            return cst.Module([]).code_for_node(a.value)
    return "?"
