"""What surrounded a run: the machine's load while it was timed, and the native log lines
TensorFlow wrote while tfdiag worked.

Both are facts about the machine and the runtime, not about the user's program: a busy
machine makes iteration times noisy (the timeline findings read :class:`MachineLoad` before
they blame the program), and the native lines are kept for someone debugging tfdiag itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfdiag.records.fields import Obj

#: Other processes keeping this many cores busy, on average, make the machine *busy*: its
#: timings are noisy, and irregular spikes or a drift may be the machine's, not the program's.
BUSY_CORES = 0.5
#: ... and so does the hypervisor stealing this share of the CPU time.
BUSY_STEAL = 0.1
#: Native log lines a saved report carries (the count is kept whatever it is).
MAX_SAVED_LINES = 500


@dataclass(frozen=True)
class MachineLoad:
    """The machine while the timed iterations ran (Linux ``/proc``; absent elsewhere).

    Attributes:
        cpus: CPUs the machine has.
        other_cores: cores kept busy by other processes, on average over the timed pass
            (all CPU time in ``/proc/stat`` less this process's own).
        steal: the share of CPU time the hypervisor took (``steal`` in ``/proc/stat``).
        loadavg: the 1-minute load average at the end of the pass.
        timer_s: the clock's own noise: the median step between two back-to-back reads.
        per_iteration: other processes' cores during each timed iteration, in run order
            (coarse: the kernel counts CPU time in 10 ms ticks).
    """

    cpus: int
    other_cores: float
    steal: float = 0.0
    loadavg: float = 0.0
    timer_s: float = 0.0
    per_iteration: tuple[float, ...] = ()

    @property
    def busy(self) -> bool:
        return self.other_cores >= BUSY_CORES or self.steal >= BUSY_STEAL

    def describe(self) -> str:
        """``busy: 2.1 cores of 2 kept busy by other processes …`` — one line for a header."""
        what = f"{self.other_cores:.1f} of {self.cpus} cores busy with other processes"
        steal = f", {100 * self.steal:.0f} % stolen by the hypervisor" if self.steal >= 0.01 else ""
        load = f", load average {self.loadavg:.1f}"
        if self.busy:
            return f"busy: {what}{steal}{load}; timings are noisy"
        return f"quiet: {what}{steal}{load}"

    def to_json(self) -> dict[str, Any]:
        return {
            "cpus": self.cpus,
            "other_cores": self.other_cores,
            "steal": self.steal,
            "loadavg": self.loadavg,
            "timer_s": self.timer_s,
            "per_iteration": list(self.per_iteration),
        }

    @classmethod
    def from_json(cls, value: Any) -> MachineLoad | None:
        """Raises :class:`~tfdiag.records.errors.InputError` on a wrong field."""
        if value is None:
            return None
        d = Obj(value, "machine")
        return cls(
            cpus=d.count("cpus", 1, lo=1, hi=1 << 20),
            other_cores=d.seconds("other_cores", 0.0, lo=0.0, hi=float(1 << 20)),
            steal=d.seconds("steal", 0.0, lo=0.0, hi=1.0),
            loadavg=d.seconds("loadavg", 0.0, lo=0.0, hi=float(1 << 20)),
            timer_s=d.seconds("timer_s", 0.0, lo=0.0, hi=1.0),
            per_iteration=d.series("per_iteration"),
        )


@dataclass(frozen=True)
class NativeLog:
    """Native log lines (absl/glog) TensorFlow, its profiler and xprof wrote while tfdiag
    worked: kept off the terminal, kept here. ``total`` counts them all; ``lines`` holds up
    to :data:`MAX_SAVED_LINES` of them."""

    lines: tuple[str, ...] = ()
    total: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "lines": list(self.lines[:MAX_SAVED_LINES])}

    @classmethod
    def from_json(cls, value: Any) -> NativeLog:
        if value is None:
            return cls()
        d = Obj(value, "native_log")
        lines = d.texts("lines")[:MAX_SAVED_LINES]
        return cls(lines=lines, total=max(d.count("total", len(lines), hi=1 << 40), len(lines)))
