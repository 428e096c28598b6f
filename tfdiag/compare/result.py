"""The result of :func:`tfdiag.compare`: raw measurements, and every view derived from them.

Like the profile report, the result stores raw records only (each method's block
times, its error or mismatch, its losses); medians, ratios, the seeds' percent,
the recommendation and the do/don't list are computed on demand, so ``explain``
re-renders a saved comparison without TensorFlow. The JSON carries the derived
views too, for other tools; :mod:`tfdiag.compare.result_json` reads the raw records back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfdiag._atomic import write_set
from tfdiag._renderable import Renderable
from tfdiag.compare.measure import (
    TimedBlocks,
    signed_percent,
)
from tfdiag.report import SCHEMA_VERSION, Environment, report_paths
from tfdiag.units import fmt_s

if TYPE_CHECKING:
    from rich.console import RenderableType

#: "Do" also lists safe methods within this factor of the fastest...
DO_WITHIN = 1.25
#: ...up to this many different methods in all.
DO_MOST = 3
#: A twin flavour's method is recommended over the user's own flavour only when faster by this.
SWITCH_FLAVOUR_AT = 1.25
#: "Don't" lists the baseline when the fastest is this many times faster...
DONT_BASELINE_AT = 2.0
#: ...and, in one line, any other method this many times slower than the recommended one.
DONT_SLOWER_AT = 10.0


@dataclass(frozen=True)
class MethodResult(TimedBlocks):
    """One method's raw record. ``times_s``: per-call seconds, one per timed block."""

    name: str
    method: str
    call: str
    kind: str
    flavour: str
    eager: bool
    number: int = 1
    times_s: tuple[float, ...] = ()
    warmup_s: tuple[float, ...] = ()
    error: str | None = None
    mismatch: str | None = None
    max_abs_diff: float | None = None
    loss_before: float | None = None
    loss_after: float | None = None

    @property
    def ok(self) -> bool:
        """Ran, was timed, and its output (or loss) checked out: it may be recommended."""
        return self.error is None and self.mismatch is None and bool(self.times_s)

    @property
    def first_call_s(self) -> float | None:
        return self.warmup_s[0] if self.warmup_s else None

    @property
    def problem(self) -> str | None:
        return self.error or self.mismatch


@dataclass(frozen=True)
class Settings:
    warmup: int = 2
    repeats: int = 10
    min_block_s: float = 0.01
    batch_size: int = 32
    rtol: float = 1e-3
    atol: float = 1e-5
    loss_rise: float = 0.5


@dataclass(frozen=True)
class Recommendation:
    kind: str
    method: MethodResult
    baseline: MethodResult | None

    @property
    def speedup_vs_baseline(self) -> float | None:
        """Baseline median / recommended median (``None`` when the baseline failed)."""
        if self.baseline is None or not self.baseline.ok:
            return None
        base, best = self.baseline.median_s, self.method.median_s
        return base / best if base and best else None


