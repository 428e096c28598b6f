"""tfdiag's scratch folders in the temp dir, each named for the process that made it
(``tfdiag-<kind>-<pid>-<random>``), so that a process that ended without its clean-up
(``os._exit`` in the profiled call, ``kill -9``, a crash in native code) leaves nothing for
good: the next tfdiag process of the same user that makes one removes those whose
process is gone (:func:`sweep_stale`)."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

from tfdiag.records.journal import pid_alive

#: The kinds of scratch folder: the TF profiler's and JAX profiler's trace, a remote
#: capture's logdir, ``tfdiag tensorboard``'s served copy, ``tfdiag fix``'s measured copies.
KINDS = ("trace", "jaxtrace", "capture", "tensorboard", "fix")
_NAME = re.compile(rf"^tfdiag-(?:{'|'.join(KINDS)})-(?P<pid>[1-9][0-9]{{0,9}})-[A-Za-z0-9_]+$")


def prefix(kind: str) -> str:
    """The name's start for a folder of this process: ``tfdiag-<kind>-<pid>-``."""
    assert kind in KINDS, kind
    return f"tfdiag-{kind}-{os.getpid()}-"


def scratch_path(kind: str) -> Path:
    """A new folder's path (not made: the caller makes it, as a trace does, mode 0o700),
    after the stale ones are swept."""
    sweep_stale()
    return Path(tempfile.gettempdir(), prefix(kind) + secrets.token_hex(6))


def make_scratch(kind: str) -> Path:
    """A new folder, made (``mkdtemp``: this user only), after the stale ones are swept."""
    sweep_stale()
    return Path(tempfile.mkdtemp(prefix=prefix(kind)))


def sweep_stale(folder: Path | None = None) -> list[str]:
    """Remove the scratch folders in ``folder`` (the temp dir) of this user whose process is
    no longer alive: never a link, never another user's, never a name not of this form
    (a process whose number was reused keeps its folder: alive). The names removed."""
    folder = Path(tempfile.gettempdir()) if folder is None else folder
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    gone = []
    for entry in entries:
        m = _NAME.match(entry.name)
        if m is None or pid_alive(int(m["pid"])):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
            shutil.rmtree(Path(folder, entry.name), ignore_errors=True)
            gone.append(entry.name)
    return gone
