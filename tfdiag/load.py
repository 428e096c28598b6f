"""Read a saved report (``.tfdiag.json``) or any pstats dump (``.prof``) back into a Report."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tfdiag.catalog import Rule, default_catalog, normalize_path
from tfdiag.errors import InputError
from tfdiag.probe_data import probes_from_json
from tfdiag.report import SCHEMA_VERSION, CallInfo, Environment, Report, Timing
from tfdiag.stats import MAX_PROF_BYTES, ProfileStats

#: Saved result kinds besides ``profile``: the JSON's ``kind`` → "module:function" that
#: rebuilds the result from the parsed document (imported lazily).
RESULT_KINDS: dict[str, str] = {
    "compare": "tfdiag.compare.result_json:result_from_json",
    "bench": "tfdiag.compare.bench_result:bench_from_json",
    "script": "tfdiag.script.result:result_from_json",
}


def load_result(path: str | os.PathLike[str], *, iterations: int | None = None) -> Any:
    """Any saved tfdiag result (a profile report, or a kind in RESULT_KINDS), or a .prof.

    Every result has ``to_json()`` and renders with rich.
    """
    if not str(path):
        raise InputError("an empty path: name a .tfdiag.json report or a .prof file")
    p = Path(path)
    doc = _peek_json(p)
    kind = doc.get("kind", "profile") if isinstance(doc, dict) else "profile"
    if not isinstance(kind, str):
        raise InputError(f"{p}: not a tfdiag result (kind is not a string)")
    if kind == "profile":
        return load_report(p, iterations=iterations)
    if kind not in RESULT_KINDS:
        raise InputError(f"{p}: unknown result kind {kind!r} (a newer tfdiag?)")
    _check_version(p, doc)
    module, _, func = RESULT_KINDS[kind].partition(":")
    import importlib

    builder = getattr(importlib.import_module(module), func)
    try:
        return builder(doc)
    except InputError as exc:
        raise InputError(f"{p}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise InputError(f"{p}: not a valid {kind} result (wrong shape: {exc!r})") from None


def _peek_json(p: Path) -> Any:
    """The parsed JSON when ``p`` is a readable JSON object file, else None."""
    try:
        if p.is_file() and p.stat().st_size <= MAX_PROF_BYTES:
            data = p.read_bytes()
            if _looks_like_json(data):
                return json.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        pass
    return None


def _check_version(p: Path, doc: dict[str, Any]) -> None:
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise InputError(f"{p}: not a tfdiag result (schema_version is not an integer)")
    if version > SCHEMA_VERSION:
        raise InputError(
            f"{p}: written by a newer tfdiag (schema {version}, this one reads up to "
            f"{SCHEMA_VERSION}); upgrade tfdiag"
        )


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
    if not str(path):
        raise InputError("an empty path: name a .tfdiag.json report or a .prof file")
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if p.is_dir():
        raise InputError(f"{p}: is a folder, not a report or .prof file")
    if iterations is not None and iterations < 1:
        raise InputError(f"iterations must be at least 1, got {iterations}")
    try:
        size = p.stat().st_size
        if size > MAX_PROF_BYTES:
            raise InputError(f"{p}: larger than {MAX_PROF_BYTES // 2**20} MiB")
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if not data.strip():
        raise InputError(f"{p}: empty file")
    if p.name.endswith(".json") or _looks_like_json(data):
        try:
            report = _from_json_bytes(p, data)
        except InputError:
            if p.name.endswith(".json"):
                raise
        else:
            if iterations is not None and iterations != report.timing.iterations:
                raise InputError(
                    f"{p}: --iterations applies to a bare .prof; this report records its own "
                    f"({report.timing.iterations} iterations)"
                )
            return report
    try:
        stats = ProfileStats.from_prof_bytes(data)
    except InputError as exc:
        raise InputError(f"{p}: neither a tfdiag report nor pstats data ({exc})") from None
    return report_from_stats(stats, name=p.name, iterations=iterations)


def _looks_like_json(data: bytes) -> bool:
    """JSON text starts with ``{``; so does a marshal dict, which is not UTF-8 text."""
    try:
        return data.decode("utf-8").lstrip().startswith("{")
    except UnicodeDecodeError:
        return False


def report_from_stats(stats: ProfileStats, *, name: str, iterations: int | None) -> Report:
    """Wrap a bare function table; find the iterations from a Keras step function's calls."""
    catalog = default_catalog()
    entries = [
        (fn, rule)
        for fn in stats.functions
        if (rule := catalog.match(fn.file, fn.name)) is not None and rule.entry
    ]
    entry = max(entries, key=lambda t: t[0].cum_s)[0] if entries else None
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


def _from_json_bytes(p: Path, data: bytes) -> Report:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"{p}: not a valid report (corrupt JSON: {exc})") from None
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise InputError(f"{p}: not a tfdiag report (no schema_version)")
    _check_version(p, doc)
    if doc.get("kind", "profile") != "profile":
        raise InputError(f"{p}: a {doc.get('kind')!r} result, not a profile report")
    try:
        return report_from_json(doc)
    except InputError as exc:
        raise InputError(f"{p}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise InputError(f"{p}: not a valid report (wrong shape: {exc!r})") from None


def report_from_json(doc: dict[str, Any]) -> Report:
    """Rebuild a Report from its JSON object; unknown keys are ignored, missing ones default."""
    call = doc.get("call", {})
    env = doc.get("environment", {})
    timing = doc["timing"]
    profile = doc["profile"]
    if not isinstance(profile, dict) or not isinstance(profile.get("functions"), list):
        raise InputError("not a valid report (profile.functions is missing)")
    iterations = int(timing["iterations"])
    if not 1 <= iterations <= 10**9:
        raise InputError("not a valid report (iterations out of range: 1 to 10**9)")
    return Report(
        call=CallInfo(
            label=str(call.get("label", "")),
            target=str(call.get("target", "")),
            method=str(call.get("method", "")),
            flavour=str(call.get("flavour", "unknown")),
            args=tuple(str(a) for a in call.get("args", ())),
            kwargs=tuple((str(k), str(v)) for k, v in dict(call.get("kwargs", {})).items()),
        ),
        environment=Environment.from_json(env),
        timing=Timing(
            iterations=iterations,
            profiled_calls=int(timing.get("profiled_calls", iterations + 1)),
            first_call_s=_opt_float(timing.get("first_call_s")),
            iteration_s=tuple(float(x) for x in timing.get("iteration_s", ())),
            profiled_iteration_s=tuple(float(x) for x in timing.get("profiled_iteration_s", ())),
        ),
        profile=ProfileStats.from_rows(profile["functions"]),
        cold_profile=_cold(doc.get("cold_profile")),
        rules=tuple(Rule.from_json(r) for r in doc.get("rules", ())),
        notes=tuple(str(n) for n in doc.get("notes", ())),
        created=str(doc.get("created", "")),
        source=str(doc.get("source", "profile")),
        partial=bool(doc.get("partial", False)),
        probes=probes_from_json(doc.get("probes")),
    )


def _cold(value: Any) -> ProfileStats | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("functions"), list):
        raise InputError("not a valid report (cold_profile.functions is missing)")
    return ProfileStats.from_rows(value["functions"])


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)
