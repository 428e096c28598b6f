"""A patch measured before it is offered: the program and its patched copy run in a
temporary folder, interleaved, with the same arguments, each under ``tfdiag run`` (time
only: its per-site timing of every Keras call and ``tf.function`` step), and compared.

The patch is offered when (1) the patched version is faster beyond the noise — at the
edited line when it is a call site in both versions doing the same work per call (the
median per call, and every patched run's median below every original run's, or with
one run each the patched calls' upper quartile below the original's lower one), else over
the script's wall time (every patched run below every original run; with one run each, at
least :data:`ONE_RUN_RATIO` faster) — and (2) the results agree: the exit status, and the
script's standard output, its numbers within ``rtol``. An output that differs between
two runs of the original itself cannot be compared: it is said so, and only the exit
status is.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tfdiag.fix.outcome import Edit
from tfdiag.fix.source import SKIPPED_DIRS
from tfdiag.records import scratch
from tfdiag.records.errors import InputError
from tfdiag.records.numbers import median
from tfdiag.records.patches import Verified

#: A gain below this ratio is not offered, however steady.
MIN_RATIO = 1.1
#: With one run of each version the wall time has no spread to judge by: this gain counts.
ONE_RUN_RATIO = 1.5
#: At most this many files are placed in a copy of the script's folder.
MAX_FILES = 5000
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


@dataclass(frozen=True)
class Outcome:
    """One run of one version: its exit code, status, standard output, wall time and
    per-call times by call site (``file:line``)."""

    rc: int
    status: str
    stdout: str
    wall_s: float
    sites: dict[str, tuple[float, ...]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.rc == 0 and self.status == "ok"


#: A data file up to this size is copied into the measured copy; a larger one is linked.
COPY_MAX_FILE = 16 * 2**20
#: At most this many bytes of data files are copied per copy; the rest is linked.
COPY_BUDGET = 256 * 2**20


@dataclass
class Linked:
    """The files of the user's folder a copy links instead of copying (too large), each
    with its size and modification time when linked: :meth:`changed` names those a
    measured run wrote through its link."""

    root: Path
    files: dict[str, tuple[int, int]] = field(default_factory=dict)

    def add(self, rel: Path, st: os.stat_result) -> None:
        self.files[str(rel)] = (st.st_size, st.st_mtime_ns)

    def changed(self) -> list[str]:
        out = []
        for rel, was in self.files.items():
            try:
                st = (self.root / rel).stat()
            except OSError:
                out.append(rel)
                continue
            if (st.st_size, st.st_mtime_ns) != was:
                out.append(rel)
        return out


def copy_tree(root: Path, into: Path) -> Linked:
    """The script's folder at ``into``, so that a measured run changes nothing of the
    user's: Python files and data files are copied (a run that appends to a log or saves
    a model over its last one writes into the copy), a data file too large to copy
    (:data:`COPY_MAX_FILE`, :data:`COPY_BUDGET`) is linked and returned in :class:`Linked`
    to be checked after the runs; a folder that is a link is linked (it is data kept
    elsewhere: the copy would not hold it otherwise)."""
    count = 0
    budget = COPY_BUDGET
    linked = Linked(root)
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        rel = here.relative_to(root)
        (into / rel).mkdir(parents=True, exist_ok=True)
        kept = []
        for d in dirs:
            if d in SKIPPED_DIRS:
                continue
            if (here / d).is_symlink():
                os.symlink((here / d).resolve(), into / rel / d)
            else:
                kept.append(d)
        dirs[:] = kept
        for name in names:
            count += 1
            if count > MAX_FILES:
                raise InputError(f"{root} holds over {MAX_FILES} files: too many to copy to verify")
            src, dst = here / name, into / rel / name
            try:
                st = src.stat()
            except OSError:  # a dangling link: as it is
                os.symlink(os.readlink(src), dst)
                continue
            if name.endswith(".py") or (
                stat.S_ISREG(st.st_mode) and st.st_size <= min(COPY_MAX_FILE, budget)
            ):
                shutil.copy2(src, dst)
                if not name.endswith(".py"):
                    budget -= st.st_size
            else:
                os.symlink(src.resolve(), dst)
                linked.add(rel / name, st)
    return linked


def copy_root(folder: Path, cwd: Path) -> tuple[Path, Path, Path]:
    """What a measured run copies and where it runs: ``(root, script folder under root,
    cwd under root)``. The run's working folder must be in the copy, or the script's
    relative files (a log, a saved model) land in the user's real folder: the script's
    folder when the command is typed in it or below it, the folder it is typed in when
    that holds the script (a project root running ``scripts/train.py``, reading
    ``data/``); from anywhere else a measured run cannot be kept off the user's files, and
    is refused."""
    if cwd.is_relative_to(folder):
        return folder, Path(), cwd.relative_to(folder)
    if folder.is_relative_to(cwd):
        return cwd, folder.relative_to(cwd), Path()
    raise InputError(
        f"run tfdiag fix from {folder} or a folder above it: a measured run works in a copy "
        "of the folder it is typed in, so that the script's relative files land in the copy"
    )


def run_once(
    folder: Path, script: str, argv: Sequence[str], cwd: Path, timeout_s: float
) -> Outcome:
    """One run of ``folder/script`` under ``tfdiag run --iterations 0`` (time only)."""
    out, stdout = folder.parent / f"{folder.name}.json", folder.parent / f"{folder.name}.out"
    for f in (out, stdout):
        f.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "tfdiag",
        "run",
        "--iterations",
        "0",
        "--no-tf-profiler",
        "--format",
        "json",
        "--out",
        str(out),
        "--script-stdout",
        str(stdout),
        str(folder / script),
        *argv,
    ]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONHASHSEED": "0"}
    try:
        proc = subprocess.run(  # no stdin: both versions read the same (nothing)
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return Outcome(124, f"timed out after {timeout_s:.0f} s", "", math.inf)
    if not out.is_file():
        tail = proc.stderr.strip().splitlines()[-1:] or ["no report"]
        return Outcome(proc.returncode or 1, tail[0], "", math.inf)
    doc = json.loads(out.read_text(encoding="utf-8"))
    sites = {f"{s['file']}:{s['line']}": tuple(s["call_s"]) for s in doc.get("sites", ())}
    text = stdout.read_text(encoding="utf-8", errors="replace") if stdout.is_file() else ""
    return Outcome(proc.returncode, doc.get("status", "?"), text, float(doc["wall_s"]), sites)


def same_output(a: str, b: str, rtol: float) -> bool:
    """Do two outputs agree: the same text, their numbers within ``rtol``?"""
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
        fx, fy = float(x), float(y)
        if math.isnan(fx) and math.isnan(fy):  # `nan` printed by both
            continue
        if fx != fy and not math.isclose(fx, fy, rel_tol=rtol, abs_tol=rtol * 1e-3):
            return False
    return True


def _quartiles(xs: Sequence[float]) -> tuple[float, float]:
    s = sorted(xs)
    return s[len(s) // 4], s[(3 * len(s)) // 4]


def judge(
    before: Sequence[Outcome], after: Sequence[Outcome], edit: Edit, relpath: str, rtol: float
) -> Verified:
    """The verdict on runs of both versions (``relpath``: the edited file's)."""
    runs = len(before)
    if not all(o.ok for o in before):
        bad = next(o for o in before if not o.ok)
        return Verified(False, 0.0, 0.0, 0.0, "", "", runs, f"the original failed: {bad.status}")
    old = f"{relpath}:{edit.line}".replace(os.sep, "/")
    new = f"{relpath}:{edit.new_line}".replace(os.sep, "/")
    per_call = edit.same_call and all(o.sites.get(old) for o in before)
    if per_call and all(o.sites.get(new) for o in after if o.ok):
        b = [median(o.sites[old]) or 0.0 for o in before]
        a = [median(o.sites[new]) or 0.0 for o in after if o.ok]
        pooled_b = [t for o in before for t in o.sites[old]]
        pooled_a = [t for o in after if o.ok for t in o.sites[new]]
        scope = "per call"
        steady = _quartiles(pooled_a)[1] < _quartiles(pooled_b)[0] if runs == 1 else None
    else:
        b = [o.wall_s for o in before]
        a = [o.wall_s for o in after if o.ok]
        pooled_b = pooled_a = []
        scope = "script"
        steady = None
    before_s = median(b) or 0.0
    after_s = (median(a) or 0.0) if a else math.inf
    ratio = before_s / after_s if after_s and math.isfinite(after_s) else 0.0
    if not all(o.ok for o in after):
        bad = next(o for o in after if not o.ok)
        return Verified(
            False,
            ratio,
            before_s,
            after_s or 0.0,
            scope,
            "",
            runs,
            f"the patched program failed: {bad.status}",
        )
    outputs, agree = _outputs(before, after, rtol)
    if steady is None:
        steady = max(a) < min(b) if runs > 1 else ratio >= ONE_RUN_RATIO
    faster = ratio >= MIN_RATIO and steady
    reason = "" if faster else f"not faster beyond the noise ({runs} run(s) each)"
    if not agree:
        reason = "its output differs from the original's"
    return Verified(faster and agree, ratio, before_s, after_s, scope, outputs, runs, reason)


def _outputs(before: Sequence[Outcome], after: Sequence[Outcome], rtol: float) -> tuple[str, bool]:
    first = before[0].stdout
    if not all(same_output(first, o.stdout, rtol) for o in before[1:]):
        return "output differs between runs of the original itself: exit status compared", True
    if all(same_output(first, o.stdout, rtol) for o in after):
        return "outputs match" if first.strip() else "exit status matches (no output)", True
    return "outputs differ", False


def verify(
    edit: Edit,
    script: Path,
    argv: Sequence[str],
    *,
    relpath: str,
    runs: int = 2,
    rtol: float = 1e-3,
    timeout_s: float = 600.0,
) -> Verified:
    """Run the original and the patched program ``runs`` times each, interleaved (the
    order alternating), in copies of the script's folder, and judge."""
    root, sub, run_in = copy_root(script.resolve().parent, Path.cwd().resolve())
    scratch.sweep_stale()  # the copies a killed `tfdiag fix` left
    with tempfile.TemporaryDirectory(prefix=scratch.prefix("fix")) as tmp:
        base = Path(tmp)
        orig, patched = base / "original", base / "patched"
        linked = copy_tree(root, orig)
        copy_tree(root, patched)
        (patched / sub / relpath).write_bytes(edit.new_bytes)  # the bytes --apply writes
        where = {v: v / run_in for v in (orig, patched)}
        before: list[Outcome] = []
        after: list[Outcome] = []
        rel_script = str(sub / script.resolve().relative_to(root / sub))
        rel_edit = str(sub / relpath) if sub.parts else relpath

        def measure(pairs: range) -> Verified:
            for i in pairs:
                order = (orig, patched) if i % 2 == 0 else (patched, orig)
                for v in order:
                    o = run_once(v, rel_script, argv, where[v], timeout_s)
                    (before if v is orig else after).append(_relative(o, v))
            return judge(before, after, edit, rel_edit, rtol)

        verdict = measure(range(runs))
        if verdict.ok:
            # A first look that says faster is measured again before it is offered: on a
            # noisy machine a patch that changes nothing can land below the original in a
            # few runs by chance (a comment-only patch was "verified 1.8×" in one run each).
            verdict = measure(range(runs, 2 * runs))
    written = linked.changed()
    if written:  # a file too large to copy, written through its link: the user's own
        names = ", ".join(written[:3]) + (
            f" and {len(written) - 3} more" if len(written) > 3 else ""
        )
        return replace(
            verdict,
            ok=False,
            reason=f"the script wrote to {names} in your folder while it was measured "
            "(too large to copy, linked): not offered",
        )
    return verdict


def _relative(o: Outcome, folder: Path) -> Outcome:
    """Site keys relative to the copy's root (``tfdiag run`` keeps them so already)."""
    prefix = str(folder) + os.sep
    sites = {k[len(prefix) :] if k.startswith(prefix) else k: v for k, v in o.sites.items()}
    return Outcome(o.rc, o.status, o.stdout, o.wall_s, sites)
