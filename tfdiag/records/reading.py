"""Reading a file a user names: a regular file only, its size checked before it is read.

A FIFO named like a report would block ``read()`` forever, a link to ``/dev/zero`` would
grow without end; both are refused here, in one line, before a byte is read. Opening uses
``O_NONBLOCK`` (a FIFO with no writer opens at once) and the checks are made on the open
descriptor, so the file cannot be swapped between the check and the read. Paths handed to
another library (a Keras model, a script) go through :func:`check_regular` first.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from tfdiag.records.errors import InputError

#: JSON files tfdiag reads whole: a saved result (the profile of 100,000 functions is ~15 MB).
MAX_JSON_BYTES = 128 * 2**20
#: A rules or findings file.
MAX_RULES_BYTES = 16 * 2**20


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(n: int) -> str:
    return f"{n // 2**30} GiB" if n >= 2**30 and n % 2**30 == 0 else f"{n // 2**20} MiB"


def _check(path: Path, st: os.stat_result, what: str, max_bytes: int | None) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{path}: is a folder, not {what}")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: {_kind(st.st_mode)}, not {what} (only regular files are read)")
    if max_bytes is not None and st.st_size > max_bytes:
        raise InputError(f"{path}: larger than {_size(max_bytes)}")


def open_regular(path: Path, what: str, max_bytes: int | None = None) -> int:
    """An open descriptor of a regular file (the caller closes it).

    Raises:
        InputError: missing, unreadable, a folder, a FIFO or device, or over ``max_bytes``.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:  # Windows
        raise InputError(f"{path}: is a folder, not {what}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        _check(path, os.fstat(fd), what, max_bytes)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path, what: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (read no further than that, even
    if the file grows meanwhile).

    Raises:
        InputError: as :func:`open_regular`, or a read error.
    """
    fd = open_regular(path, what, max_bytes)
    chunks: list[bytes] = []
    total = 0
    # The size it has now in one read (one buffer, not chunks joined into a second copy of a
    # 100 MB report), then whatever it grew by meanwhile.
    size = min(os.fstat(fd).st_size + 1, max_bytes + 1)
    try:
        while True:
            chunk = os.read(fd, size if not chunks else min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise InputError(f"{path}: larger than {_size(max_bytes)}")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def check_regular(path: Path, what: str) -> None:
    """Refuse anything but a regular file before handing ``path`` to another reader.

    Raises:
        InputError: missing, a folder, a FIFO, a device or a socket.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file ({what})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    _check(path, st, what, None)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} does not fit a float")
    return value


def parse_json(data: bytes) -> Any:
    """Strict JSON: no NaN or Infinity, no number too large for a float.

    msgspec decodes it (1.5x the standard library's speed on a report, and as strict: it
    refuses NaN, Infinity, 1e999, invalid UTF-8 and lone surrogates); what msgspec refuses
    is read again by the standard library, whose messages say what is wrong in the terms
    the rest of tfdiag uses (a lone surrogate reaches the field checks, for one).

    Raises:
        ValueError, UnicodeDecodeError, RecursionError: not such JSON.
    """
    import msgspec

    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        pass
    return json.loads(data.decode("utf-8"), parse_constant=_refuse_constant, parse_float=_finite)
