"""The machine's load while iterations are timed: how busy other processes kept the CPUs.

Read from ``/proc/stat`` (all CPU time, the hypervisor's steal) less this process's own CPU
time (``os.times``: every thread, TensorFlow's included), between calls — never inside a
timed one. On a machine without ``/proc`` nothing is measured. Reading costs ~20 µs.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

from tfdiag.records.machine import MachineLoad

_STAT = "/proc/stat"
_LOADAVG = "/proc/loadavg"


def _ticks_per_s() -> float:
    try:
        return float(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):
        return 100.0


_HZ = _ticks_per_s()


def _cpu_line() -> tuple[float, float, float] | None:
    """(busy, steal, all) CPU seconds of the whole machine since boot."""
    try:
        with open(_STAT, "rb") as f:
            first = f.readline().split()
    except OSError:
        return None
    if not first or first[0] != b"cpu":
        return None
    try:
        values = [int(v) for v in first[1:]]
    except ValueError:
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice: already in user]
    idle = sum(values[3:5])
    steal = values[7] if len(values) > 7 else 0
    counted = sum(values[:8])
    return (counted - idle - steal) / _HZ, steal / _HZ, counted / _HZ


def _own_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def _timer_noise_s(clock: Callable[[], float], reads: int = 21) -> float:
    """The median step between back-to-back clock reads (0 for a fake clock)."""
    values = [clock() for _ in range(reads)]
    steps = [b - a for a, b in zip(values, values[1:]) if b > a]
    return statistics.median(steps) if steps else 0.0


class LoadProbe:
    """Snapshots of the machine's CPU time: ``tick()`` after each timed call, ``record()``
    at the end. Every method is a no-op where ``/proc/stat`` cannot be read."""

    def __init__(self) -> None:
        self.cpus = os.cpu_count() or 1
        self.timer_s = _timer_noise_s(time.perf_counter)  # the real timer, even on a fake clock
        self._first = self._last = self._snap()
        self._per_iteration: list[float] = []

    @staticmethod
    def _snap() -> tuple[float, float, float, float, float] | None:
        cpu = _cpu_line()
        if cpu is None:
            return None
        return time.monotonic(), *cpu, _own_cpu_s()

    @staticmethod
    def _other(
        a: tuple[float, float, float, float, float], b: tuple[float, float, float, float, float]
    ) -> float:
        wall = b[0] - a[0]
        if wall <= 0:
            return 0.0
        return max((b[1] - a[1]) - (b[4] - a[4]), 0.0) / wall

    def mark(self) -> None:
        """Start the next window here (a driver whose timed calls are not back to back:
        the Keras callback, between whose batches Keras itself runs)."""
        snap = self._snap()
        if snap is not None:
            self._last = snap

    def tick(self) -> None:
        snap = self._snap()
        if snap is None or self._last is None:
            return
        self._per_iteration.append(round(self._other(self._last, snap), 3))
        self._last = snap

    def record(self) -> MachineLoad | None:
        end = self._snap()
        first = self._first
        if end is None or first is None or end[0] <= first[0]:
            return None
        all_s = end[3] - first[3]
        steal = (end[2] - first[2]) / all_s if all_s > 0 else 0.0
        return MachineLoad(
            cpus=self.cpus,
            other_cores=round(min(self._other(first, end), float(self.cpus)), 3),
            steal=round(min(max(steal, 0.0), 1.0), 4),
            loadavg=_loadavg(),
            timer_s=self.timer_s,
            per_iteration=tuple(self._per_iteration),
        )


def _loadavg() -> float:
    try:
        with open(_LOADAVG, "rb") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
