"""What :func:`tfdiag.compare` measured: raw records, and the views derived from them.

Like the profile record, it stores raw records only (each method's block times,
its error or mismatch, its losses); medians, ratios, the seeds' percent, the
recommendation and the do/don't list are computed on demand, so ``explain``
re-renders a saved comparison without TensorFlow. Its JSON
(:mod:`tfdiag.render.compare_json`) carries the derived views too, for other
tools; :func:`compare_from_json` reads the raw records back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from tfdiag.records.errors import InputError
from tfdiag.records.fields import MAX_SECONDS, Obj
from tfdiag.records.numbers import TimedBlocks, reliably_faster, signed_percent
from tfdiag.records.report import SCHEMA_VERSION, Environment
from tfdiag.records.units import fmt_s, fmt_times

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


#: Methods whose callable is built once and then called: name → (build line, call).
BUILT_ONCE: dict[str, tuple[str, str]] = {
    "tf.function": ("predict = tf.function(lambda x: model(x, training=False))", "predict(x)"),
    "tf.function(jit)": (
        "predict = tf.function(lambda x: model(x, training=False), jit_compile=True)",
        "predict(x)",
    ),
    "tf.function step": ("step = tf.function(train_step)", "step(xb, yb)"),
}


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
class CompareRecord:
    """Every method measured on one model and data (:class:`tfdiag.measure.CompareResult` is
    this record with its output formats)."""

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

    kind: ClassVar[str] = "compare"

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
            if not _clearly_faster(m, own):
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
            if not _clearly_faster(best, own_best):
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

    def advice_of(self, m: MethodResult) -> str:
        """``m`` as a "Do:" line shows it: for a method whose callable must be built once
        (``tf.function``: building it per call retraces every time), the line that builds it
        and the call to repeat, not a one-liner that retraces when pasted into a loop."""
        once = BUILT_ONCE.get(m.method)
        if once is None:
            return f"`{self.call_of(m)}`"
        flavour = "" if m.flavour == self.flavour else f" [{m.flavour}]"
        return f"`{once[0]}` once, then `{once[1]}` per call{flavour}"

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
        elif base is not None and base.ok and not reliably_faster(best.times_s, base.times_s):
            do.append(
                f"Keep `{self.call_of(base)}`: no reliable difference — no {kind} method measured "
                "here is faster beyond the noise (every interquartile interval overlaps "
                f"`{base.call}`'s)"
            )
            best = base
        best_s = best.median_s
        assert best_s is not None
        picked: list[MethodResult] = []
        ranked = sorted(self.of_kind(kind), key=lambda m: m.median_s or 0.0)
        for m in [best, *ranked] if best is not base else []:
            m = self.preferred(m)
            if not m.ok or m is base or m.method in {p.method for p in picked}:
                continue
            if base is not None and base.ok and not reliably_faster(m.times_s, base.times_s):
                continue  # within the baseline's noise: nothing to recommend
            if (m.median_s or 0.0) <= DO_WITHIN * best_s and len(picked) < DO_MOST:
                picked.append(m)
        for m in picked:
            assert m.median_s is not None
            if base is not None and base.ok and base.median_s:
                do.append(
                    f"Do: {self.advice_of(m)} — {fmt_times(base.median_s / m.median_s)} faster "
                    f"than `{base.call}` here ({fmt_s(m.median_s)} vs {fmt_s(base.median_s)} "
                    "per call)"
                )
            elif m is best:
                do.append(f"Do: {self.advice_of(m)} — the fastest {kind} method here")
            else:
                within = fmt_times(m.median_s / best_s)
                do.append(f"Do: {self.advice_of(m)} — within {within} of it")
        slow: list[tuple[float, MethodResult]] = []
        for m in self.of_kind(kind):
            if m.problem is not None:
                dont.append(f"Don't: `{self.call_of(m)}` — {_why(m)}")
            elif m is not best and m.median_s is not None:
                ratio = m.median_s / best_s
                if m is base and ratio >= DONT_BASELINE_AT:
                    dont.insert(
                        0,
                        f"Don't: `{m.call}` for this model and data — {fmt_times(ratio)} slower "
                        f"than `{self.call_of(best)}`",
                    )
                elif m is not base and ratio >= DONT_SLOWER_AT:
                    slow.append((ratio, m))
        if slow:
            slow.sort(key=lambda t: t[0])
            lo, hi = fmt_times(slow[0][0]), fmt_times(slow[-1][0])
            span = lo if lo == hi else f"{lo[:-1]}–{hi}"
            calls = ", ".join(f"`{self.call_of(m)}`" for _, m in slow)
            dont.append(f"Don't: {calls} — {span} slower than the recommended method here")
        return do, dont


def _clearly_faster(twin: MethodResult, own: MethodResult) -> bool:
    """A twin flavour's method beats the user's own: by :data:`SWITCH_FLAVOUR_AT` and beyond
    both methods' noise (switching Keras flavours on an overlap is advice on noise)."""
    if twin.median_s is None or own.median_s is None:
        return False
    return own.median_s > SWITCH_FLAVOUR_AT * twin.median_s and reliably_faster(
        twin.times_s, own.times_s
    )


