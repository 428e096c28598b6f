"""What ``profile(..., verify=True)`` measured for a finding: the call as written against its
mechanical fixes, each timed and checked on the same inputs. Raw records only.

A :class:`Verification` holds the baseline's block times and one :class:`VariantRun` per fix
that was tried (its block times, what its check compared and whether it passed, or its
one-line failure). Everything else — the status, the speed-up, the best variant — is derived
here, so a saved report shows the same verdict when ``explain`` re-reads it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from tfdiag.records.errors import InputError
from tfdiag.records.fields import MAX_SECONDS, Obj
from tfdiag.records.numbers import TimedBlocks, iqr, median


def _quartiles(values: tuple[float, ...]) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


VERIFIED, NOT_VERIFIED, FAILED, SKIPPED = "verified", "not-verified", "failed", "skipped"
STATUSES = (VERIFIED, NOT_VERIFIED, FAILED, SKIPPED)
#: A variant's role: a fix the user can apply, or a bound (what any fix of that kind can gain
#: at most, e.g. the steps on batches taken from the pipeline beforehand) that is never one.
FIX, BOUND = "fix", "bound"
ROLES = (FIX, BOUND)
#: A fix is *verified* when it checks out, is at least this much faster (median / median), and
#: its blocks are apart from the call's: its upper quartile below the call's lower quartile.
VERIFY_AT = 1.10


@dataclass(frozen=True)
class VariantRun(TimedBlocks):
    """One fixed variant as measured. ``times_s``: seconds per call of the baseline's work
    (a variant that does k calls' work in one run is divided by k), one per timed block.

    ``check`` says what its result was compared with; ``passed`` is that comparison's outcome
    (None: it failed before it could be checked); ``problem`` is the one-line reason it
    failed (raised, or its outputs or losses differ) — such a variant is never recommended.
    """

    name: str
    fix: str
    kind: str = "inference"
    role: str = FIX
    number: int = 1
    times_s: tuple[float, ...] = ()
    warmup_s: tuple[float, ...] = ()
    check: str = ""
    passed: bool | None = None
    problem: str | None = None
    max_abs_diff: float | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None and self.passed is True and bool(self.times_s)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "fix": self.fix,
            "kind": self.kind,
            "role": self.role,
            "number": self.number,
            "times_s": list(self.times_s),
            "warmup_s": list(self.warmup_s),
            "check": self.check,
            "passed": self.passed,
            "problem": self.problem,
            "max_abs_diff": self.max_abs_diff,
        }

    @classmethod
    def from_json(cls, value: Any, where: str) -> VariantRun:
        v = Obj(value, where)
        passed = v.doc.get("passed")
        if passed is not None and type(passed) is not bool:
            raise InputError(f"not a valid result ({where}.passed must be true, false or null)")
        kind, role = v.text("kind", "inference"), v.text("role", FIX)
        if kind not in ("inference", "training"):
            raise InputError(f"not a valid result ({where}.kind must be inference or training)")
        if role not in ROLES:
            raise InputError(f"not a valid result ({where}.role must be one of {ROLES})")
        return cls(
            name=v.text("name"),
            fix=v.text("fix", ""),
            kind=kind,
            role=role,
            number=v.count("number", 1, lo=1),
            times_s=v.series("times_s"),
            warmup_s=v.series("warmup_s"),
            check=v.text("check", ""),
            passed=passed,
            problem=v.opt_text("problem"),
            max_abs_diff=v.opt_seconds("max_abs_diff", hi=MAX_SECONDS),
        )


@dataclass(frozen=True)
class Verification:
    """One finding's verification: the call as written (``baseline``, the code that ran)
    timed interleaved with each variant. ``skipped`` says why nothing was measured (the
    budget ran out, no mechanical fix exists, the call cannot be re-run safely)."""

    finding: str
    baseline: str = ""
    baseline_times_s: tuple[float, ...] = ()
    baseline_number: int = 1
    variants: tuple[VariantRun, ...] = ()
    skipped: str | None = None
    notes: tuple[str, ...] = ()

    # -- derived -------------------------------------------------------------------

    @property
    def baseline_median_s(self) -> float | None:
        return median(self.baseline_times_s)

    @property
    def baseline_iqr_s(self) -> float | None:
        return iqr(self.baseline_times_s)

    def speedup(self, v: VariantRun) -> float | None:
        """Baseline median / the variant's median."""
        base, fixed = self.baseline_median_s, v.median_s
        if base is None or fixed is None or fixed <= 0:
            return None
        return base / fixed

    def apart(self, v: VariantRun) -> bool:
        """The variant's upper quartile is below the call's lower quartile (or there are too
        few blocks to tell): its gain is not the machine's noise."""
        fixed, base = _quartiles(v.times_s), _quartiles(self.baseline_times_s)
        return fixed is None or base is None or fixed[1] < base[0]

    @property
    def best(self) -> VariantRun | None:
        """The fastest fix that checked out (bounds and failed variants never are)."""
        ok = [v for v in self.variants if v.role == FIX and v.ok and self.speedup(v) is not None]
        return max(ok, key=lambda v: self.speedup(v) or 0.0, default=None)

    @property
    def bound(self) -> VariantRun | None:
        return next((v for v in self.variants if v.role == BOUND and v.ok), None)

    @property
    def status(self) -> str:
        if self.skipped is not None or not self.variants:
            return SKIPPED
        best = self.best
        if best is None:
            return FAILED if all(v.problem is not None for v in self.variants) else NOT_VERIFIED
        fast = (self.speedup(best) or 0.0) >= VERIFY_AT
        return VERIFIED if fast and self.apart(best) else NOT_VERIFIED

    @property
    def gain(self) -> float:
        """The measured speed-up of the best fix when verified, else 0 (for ranking)."""
        best = self.best
        return (self.speedup(best) or 0.0) if best is not None and self.status == VERIFIED else 0.0

    @property
    def reason(self) -> str | None:
        """One line on why it is not verified; None when it is."""
        status = self.status
        if status == SKIPPED:
            return self.skipped or "no variant applies to this call"
        if status == FAILED:
            return "; ".join(f"{v.name}: {v.problem}" for v in self.variants)
        if status == NOT_VERIFIED:
            best = self.best
            if best is None:
                return "no fix checked out"
            ratio = self.speedup(best) or 0.0
            if ratio >= VERIFY_AT:
                return (
                    f"{best.name} measured ×{ratio:.2f}, but its blocks overlap the call's "
                    "(its upper quartile is not below the call's lower one): within the noise"
                )
            return f"{best.name} measured ×{ratio:.2f}: below the ×{VERIFY_AT:.2f} a fix needs"
        return None

    # -- codec ---------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "finding": self.finding,
            "baseline": self.baseline,
            "baseline_times_s": list(self.baseline_times_s),
            "baseline_number": self.baseline_number,
            "variants": [v.to_json() for v in self.variants],
            "skipped": self.skipped,
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, value: Any, where: str = "verifications[]") -> Verification:
        d = Obj(value, where)
        return cls(
            finding=d.text("finding"),
            baseline=d.text("baseline", ""),
            baseline_times_s=d.series("baseline_times_s"),
            baseline_number=d.count("baseline_number", 1, lo=1),
            variants=tuple(
                VariantRun.from_json(v, f"{where}.variants[]") for v in d.items("variants")
            ),
            skipped=d.opt_text("skipped"),
            notes=d.texts("notes"),
        )


