"""A construction or setup call run on every iteration → moved out, before the loop or
the function that runs it, when nothing it reads changes there.

The statement walks out one block at a time: out of a ``for``/``while`` whose body (and
target) binds none of the names it reads and changes none of their objects in place, then
out of a module-level function whose parameters and locals it does not read, when every
name it reads is bound at module level above the ``def``. It stops at the first block it
cannot leave; a statement under an ``if``, ``try`` or ``with`` is not moved at all (it
would run where it did not). Whether the loop body depends on getting a *new* object
each time (a fresh layer's new weights) is not visible in the text: the run of both
versions decides that (their outputs must agree).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import libcst as cst

from tfdiag.fix.edits.base import Edit, Files, NoEdit, Target, statement_for
from tfdiag.fix.edits.blocks import line_of, move
from tfdiag.fix.source import LOOPS, Source, binds, mutated, reads, target_names

_BUILTINS = frozenset(dir(builtins))


def _others(body: Sequence[cst.CSTNode], stmt: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements of ``body`` other than ``stmt``, nested ones kept whole."""
    return [s for s in body if s is not stmt]


def _holds(body: Sequence[cst.CSTNode], stmt: cst.CSTNode, source: Source) -> bool:
    """Is ``stmt`` in ``body`` or nested in one of its statements' bodies?"""
    at: cst.CSTNode | None = stmt
    while at is not None:
        if any(at is s for s in body):
            return True
        at = source.parent(at)
    return False


def _what(stmt: cst.SimpleStatementLine) -> tuple[cst.BaseExpression, set[str]] | NoEdit:
    """The call the statement makes and the names it assigns."""
    if len(stmt.body) != 1:
        return NoEdit("the line holds more than one statement")
    small = stmt.body[0]
    if isinstance(small, cst.Assign):
        names = [t.target for t in small.targets]
        if not all(isinstance(n, cst.Name) for n in names):
            return NoEdit("it assigns to an attribute or an item, not a name")
        return small.value, {n.value for n in names if isinstance(n, cst.Name)}
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return small.value, set()
    return NoEdit("the line is not a call or an assignment of one")


def _names(found: set[str]) -> str:
    return ", ".join(f"`{n}`" for n in sorted(found))


def hoist(files: Files, target: Target) -> Edit | NoEdit:
    found_stmt = statement_for(files, target)
    if isinstance(found_stmt, NoEdit):
        return found_stmt
    source, stmt = found_stmt
    what = _what(stmt)
    if isinstance(what, NoEdit):
        return what
    value, assigned = what
    needs = reads(value)
    anchor: cst.CSTNode | None = None
    why = ""
    for block in source.ancestors(stmt):
        if isinstance(block, cst.Module):
            break
        start = source.position(block).start.line
        if isinstance(block, LOOPS):
            body = block.body.body
            if not _holds(body, stmt, source):
                why = f"it is in the `else` of the loop at line {start}"
                break
            rest = _others(body, stmt)
            bound = binds(rest) | (
                target_names(block.target) if isinstance(block, cst.For) else set()
            )
            if needs & bound:
                why = f"it reads {_names(needs & bound)}, which the loop at line {start} changes"
                break
            if needs & mutated(rest):
                why = (
                    f"the loop at line {start} changes {_names(needs & mutated(rest))} in place, "
                    "which it reads"
                )
                break
            if assigned & bound:
                why = f"the loop at line {start} assigns {_names(assigned & bound)} too"
                break
            anchor = block
            continue
        if isinstance(block, cst.FunctionDef):
            why = _leaves_function(source, block, stmt, needs, assigned)
            if why:
                break
            anchor = block
            continue
        kind = type(block).__name__.lower().replace("def", "")
        why = f"it runs under the `{kind}` at line {start}, and moved out it would run always"
        break
    if anchor is None:
        return NoEdit(f"`{source.code(value).strip()}` cannot move: {why or 'it is at the top'}")
    new = move(source.module, stmt, anchor)
    new_line = line_of(new, stmt.with_changes(leading_lines=()))
    where = "the loop" if isinstance(anchor, LOOPS) else f"`{anchor.name.value}`"  # type: ignore[attr-defined]
    at = source.position(anchor).start.line
    return Edit(
        "hoist",
        source.path,
        target.line,
        new_line,
        source.text,
        new.code,
        f"moved line {target.line} before {where} (line {at}): built once",
        source.encoding,
    )


def _leaves_function(
    source: Source,
    fn: cst.FunctionDef,
    stmt: cst.CSTNode,
    needs: set[str],
    assigned: set[str],
) -> str:
    """Why ``stmt`` cannot leave ``fn`` for the module ("" when it can)."""
    name = fn.name.value
    if not isinstance(source.parent(fn), cst.Module):
        return f"`{name}` is not a module-level function"
    if not isinstance(fn.body, cst.IndentedBlock) or not _holds(fn.body.body, stmt, source):
        return f"it is not in `{name}`'s body"
    params = {p.name.value for p in (*fn.params.params, *fn.params.kwonly_params)}
    params |= {p.name.value for p in fn.params.posonly_params}
    for star in (fn.params.star_arg, fn.params.star_kwarg):
        if isinstance(star, cst.Param):
            params.add(star.name.value)
    if needs & params:
        return f"it reads {_names(needs & params)}, a parameter of `{name}`"
    local = binds(_others(fn.body.body, stmt))
    if needs & local:
        return f"it reads {_names(needs & local)}, which `{name}` assigns"
    if assigned & local:
        return f"`{name}` assigns {_names(assigned & local)} elsewhere too"
    if any(
        isinstance(n, (cst.Global, cst.Nonlocal)) for n in source.nodes((cst.Global, cst.Nonlocal))
    ):
        return "the file declares `global`/`nonlocal` names"
    body = source.module.body
    above = [s for s in body[: next(i for i, s in enumerate(body) if s is fn)]]
    missing = needs - binds(above) - _BUILTINS
    if missing:
        return f"{_names(missing)} is not defined above `{name}` at module level"
    if assigned & binds(body):
        return f"the module assigns {_names(assigned & binds(body))} already"
    return ""