def _why(m: MethodResult) -> str:
    if m.error is not None:
        return f"fails here: {m.error}"
    return str(m.mismatch)


C = TypeVar("C", bound=CompareRecord)


def compare_from_json(doc: dict[str, Any], cls: type[C]) -> C:
    """Rebuild a record (``cls``: CompareRecord or a subclass) from its JSON; derived fields
    are ignored and recomputed.

    Raises:
        InputError: a part is missing, of the wrong type or out of range.
    """
    if doc.get("kind") != "compare":
        raise InputError("not a compare result")
    d = Obj(doc, "")
    if type(doc.get("methods")) is not list:
        raise InputError("not a valid compare result (methods is not a list)")
    s = Obj(doc.get("settings", {}), "settings")
    return cls(
        methods=tuple(
            _method_from_json(Obj(m, f"methods[{i}]")) for i, m in enumerate(d.items("methods"))
        ),
        model=d.text("model", ""),
        flavour=d.text("flavour", "unknown"),
        data=d.pairs("data"),
        settings=Settings(
            warmup=s.count("warmup", 2, hi=10**6),
            repeats=s.count("repeats", 10, lo=1, hi=10**6),
            min_block_s=s.seconds("min_block_s", 0.01),
            batch_size=s.count("batch_size", 32, lo=1, hi=10**9),
            rtol=s.seconds("rtol", 1e-3),
            atol=s.seconds("atol", 1e-5),
            loss_rise=s.seconds("loss_rise", 0.5),
        ),
        baselines=d.pairs("baselines"),
        environment=Environment.from_json(doc.get("environment")),
        notes=d.texts("notes"),
        created=d.text("created", ""),
    )


def _method_from_json(m: Obj) -> MethodResult:
    name = m.text("name")
    times = m.series("times_s", lo=-MAX_SECONDS)
    if any(not t > 0 for t in times):
        raise InputError(f"not a valid compare result (method {name!r} has a time ≤ 0)")
    return MethodResult(
        name=name,
        method=m.text("method", name),
        call=m.text("call", name),
        kind=m.text("kind"),
        flavour=m.text("flavour", "unknown"),
        eager=m.flag("eager", False),
        number=m.count("number", 1, hi=10**12),
        times_s=times,
        warmup_s=m.series("warmup_s"),
        error=m.opt_text("error"),
        mismatch=m.opt_text("mismatch"),
        max_abs_diff=m.opt_seconds("max_abs_diff", hi=1e300),
        loss_before=m.opt_seconds("loss_before", lo=-1e300, hi=1e300),
        loss_after=m.opt_seconds("loss_after", lo=-1e300, hi=1e300),
    )
