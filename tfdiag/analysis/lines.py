"""Your lines: the user's own source lines that call into the frameworks during the steady
state, each with the API it calls, how often it ran and the share of time below it.

The line sampler (:mod:`tfdiag.capture.lines`) says which line of a user function called
which framework function; cProfile's caller edge from that function to its callee says
how often and for how long, exactly. A line is exact when it is the only line of its
function sampled on that edge; when several lines share one edge (two TensorFlow calls
through the same dispatch wrapper) the edge's calls and time are split between them by
their samples, and the line says it is an estimate. A line sampled with no edge (its callee
is a C function cProfile keys elsewhere, or the user's own Python) takes its sampled share.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tfdiag.records.catalog.apis import ApiMatch, api_of
from tfdiag.records.lines import FunctionKey, LinePlace, LinesRecord
from tfdiag.records.paths import normalize_path
from tfdiag.records.stats import CallerEdge, builtin_name

if TYPE_CHECKING:
    from tfdiag.records.report import RunRecord
    from tfdiag.records.stats import ProfileStats

#: Lines below this share of steady state are left out of the view.
MIN_SHARE = 0.01


@dataclass(frozen=True)
class UserLine:
    """One of the user's lines and what it calls.

    Attributes:
        file, line, code: the line and its text (as captured).
        function: the qualified name of the user's function that holds it.
        api: the API it calls, as the user writes it (``keras.layers.StringLookup``), or
            "" for the user's own Python.
        nature: the API's nature (:data:`~tfdiag.records.catalog.apis.NATURES`), "" when
            not known.
        catalogued: whether an API row names it (else its name gave the nature).
        callee: the profile row the line calls (the frame below it), None when unknown.
        api_index: the profile row of the API itself (through wrappers), None when unknown.
        calls_per_iteration: how often the line's call ran per steady iteration (None: not
            known).
        share: the share of steady-state time below the line (cumulative).
        exact: True when both come from one caller edge of the profile alone.
        entry: True for the line that made the profiled call itself.
        function_line: the first line of the user's function (its ``def``).
        function_calls: how often that function ran per steady iteration (None: unknown).
        repeated: a whole script's line (``tfdiag run``): whether it ran inside a loop (None:
            not known, as for a profiled call's lines, which have counts instead).
    """

    file: str
    line: int
    code: str
    function: str
    api: str
    nature: str
    catalogued: bool
    callee: int | None
    api_index: int | None
    calls_per_iteration: float | None
    share: float
    exact: bool
    entry: bool = False
    function_line: int = 0
    function_calls: float | None = None
    repeated: bool | None = None

    @property
    def location(self) -> str:
        base = self.file.replace("\\", "/").rsplit("/", 1)[-1]
        return f"{base}:{self.line}"

    def to_json(self) -> dict[str, object]:
        """The derived view's row (the report JSON's ``your_lines``)."""
        return {
            "file": self.file,
            "line": self.line,
            "code": self.code,
            "function": self.function,
            "api": self.api,
            "nature": self.nature,
            "calls_per_iteration": self.calls_per_iteration,
            "share": self.share,
            "exact": self.exact,
            "entry": self.entry,
        }

    @property
    def build_type(self) -> bool:
        """Is the API's work build cost (a constructor, a setup call)?"""
        return self.nature in ("construct", "setup")


def short_qualname(qualname: str) -> str:
    """``make_callback.<locals>.ValAUC.on_batch_end`` → ``ValAUC.on_batch_end``: the name as
    the user reads it in their file."""
    return qualname.rsplit("<locals>.", 1)[-1]


def _api(key: FunctionKey | None) -> ApiMatch | None:
    return None if key is None else api_of(key[0], key[2])


def _name(key: FunctionKey | None, found: ApiMatch | None) -> str:
    if found is not None:
        return found.name
    if key is None:
        return ""
    base = normalize_path(key[0]).split("/", 1)[0]
    return f"{base}: {key[2]}" if base and base != "~" else key[2]


