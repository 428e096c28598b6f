"""What a saved report says about the files saved with it: each companion's size and hash.

A report's JSON is its set's commit file, switched last; its ``files`` entry names every
companion (``run.prof``, ``run.tfprofile/``, ...) with its size and SHA-256, so a reader
that needs a companion (``tfdiag tensorboard`` reading the logdir) can tell the one saved
with this report from a stray one (copied from elsewhere, or re-saved on its own).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: A file's bytes, or a folder's files by relative path (as :mod:`tfdiag.records.files`).
Content = bytes | Mapping[str, bytes]


def describe(data: Content) -> dict[str, Any]:
    """``{"bytes": n, "sha256": ...}`` of a file, or of a folder's files (and their names)."""
    if isinstance(data, bytes):
        return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    digest = hashlib.sha256()
    total = 0
    for rel in sorted(data):
        digest.update(f"{rel}\0{hashlib.sha256(data[rel]).hexdigest()}\n".encode())
        total += len(data[rel])
    return {"files": len(data), "bytes": total, "sha256": digest.hexdigest()}


def describe_path(path: Path, *, max_bytes: int) -> dict[str, Any] | None:
    """The same description read from disk (``None``: missing, not a plain file or folder
    of plain files, or more than ``max_bytes``)."""
    if path.is_symlink():
        return None
    if path.is_file():
        if path.stat().st_size > max_bytes:
            return None
        return describe(path.read_bytes())
    if not path.is_dir():
        return None
    files: dict[str, bytes] = {}
    total = 0
    for root, _, names in os.walk(path):
        for name in names:
            p = Path(root, name)
            if p.is_symlink() or not p.is_file():
                return None
            total += p.stat().st_size
            if total > max_bytes:
                return None
            files[p.relative_to(path).as_posix()] = p.read_bytes()
    return describe(files)


def matches(recorded: Any, path: Path, *, max_bytes: int) -> bool:
    """``path`` on disk is what the report recorded (a report without a record: always)."""
    if recorded is None:
        return True
    if not isinstance(recorded, dict):
        return False
    found = describe_path(path, max_bytes=max_bytes)
    return found is not None and all(found.get(k) == v for k, v in recorded.items())
