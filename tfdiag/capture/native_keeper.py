"""The keeper process of :mod:`tfdiag.capture.native_log`, run as a script (never imported).

``python -I -S native_keeper.py DATA_FD MAX_LINES MAX_CHARS``: bytes written to the window's
pipe arrive on ``DATA_FD``; requests arrive on stdin and replies leave on stdout, a channel
of their own, so nothing the program writes can be mistaken for one (or glued to one).

- A whole line that matches absl's format on its own (``I1201 21:26:55.193595 2595 x.cc:150]
  …``, TSL's older ``2023-10-10 12:00:00.123456: I x.cc:150] …``, or absl's "before
  InitializeLog" preamble) is kept; every other byte is written to stderr (the real one,
  inherited) in the order it came, at once. The one exception is :data:`CONTINUATIONS`: the
  second line of a message TensorFlow logs as two lines, kept only when it comes right after
  its first line and matches its text exactly. A tail without its newline is held only
  while it could still become a log line (it starts like one, is short, and the rest comes
  within :data:`HOLD_S`); otherwise it is written at once and so is the rest of its line.
- A request (one byte on stdin) reads everything already in the pipe, then answers with the
  kept lines: an 8-byte length, an 8-byte count of lines past ``MAX_LINES`` (counted, not
  stored), then each line length-prefixed.
- stdin at EOF: the program is gone (it exited, crashed, was killed): the kept lines go to
  stderr at once and from then on every byte is passed on. At EOF of the pipe (no writer
  left: a child started in a window may hold it after the program) the keeper exits.
"""

import os
import re
import select
import signal
import sys

#: How long a tail that starts like a log line waits for its newline.
HOLD_S = 0.05
#: A tail longer than this is no log line in the making (absl writes a line in one write).
HOLD_MAX = 4096

LOG = re.compile(
    rb"[IWE]\d{4} [\d:.]+ +\d+ [^\s:\]]+:\d+\] "  # absl
    rb"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWE] [^\s:\]]+:\d+\] "  # TSL's own sink (TF < 2.16)
)
#: (source file of the first line, the whole second line): a two-line message's second line,
#: kept right after its first (the CPU feature line of every TensorFlow import).
CONTINUATIONS = (
    (
        b"cpu_feature_guard.cc:",
        re.compile(
            rb"To enable the following instructions: [A-Z0-9_, ]+, in other operations, "
            rb"rebuild TensorFlow with the appropriate compiler flags\."
        ),
    ),
)
PREAMBLE = b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"


def out(data: bytes) -> None:
    while data:
        try:
            data = data[os.write(2, data) :]
        except BlockingIOError:
            select.select([], [2], [])
        except OSError:
            return  # stderr itself is gone: nothing left to write to


class Sorter:
    def __init__(self, max_lines: int, max_chars: int) -> None:
        self.max_lines, self.max_chars = max_lines, max_chars
        self.kept: list[bytes] = []
        self.more = 0
        self.pending = b""  # a tail that may still become a log line
        self.mid = False  # a tail was passed on: the rest of its line is passed too
        self.keeping = True
        self.last = b""  # the last line, when it was kept: its continuation may follow

    def feed(self, chunk: bytes) -> None:
        buf = self.pending + chunk  # pending is short: linear in the bytes fed
        self.pending = b""
        if not self.keeping:
            out(buf)
            return
        at = 0
        passed: list[bytes] = []
        if self.mid:
            nl = buf.find(b"\n")
            if nl < 0:
                out(buf)
                return
            passed.append(buf[: nl + 1])
            at, self.mid = nl + 1, False
        while (nl := buf.find(b"\n", at)) >= 0:
            bare = buf[at:nl].rstrip(b"\r")
            if LOG.match(bare) or bare == PREAMBLE or self.continues(bare):
                self.keep(bare)
                self.last = bare
            else:
                passed.append(buf[at : nl + 1])
                self.last = b""
            at = nl + 1
        tail = buf[at:]
        if tail and (len(tail) >= HOLD_MAX or not self.may_be_log(tail)):
            passed.append(tail)
            self.mid, self.last = True, b""
        elif tail:
            self.pending = tail
        out(b"".join(passed))

    def continues(self, line: bytes) -> bool:
        """The second line of the two-line message whose first line was the last one."""
        return bool(self.last) and any(
            source in self.last[:200] and text.fullmatch(line) for source, text in CONTINUATIONS
        )

    @staticmethod
    def may_be_log(tail: bytes) -> bool:
        return tail[:1] in (b"I", b"W", b"E") and (
            PREAMBLE.startswith(tail) or tail[1:5].isdigit() or len(tail) < 5
        )

    def keep(self, line: bytes) -> None:
        if len(self.kept) < self.max_lines:
            self.kept.append(line[: self.max_chars])
        else:
            self.more += 1

    def release(self) -> None:
        """Pass on a held tail: nothing waits for a newline past a request or :data:`HOLD_S`."""
        if self.pending:
            out(self.pending)
            self.pending, self.mid, self.last = b"", True, b""

    def reply(self) -> bytes:
        body = b"".join(len(k).to_bytes(4, "big") + k for k in self.kept)
        head = len(body).to_bytes(8, "big") + self.more.to_bytes(8, "big")
        self.kept, self.more = [], 0
        self.mid = False  # the next window starts a line: what came between is unknown
        self.last = b""
        return head + body


def drain(fd: int, sorter: Sorter) -> bool:
    """Feed what is in the pipe now; False at its EOF."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        sorter.feed(chunk)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    data = int(sys.argv[1])
    sorter = Sorter(int(sys.argv[2]), int(sys.argv[3]))
    os.set_blocking(data, False)
    watch = [data, 0]
    while True:
        ready, _, _ = select.select(watch, [], [], HOLD_S if sorter.pending else None)
        if not ready:
            sorter.release()
            continue
        if data in ready and not drain(data, sorter):
            break
        if 0 in ready:
            request = os.read(0, 4096)
            if request:
                alive = drain(data, sorter)
                sorter.release()
                reply = sorter.reply()
                while reply:
                    reply = reply[os.write(1, reply) :]
                if not alive:
                    break
            else:  # the program is gone: its kept lines now, then everything as it comes
                sorter.release()
                out(b"".join(k + b"\n" for k in sorter.kept))
                sorter.kept, sorter.keeping = [], False
                watch = [data]
    sorter.release()
    out(b"".join(k + b"\n" for k in sorter.kept))


if __name__ == "__main__":
    main()