@dataclass(frozen=True)
class CompareResult(Renderable):
    """Every method measured on one model and data. Build it with :func:`tfdiag.compare`."""

    methods: tuple[MethodResult, ...]
    model: str = ""
    flavour: str = "unknown"
    data: tuple[tuple[str, str], ...] = ()
    settings: Settings = field(default_factory=Settings)
    #: (kind, method name) pairs: what each kind's speed-up is measured against.
    baselines: tuple[tuple[str, str], ...] = ()
    environment: Environment = field(default_factory=Environment)
    notes: tuple[str, ...] = ()
    created: str = ""
    schema_version: int = SCHEMA_VERSION

    # -- derived views ---------------------------------------------------------------

    @property
    def kinds(self) -> tuple[str, ...]:
        seen: list[str] = []
        for m in self.methods:
            if m.kind not in seen:
                seen.append(m.kind)
        return tuple(seen)

    def of_kind(self, kind: str) -> tuple[MethodResult, ...]:
        return tuple(m for m in self.methods if m.kind == kind)

    def baseline(self, kind: str) -> MethodResult | None:
        name = dict(self.baselines).get(kind)
        return next((m for m in self.methods if m.name == name), None)

    def fastest(self, kind: str) -> MethodResult | None:
        """The fastest method that may be recommended: never a failed or mismatching one."""
        safe = [m for m in self.of_kind(kind) if m.ok]
        return min(safe, key=lambda m: m.median_s or 0.0) if safe else None

    def ratio_to_fastest(self, m: MethodResult) -> float | None:
        """``None`` for a method that failed or mismatched: its speed is beside the point."""
        best = self.fastest(m.kind)
        if best is None or not m.ok or m.median_s is None or not best.median_s:
            return None
        return m.median_s / best.median_s

    def speedup_vs_baseline(self, m: MethodResult) -> float | None:
        base = self.baseline(m.kind)
        if base is None or not base.ok or not m.ok or not m.median_s or base.median_s is None:
            return None
        return base.median_s / m.median_s

    def percent_vs_baseline(self, m: MethodResult) -> float | None:
        """The seeds' signed percent of ``m`` against the baseline; + when ``m`` is faster."""
        base = self.baseline(m.kind)
        if base is None or not base.ok or not m.ok or not m.median_s or not base.median_s:
            return None
        return signed_percent(m.median_s, base.median_s)

    def preferred(self, m: MethodResult) -> MethodResult:
        """``m``, or the same method in the user's own flavour when that is nearly as fast.

        Switching Keras flavours is a big change: a twin's method is preferred only when
        it beats the user's flavour's own by more than :data:`SWITCH_FLAVOUR_AT`.
        """
        if m.flavour == self.flavour or m.median_s is None:
            return m
        own = next(
            (o for o in self.methods if o.method == m.method and o.flavour == self.flavour), None
        )
        if own is not None and own.ok and own.median_s is not None:
            if own.median_s <= SWITCH_FLAVOUR_AT * m.median_s:
                return own
        return m

    def recommendation(self, kind: str) -> Recommendation | None:
        """The fastest safe method (in the user's flavour unless a twin is clearly faster)."""
        best = self.fastest(kind)
        if best is None:
            return None
        own = [m for m in self.of_kind(kind) if m.ok and m.flavour == self.flavour]
        if best.flavour != self.flavour and own and best.median_s is not None:
            own_best = min(own, key=lambda m: m.median_s or 0.0)
            if (own_best.median_s or 0.0) <= SWITCH_FLAVOUR_AT * best.median_s:
                best = own_best
        return Recommendation(kind, best, self.baseline(kind))

    @property
    def recommendations(self) -> tuple[Recommendation, ...]:
        return tuple(r for k in self.kinds if (r := self.recommendation(k)) is not None)

    @property
    def recommended(self) -> Recommendation | None:
        """The first kind's recommendation (inference when it was measured)."""
        recs = self.recommendations
        return recs[0] if recs else None

    def advice(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(do, dont)``: one line each, in Keras terms, with this run's numbers."""
        do: list[str] = []
        dont: list[str] = []
        for kind in self.kinds:
            d, n = self._advice_for(kind)
            do += d
            dont += n
        return tuple(do), tuple(dont)

    def call_of(self, m: MethodResult) -> str:
        """How the user writes ``m``; a twin flavour's method says which flavour."""
        return m.call if m.flavour == self.flavour else f"{m.call} [{m.flavour}]"

    def _advice_for(self, kind: str) -> tuple[list[str], list[str]]:
        rec, base = self.recommendation(kind), self.baseline(kind)
        do: list[str] = []
        dont: list[str] = []
        if rec is None:
            return do, [f"Don't rely on any {kind} method measured here: none ran cleanly."]
        best = rec.method
        assert best.median_s is not None
        if best is base:
            do.append(f"Keep `{self.call_of(best)}`: no {kind} method measured here is faster.")
        picked: list[MethodResult] = []
        ranked = sorted(self.of_kind(kind), key=lambda m: m.median_s or 0.0)
        for m in [best, *ranked] if best is not base else []:
            m = self.preferred(m)
            if not m.ok or m is base or m.method in {p.method for p in picked}:
                continue
            if (m.median_s or 0.0) <= DO_WITHIN * best.median_s and len(picked) < DO_MOST:
                picked.append(m)
        for m in picked:
            assert m.median_s is not None
            if base is not None and base.ok and base.median_s:
                do.append(
                    f"Do: `{self.call_of(m)}` — {_times(base.median_s / m.median_s)} faster "
                    f"than `{base.call}` here ({fmt_s(m.median_s)} vs {fmt_s(base.median_s)} "
                    "per call)"
                )
            elif m is best:
                do.append(f"Do: `{self.call_of(m)}` — the fastest {kind} method here")
            else:
                do.append(
                    f"Do: `{self.call_of(m)}` — within {_times(m.median_s / best.median_s)} of it"
                )
        slow: list[tuple[float, MethodResult]] = []
        for m in self.of_kind(kind):
            if m.problem is not None:
                dont.append(f"Don't: `{self.call_of(m)}` — {_why(m)}")
            elif m is not best and m.median_s is not None:
                ratio = m.median_s / best.median_s
                if m is base and ratio >= DONT_BASELINE_AT:
                    dont.insert(
                        0,
                        f"Don't: `{m.call}` for this model and data — {_times(ratio)} slower "
                        f"than `{self.call_of(best)}`",
                    )
                elif m is not base and ratio >= DONT_SLOWER_AT:
                    slow.append((ratio, m))
        if slow:
            slow.sort(key=lambda t: t[0])
            lo, hi = _times(slow[0][0]), _times(slow[-1][0])
            span = lo if lo == hi else f"{lo[:-1]}–{hi}"
            calls = ", ".join(f"`{self.call_of(m)}`" for _, m in slow)
            dont.append(f"Don't: {calls} — {span} slower than the recommended method here")
        return do, dont

    # -- output ----------------------------------------------------------------------

    def _render(self) -> RenderableType:
        from tfdiag.render.compare_console import render_compare

        return render_compare(self)

    def to_json(self) -> dict[str, Any]:
        """Raw records plus the derived views (what :func:`result_from_json` reads back)."""
        from tfdiag.compare.result_json import result_to_json

        return result_to_json(self)

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write ``<stem>.tfdiag.json`` (or ``path`` itself when it ends in .json), atomically.

        An existing file is not replaced unless ``overwrite``. Returns the path.
        """
        target = report_paths(path)[0]
        text = json.dumps(self.to_json(), separators=(",", ":"), allow_nan=False)
        write_set({target: text.encode("utf-8")}, overwrite=overwrite)
        return target


def _times(ratio: float) -> str:
    return f"{ratio:.0f}×" if ratio >= 10 else f"{ratio:.1f}×"


def _why(m: MethodResult) -> str:
    if m.error is not None:
        return f"fails here: {m.error}"
    return str(m.mismatch)