def user_lines(
    record: RunRecord, steady: ProfileStats, iterations: int, steady_s: float
) -> tuple[UserLine, ...]:
    """The view, costliest first, from the record's lines and the steady-state table
    (``steady_s`` long, ``iterations`` calls); the line that made the call first of all,
    when the call profiled is a framework's."""
    out: list[UserLine] = []
    entry = _entry_line(record)
    if entry is not None:
        out.append(entry)
    lines = record.lines
    if lines is None or not lines.samples or steady_s <= 0:
        return tuple(out)
    found = _sampled(lines, steady, max(iterations, 1), steady_s)
    if entry is not None:  # the call's own line, sampled as it ran: said once, as the entry
        found = [u for u in found if (u.file, u.line) != (entry.file, entry.line)]
    out.extend(sorted(found, key=lambda u: u.share, reverse=True))
    return tuple(out)


def _entry_line(record: RunRecord) -> UserLine | None:
    call = record.call
    if not call.line or not call.file:
        return None
    return UserLine(
        file=call.file,
        line=call.line,
        code=call.code,
        function="",
        api=call.label,
        nature="",
        catalogued=False,
        callee=None,
        api_index=None,
        calls_per_iteration=1.0,
        share=1.0,
        exact=True,
        entry=True,
    )


def _builtin_callee(steady: ProfileStats, user: int) -> tuple[int, CallerEdge] | None:
    """The C function a line of the user's own code spends its time in (``time.sleep``,
    ``np.dot``): the user function's heaviest builtin callee, when it is at least half of
    the function's time outside the frameworks (its own and its C calls'), as cProfile
    saw it (the sampler sees no C frame)."""
    best: tuple[int, CallerEdge] | None = None
    total = steady.functions[user].self_s
    for c, fn in enumerate(steady.functions):
        if fn.file != "~":
            continue
        for e in fn.callers:
            if e.caller == user:
                total += e.cum_s
                if best is None or e.cum_s > best[1].cum_s:
                    best = (c, e)
    return best if best is not None and best[1].cum_s >= 0.5 * total else None


#: Builtins that only drive an iteration (``sum(1 for _ in ds)``, ``list(ds)``): the work
#: of a line calling one is what the iteration runs, not the builtin.
_CONSUMERS = frozenset(
    "sum len list tuple set dict sorted max min any all enumerate zip map filter".split()
)


def _consumes(label: str) -> bool:
    return builtin_name(label).strip("{}").rsplit(".", 1)[-1] in _CONSUMERS


def _inline(function: str) -> bool:
    """A generator expression's or comprehension's frame (``<genexpr>``, ``<listcomp>``)."""
    return function.rsplit(".", 1)[-1].startswith("<") and function != "<module>"


def _builtin_api(label: str) -> ApiMatch:
    """A C function's API: ``<built-in method time.sleep>`` → ``time.sleep``."""
    m = re.fullmatch(r"<(?:built-in method|method) '?([\w.]+)'?(?: of '([\w.]+)' objects)?>", label)
    name = builtin_name(label).strip("{}") if m is None or m.group(2) else m.group(1)
    found = api_of("~", name)
    return found if found is not None else ApiMatch(name, "", catalogued=False)


@dataclass
class _Row:
    """One line being summed up: its callees' shares add up (siblings called from one
    line); the heaviest callee names the line's API."""

    function: str
    function_line: int = 0
    function_calls: float | None = None
    top: float = -1.0
    share: float = 0.0
    exact: bool = True
    callee: int | None = None
    api_index: int | None = None
    api: str = ""
    nature: str = ""
    catalogued: bool = False
    calls: float | None = None


