"""Ctrl-C during ``profile()``: the first press stops the run, the rest of a burst is noted.

Python's default handler raises ``KeyboardInterrupt`` at every press. A burst (a user
leaning on Ctrl-C, a CI runner's SIGINT to the process group) then raises a second
interrupt while the first unwinds — inside a probe's cleanup, or in the handler that turns
the first one into :class:`~tfdiag.capture.runner.Interrupted` with the partial report — and
the report is lost. :class:`CtrlC` is installed once for the whole run: armed, a press raises
``KeyboardInterrupt`` as the default handler would (once); disarmed, presses are counted and
the caller decides. The user's handler, if they set one, or a run off the main thread,
is left alone: then nothing is installed and presses behave as they always do.

The previous handler comes back in :meth:`restore`, the last call the outermost tfdiag
frame makes, so a press after it is raised in the user's code, not in tfdiag's; a press
that lands inside that call (raised by the handler just put back, at the interpreter's
first check after the C call) is caught there and reported to the caller, which raises
the :class:`~tfdiag.capture.runner.Interrupted` it made beforehand (1 burst in ~3,000
had escaped there as a bare interrupt).
"""

from __future__ import annotations

import signal
import threading
from types import FrameType


class CtrlC:
    """SIGINT while a run is in progress (see the module's docstring)."""

    def __init__(self) -> None:
        self.installed = False
        self.armed = True
        #: presses while disarmed (the run was already stopping or assembling its report)
        self.noted = 0
        self._previous: object = None

    @classmethod
    def install(cls) -> CtrlC:
        guard = cls()
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            guard._previous = signal.signal(signal.SIGINT, guard._press)
            guard.installed = True
        return guard

    def _press(self, signum: int, frame: FrameType | None) -> None:
        if self.armed:
            self.armed = False
            raise KeyboardInterrupt
        self.noted += 1

    def arm(self) -> None:
        """The next press raises (the user's code runs again: verification)."""
        self.armed, self.noted = True, 0

    def disarm(self) -> None:
        """Presses from here on are counted in :attr:`noted`, not raised."""
        self.armed, self.noted = False, 0

    def restore(self) -> bool:
        """The previous handler back; True when a press landed as it went back (raised by
        that handler inside this call: caught here, so the caller can keep its report)."""
        if not self.installed:
            return False
        self.installed = False
        try:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
        except KeyboardInterrupt:
            return True
        return False
