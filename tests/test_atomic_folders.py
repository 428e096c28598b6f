"""write_set with folders: staged in a temporary folder, renamed into place with the files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tfdiag.records.errors import InputError
from tfdiag.records.files import write_set


def _leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_a_folder_lands_with_the_files(tmp_path: Path) -> None:
    write_set(
        {
            tmp_path / "r.json": b"{}",
            tmp_path / "r.tfprofile": {"plugins/profile/run/h.xplane.pb": b"trace"},
        }
    )
    assert (tmp_path / "r.json").read_bytes() == b"{}"
    assert (tmp_path / "r.tfprofile/plugins/profile/run/h.xplane.pb").read_bytes() == b"trace"
    mode = (tmp_path / "r.tfprofile").stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o777 & ~umask
    assert _leftovers(tmp_path) == []


def test_an_existing_folder_blocks_the_set_unless_overwrite(tmp_path: Path) -> None:
    old = tmp_path / "r.tfprofile"
    (old / "plugins").mkdir(parents=True)
    (old / "plugins/stale.pb").write_bytes(b"old")
    files = {tmp_path / "r.json": b"{}", old: {"plugins/new.pb": b"new"}}
    with pytest.raises(InputError, match="exists"):
        write_set(files)
    assert not (tmp_path / "r.json").exists()
    write_set(files, overwrite=True)
    assert (old / "plugins/new.pb").read_bytes() == b"new"
    assert not (old / "plugins/stale.pb").exists()
    assert _leftovers(tmp_path) == []


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_bytes(b"before")
    files = {
        tmp_path / "r.json": b"after",
        tmp_path / "r.tfprofile": {"../escape.pb": b"x"},
    }
    with pytest.raises(InputError, match="cannot write"):
        write_set(files, overwrite=True)
    assert (tmp_path / "r.json").read_bytes() == b"before"
    assert not (tmp_path / "r.tfprofile").exists()
    assert not (tmp_path / "escape.pb").exists()
    assert _leftovers(tmp_path) == []