def _sampled(
    lines: LinesRecord, steady: ProfileStats, iterations: int, steady_s: float
) -> list[UserLine]:
    fns = steady.functions
    index = {f.key: i for i, f in enumerate(fns)}
    # samples per edge (user function, callee), over the lines that share it
    per_edge: dict[tuple[FunctionKey, FunctionKey | None], int] = defaultdict(int)
    for p in lines.places:
        per_edge[(p.function, p.callee)] += p.samples
    # user functions with one line sampled as its own (its C calls are that line's)
    lone_leaf: dict[FunctionKey, int] = defaultdict(int)
    for p in lines.places:
        if p.callee is None:
            lone_leaf[p.function] += 1
    rows: dict[tuple[str, int], _Row] = {}
    for p in lines.places:
        u = index.get(p.function)
        c = index.get(p.callee) if p.callee is not None else None
        edge = None
        if u is not None and c is not None:
            edge = next((e for e in fns[c].callers if e.caller == u), None)
        part = p.samples / max(per_edge[(p.function, p.callee)], 1)
        builtin = None
        if p.callee is None and u is not None and lone_leaf.get(p.function) == 1:
            builtin = _builtin_callee(steady, u)
            if builtin is not None and _consumes(fns[builtin[0]].name):
                builtin = None  # `sum(1 for _ in ds)`: the line is what its iteration runs
            if builtin is not None:
                c, edge = builtin
        if edge is not None:
            share = edge.cum_s * part / steady_s
            calls: float | None = edge.calls * part / iterations
            exact = part >= 1.0
        else:
            share, calls, exact = p.samples / lines.samples, None, False
        row = rows.get((p.file, p.line))
        own = fns[u].primitive_calls / iterations if u is not None else None
        name = short_qualname(p.function[2])
        if row is None:
            row = rows[(p.file, p.line)] = _Row(name, p.function[1], own)
        elif _inline(row.function) and not _inline(name):
            # a generator expression's frame shares its line: the function is the one
            # around it (where the fix moves code out of)
            row.function, row.function_line, row.function_calls = name, p.function[1], own
        row.share += share
        row.exact = row.exact and exact
        if share > row.top:
            found = (
                _builtin_api(fns[c].name) if builtin is not None and c is not None else _api(p.api)
            )
            row.top, row.callee, row.calls = share, c, calls
            row.api_index = index.get(p.api) if p.api is not None else c if builtin else None
            row.api = found.name if builtin and found else _name(p.api, found)
            row.nature = found.nature if found is not None else ""
            row.catalogued = found is not None and found.catalogued
    return [
        UserLine(
            file=file,
            line=line,
            code=lines.code(file, line),
            function=r.function,
            api=r.api,
            nature=r.nature,
            catalogued=r.catalogued,
            callee=r.callee,
            api_index=r.api_index,
            calls_per_iteration=r.calls,
            share=min(r.share, 1.0),
            exact=r.exact,
            function_line=r.function_line,
            function_calls=r.function_calls,
        )
        for (file, line), r in rows.items()
        if r.share >= MIN_SHARE
    ]


def script_lines(lines: LinesRecord | None) -> tuple[UserLine, ...]:
    """A whole script's lines (``tfdiag run``), costliest first: each line's share is its
    share of the samples (of the script's wall time); no call counts (no cProfile), but
    ``repeated`` says whether it ran inside a loop in most of its samples."""
    if lines is None or not lines.samples:
        return ()
    by_line: dict[tuple[str, int], list[LinePlace]] = defaultdict(list)
    for p in lines.places:  # one line may call several APIs: the heaviest names it
        by_line[(p.file, p.line)].append(p)
    out = []
    for (file, line), places in by_line.items():
        samples = sum(p.samples for p in places)
        share = min(samples / lines.samples, 1.0)
        if share < MIN_SHARE:
            continue
        top = max(places, key=lambda p: p.samples)
        found = _api(top.api)
        out.append(
            UserLine(
                file=file,
                line=line,
                code=lines.code(file, line),
                function=short_qualname(top.function[2]),
                api=_name(top.api, found),
                nature=found.nature if found is not None else "",
                catalogued=found is not None and found.catalogued,
                callee=None,
                api_index=None,
                calls_per_iteration=None,
                share=share,
                exact=False,
                function_line=top.function[1],
                repeated=2 * sum(p.repeated for p in places) >= samples,
            )
        )
    return tuple(sorted(out, key=lambda u: u.share, reverse=True))
