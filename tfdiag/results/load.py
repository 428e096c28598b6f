"""Read any saved result back: a profile report (``.tfdiag.json``), a comparison, a bench
grid or a ``tfdiag run`` result, or any pstats dump (``.prof``). Each file is read and
parsed once; the JSON's ``kind`` picks the result class.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfdiag.analysis.scope import scope_to
from tfdiag.records.bench import bench_from_json
from tfdiag.records.catalog import default_catalog
from tfdiag.records.compare import compare_from_json
from tfdiag.records.errors import InputError
from tfdiag.records.files import settle_crashed_save
from tfdiag.records.job import job_from_json
from tfdiag.records.paths import normalize_path
from tfdiag.records.pstats_table import MAX_PROF_BYTES
from tfdiag.records.reading import MAX_JSON_BYTES, parse_json, read_regular
from tfdiag.records.report import SCHEMA_VERSION, CallInfo, Environment, Timing
from tfdiag.records.report_json import run_record_from_json
from tfdiag.records.script import script_from_json
from tfdiag.records.stats import ProfileStats
from tfdiag.records.units import fmt_s
from tfdiag.results.base import Result
from tfdiag.results.bench import BenchResult
from tfdiag.results.compare import CompareResult
from tfdiag.results.job import JobResult
from tfdiag.results.report import Report
from tfdiag.results.script import ScriptResult


def _scoped(stats: ProfileStats, entries: list[int]) -> tuple[ProfileStats, str]:
    """The profile inside the Keras calls, and a note on what was left out (if anything
    worth saying: at least 5 % of the profile)."""
    total = stats.total_s
    scoped = scope_to(stats, entries)
    if total <= 0 or scoped.outside_s < 0.05 * total:
        return stats, ""
    rest = scoped.outside_s - scoped.import_s
    parts = [f"imports {fmt_s(scoped.import_s)}"] if scoped.import_s > 0 else []
    parts.append(f"the rest of the program (set-up, your own code between the calls) {fmt_s(rest)}")
    return scoped.stats, (
        f"analysed: the {fmt_s(scoped.inside_s)} inside the Keras calls, of {fmt_s(total)} "
        f"profiled; left out: {', '.join(parts)}"
    )


def report_from_json(doc: dict[str, Any]) -> Report:
    """A report from its parsed JSON document (unknown keys ignored, missing ones default)."""
    return run_record_from_json(doc, Report)


#: The JSON's ``kind`` → what rebuilds that result from the parsed document.
RESULT_KINDS: dict[str, Callable[[dict[str, Any]], Result]] = {
    "profile": report_from_json,
    "compare": lambda doc: compare_from_json(doc, CompareResult),
    "bench": lambda doc: bench_from_json(doc, BenchResult),
    "script": lambda doc: script_from_json(doc, ScriptResult, report_from_json),
    "job": lambda doc: job_from_json(doc, JobResult),
}


def load_result(path: str | os.PathLike[str], *, iterations: int | None = None) -> Any:
    """Any saved tfdiag result (a kind in :data:`RESULT_KINDS`), or a pstats ``.prof``.

    Every result has ``to_json()`` and renders with rich.

    Raises:
        InputError: the path is missing or unreadable, or the file is not a result.
    """
    return _load(path, iterations=iterations, profile_only=False)


def load_report(path: str | os.PathLike[str], *, iterations: int | None = None) -> Report:
    """Load a ``.tfdiag.json`` report or a pstats ``.prof`` file.

    Args:
        path: the file.
        iterations: for a bare ``.prof``, the number of iterations it holds;
            inferred from the call count of a Keras step function when omitted.

    Raises:
        InputError: the path is missing, unreadable, or neither a report nor pstats data;
            or the report comes from a newer tfdiag.
    """
    report = _load(path, iterations=iterations, profile_only=True)
    assert isinstance(report, Report)
    return report


def _load(path: str | os.PathLike[str], *, iterations: int | None, profile_only: bool) -> Any:
    if not str(path):
        raise InputError("an empty path: name a .tfdiag.json report or a .prof file")
    p = Path(path)
    if iterations is not None and iterations < 1:
        raise InputError(f"iterations must be at least 1, got {iterations}")
    settle_crashed_save(p)  # a save of this report that died mid-way: finish or undo it
    data = _read(p)
    if p.name.endswith(".json") or _looks_like_json(data):
        try:
            result = _from_json_bytes(p, data, profile_only=profile_only)
        except InputError:
            if p.name.endswith(".json"):
                raise
        else:
            if iterations is not None and (
                not isinstance(result, Report) or iterations != result.timing.iterations
            ):
                own = (
                    f"({result.timing.iterations} iterations)"
                    if isinstance(result, Report)
                    else f"(a {result.kind} result)"
                )
                raise InputError(
                    f"{p}: --iterations applies to a bare .prof; this report records its own {own}"
                )
            return result
    try:
        stats = ProfileStats.from_prof_bytes(data)
    except InputError as exc:
        raise InputError(_not_read(p, data, exc)) from None
    return report_from_stats(stats, name=p.name, iterations=iterations)


#: What explain and load_result read, for the line that says a file is none of them.
READ = (
    "tfdiag reads .tfdiag.json reports, the JSON of compare, bench and run results, and "
    "pstats .prof dumps"
)


def _not_read(p: Path, data: bytes, exc: InputError) -> str:
    """Why ``p`` is not read, naming what is: a pyinstrument session (which tfdiag writes
    beside a report) points at that report rather than at marshal's error."""
    if _looks_like_json(data):
        try:
            doc = parse_json(data)
        except (UnicodeDecodeError, ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict) and "frame_records" in doc and "start_call_stack" in doc:
            stem = p.name[: -len(".pyisession")] if p.name.endswith(".pyisession") else p.stem
            return (
                f"{p}: a pyinstrument session (the sampled stacks), for `pyinstrument --load "
                f"{p.name}`; explain the report saved with it ({stem}.tfdiag.json). {READ}"
            )
        return f"{p}: JSON, but not a tfdiag result. {READ}"
    return f"{p}: neither a tfdiag report nor pstats data ({exc}). {READ}"