def verification_view(v: Verification) -> dict[str, Any]:
    """``findings[i].verification`` in the report's JSON: the verdict and its figures."""
    best = v.best
    shown = best or next((x for x in v.variants if x.role == FIX), None)
    bound = v.bound
    return {
        "status": v.status,
        "speedup": v.speedup(best) if best is not None else None,
        "variant": shown.name if shown is not None else None,
        "fix": shown.fix if shown is not None else None,
        "check": shown.check if shown is not None else None,
        "check_passed": shown.passed if shown is not None else None,
        "baseline": v.baseline,
        "baseline_median_s": v.baseline_median_s,
        "baseline_iqr_s": v.baseline_iqr_s,
        "fixed_median_s": shown.median_s if shown is not None else None,
        "fixed_iqr_s": shown.iqr_s if shown is not None else None,
        "bound_speedup": v.speedup(bound) if bound is not None else None,
        "reason": v.reason,
        "notes": list(v.notes),
        "variants": [
            {
                "name": x.name,
                "role": x.role,
                "fix": x.fix,
                "speedup": v.speedup(x),
                "median_s": x.median_s,
                "iqr_s": x.iqr_s,
                "noisy": x.noisy,
                "check": x.check,
                "check_passed": x.passed,
                "problem": x.problem,
            }
            for x in v.variants
        ],
    }
