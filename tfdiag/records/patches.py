"""What ``tfdiag fix`` found for each finding, as saved data: the unified diff (or why there
is none) and what running both versions of the program showed.

A ``tfdiag run`` record holds it as ``fix`` (None: no ``tfdiag fix`` ran), so a saved fix
result is a run report like the others: ``explain`` shows each finding's patch block, the
HTML page its copyable diff, and ``tfdiag diff`` the patch's effect on its site. Plain
data only: the edits are made in :mod:`tfdiag.fix`, which writes these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tfdiag.records.fields import Obj
from tfdiag.records.units import fmt_s

#: Ratios and times are read back up to this (a larger one is not a measurement).
_MAX = 1e12


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class Verified:
    """What running both versions showed: ``ok`` when the patch is offered. ``scope`` is
    ``per call`` (the edited call site timed in both) or ``script`` (the script's time);
    ``outputs`` says how the outputs compared; ``reason`` why it is not offered."""

    ok: bool
    ratio: float
    before_s: float
    after_s: float
    scope: str
    outputs: str
    runs: int
    reason: str = ""

    def figures(self) -> str:
        """``verified 41× (1.21 s → 29 ms per call), outputs match``."""
        ratio = f"{self.ratio:.1f}×" if self.ratio < 10 else f"{self.ratio:.0f}×"
        times = f"{fmt_s(self.before_s)} → {fmt_s(self.after_s)} {self.scope}"
        head = "verified" if self.ok else "not offered"
        tail = f", {self.outputs}" if self.outputs else ""
        why = f": {self.reason}" if self.reason and not self.ok else ""
        return f"{head} {ratio} ({times}){tail}{why}"

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "ratio": _finite(self.ratio),
            "before_s": _finite(self.before_s),
            "after_s": _finite(self.after_s),
            "scope": self.scope,
            "outputs": self.outputs,
            "runs": self.runs,
            "reason": self.reason or None,
            "figures": self.figures(),
        }

    @classmethod
    def from_json(cls, value: Any, where: str) -> Verified | None:
        if value is None:
            return None
        d = Obj(value, where)
        return cls(
            ok=d.flag("ok", False),
            ratio=d.opt_seconds("ratio", hi=_MAX) or 0.0,
            before_s=d.opt_seconds("before_s", hi=_MAX) or 0.0,
            after_s=d.opt_seconds("after_s", hi=_MAX) or 0.0,
            scope=d.text("scope", ""),
            outputs=d.text("outputs", ""),
            runs=d.count("runs", 0),
            reason=d.opt_text("reason") or "",
        )


@dataclass(frozen=True)
class PatchRecord:
    """One finding's patch, or why it has none.

    Attributes:
        finding: the finding's id; ``at`` its own line (``train.py:34``, "" when it names
            none): the two find it again in the record's findings.
        location: where the patch is (the edited line when the finding's is elsewhere).
        kind: the edit kind ("" when none answers the finding).
        patch: the unified diff as ``git diff`` prints it ("": no patch; ``reason`` says why).
        file: the edited file relative to the script's folder; ``line`` the edited line,
            ``new_line`` where that code is in the patched file (the site timed after).
        verified: both versions run and compared (None: not measured).
    """

    finding: str
    at: str = ""
    location: str = ""
    kind: str = ""
    patch: str = ""
    summary: str = ""
    reason: str = ""
    file: str = ""
    line: int = 0
    new_line: int = 0
    verified: Verified | None = None

    @property
    def offered(self) -> bool:
        return bool(self.patch) and self.verified is not None and self.verified.ok

    @property
    def site(self) -> str:
        """The edited line in the original (``train.py:34``), "" without a patch."""
        return f"{self.file}:{self.line}" if self.patch and self.file else ""

    @property
    def new_site(self) -> str:
        return f"{self.file}:{self.new_line}" if self.patch and self.file else ""

    def headline(self) -> str:
        """``line 34: verified 41× (1.21 s → 29 ms per call), outputs match``, or the
        reason there is no patch."""
        if not self.patch:
            return f"no patch: {self.reason or 'none proposed'}"
        figures = self.verified.figures() if self.verified else "not measured"
        return f"line {self.line}: {figures}"

    def to_json(self) -> dict[str, Any]:
        return {
            "finding": self.finding,
            "at": self.at or None,
            "location": self.location or None,
            "kind": self.kind or None,
            "patch": self.patch or None,
            "summary": self.summary or None,
            "reason": self.reason or None,
            "file": self.file or None,
            "line": self.line or None,
            "new_line": self.new_line or None,
            "verified": self.verified.to_json() if self.verified else None,
            "offered": self.offered,
        }

    @classmethod
    def from_json(cls, value: Any, where: str) -> PatchRecord:
        d = Obj(value, where)
        return cls(
            finding=d.text("finding"),
            at=d.opt_text("at") or "",
            location=d.opt_text("location") or "",
            kind=d.opt_text("kind") or "",
            patch=d.opt_text("patch") or "",
            summary=d.opt_text("summary") or "",
            reason=d.opt_text("reason") or "",
            file=d.opt_text("file") or "",
            line=d.opt_count("line", hi=10**9) or 0,
            new_line=d.opt_count("new_line", hi=10**9) or 0,
            verified=Verified.from_json(d.doc.get("verified"), d.at("verified")),
        )


@dataclass(frozen=True)
class FixRecord:
    """A ``tfdiag fix`` run's patches, one per finding it looked at, and how it measured
    (``runs`` of each version, ``rtol`` for the outputs' numbers)."""

    patches: tuple[PatchRecord, ...] = ()
    runs: int = 0
    rtol: float = 0.0

    @property
    def offered(self) -> int:
        return sum(p.offered for p in self.patches)

    def for_finding(self, finding: str, at: str = "") -> PatchRecord | None:
        """The patch of the finding ``finding`` at its line ``at``: the one recorded for
        both, else the only one recorded for that id."""
        same = [p for p in self.patches if p.finding == finding]
        exact = [p for p in same if p.at == at]
        if exact:
            return exact[0]
        return same[0] if len(same) == 1 else None

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "rtol": self.rtol,
            "offered": self.offered,
            "patches": [p.to_json() for p in self.patches],
        }

    @classmethod
    def from_json(cls, value: Any) -> FixRecord | None:
        if value is None:
            return None
        d = Obj(value, "fix")
        return cls(
            patches=tuple(
                PatchRecord.from_json(p, f"fix.patches[{i}]")
                for i, p in enumerate(d.items("patches"))
            ),
            runs=d.count("runs", 0, hi=1000),
            rtol=d.seconds("rtol", 0.0, hi=1.0),
        )