def _read(p: Path) -> bytes:
    """The file's bytes: a regular file only, at most the size a result of its kind can have."""
    cap = MAX_JSON_BYTES if p.name.endswith(".json") else MAX_PROF_BYTES
    data = read_regular(p, "a report or .prof file", cap)
    if not data.strip():
        raise InputError(f"{p}: empty file")
    if len(data) > MAX_JSON_BYTES and data.lstrip()[:1] == b"{":
        raise InputError(f"{p}: larger than {MAX_JSON_BYTES // 2**20} MiB")
    return data


def _check_version(p: Path, doc: dict[str, Any]) -> None:
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise InputError(f"{p}: not a tfdiag result (schema_version is not an integer)")
    if version > SCHEMA_VERSION:
        raise InputError(
            f"{p}: written by a newer tfdiag (schema {version}, this one reads up to "
            f"{SCHEMA_VERSION}); upgrade tfdiag"
        )


def _looks_like_json(data: bytes) -> bool:
    """JSON text starts with ``{``; so does a marshal dict, which is not UTF-8 text."""
    try:
        return data.decode("utf-8").lstrip().startswith("{")
    except UnicodeDecodeError:
        return False


def _from_json_bytes(p: Path, data: bytes, *, profile_only: bool) -> Result:
    try:
        doc = parse_json(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"{p}: not a valid report (corrupt JSON: {exc})") from None
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise InputError(f"{p}: not a tfdiag report (no schema_version)")
    kind = doc.get("kind", "profile")
    if not isinstance(kind, str):
        raise InputError(f"{p}: not a tfdiag result (kind is not a string)")
    if kind not in RESULT_KINDS:
        raise InputError(f"{p}: unknown result kind {kind!r} (a newer tfdiag?)")
    _check_version(p, doc)
    if profile_only and kind != "profile":
        raise InputError(f"{p}: a {kind!r} result, not a profile report")
    try:
        return RESULT_KINDS[kind](doc)
    except InputError as exc:
        raise InputError(f"{p}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        what = "report" if kind == "profile" else f"{kind} result"
        raise InputError(f"{p}: not a valid {what} (wrong shape: {exc!r})") from None


def saved_files(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What a saved report records of the files saved with it (its ``files`` entry):
    companion name → size and hash (:mod:`tfdiag.records.manifest`); ``{}`` if none."""
    p = Path(path)
    try:
        doc = parse_json(_read(p))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) else None
    return files if isinstance(files, dict) else {}


def report_from_stats(
    stats: ProfileStats, *, name: str, iterations: int | None, scope: bool = True
) -> Report:
    """Wrap a bare function table; find the iterations from a Keras step function's calls.

    With ``scope`` (default), a profile that holds more than the Keras calls (a whole
    script's: imports, set-up) is scoped to the time inside them, so the one-time rest does
    not dilute the steady state; the notes say what was left out."""
    catalog = default_catalog()
    entries = [
        (i, fn)
        for i, (fn, rule) in enumerate(zip(stats.functions, catalog.match_table(stats.functions)))
        if rule is not None and rule.entry
    ]
    entry = max(entries, key=lambda t: t[1].cum_s)[1] if entries else None
    notes = []
    if iterations is None:
        if entry is None or entry.primitive_calls < 2:
            raise InputError(
                f"{name}: cannot infer the iteration count (no repeated Keras "
                "predict/fit/evaluate/*_on_batch call in it); pass --iterations N"
            )
        n, profiled = entry.primitive_calls - 1, entry.primitive_calls
        notes.append(
            f"iterations inferred from {entry.short_name}: {profiled} calls, "
            "the first taken as the cold call"
        )
    else:
        n = iterations
        profiled = entry.primitive_calls if entry is not None else iterations
        if entry is not None and iterations > entry.primitive_calls:
            raise InputError(
                f"{name}: --iterations {iterations} is more than the {entry.primitive_calls} "
                f"calls of {entry.short_name} in it"
            )
    if scope and entry is not None:
        stats, note = _scoped(stats, [i for i, _ in entries])
        if note:
            notes.append(note)
    path = normalize_path(entry.file) if entry else ""
    flavour = (
        "tf_keras"
        if path.startswith("tf_keras/")
        else "keras3"
        if path.startswith("keras/")
        else "tf.keras (TF 2.x)"
        if "/python/keras/" in path
        else "unknown"
    )
    method = entry.name.rsplit(".", 1)[-1] if entry else ""
    return Report(
        call=CallInfo(label=entry.short_name if entry else name, method=method, flavour=flavour),
        environment=Environment(),
        timing=Timing(iterations=n, profiled_calls=profiled),
        profile=stats,
        notes=tuple(notes),
        source=f"pstats:{name}",
    )
