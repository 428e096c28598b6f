"""What a ``fit`` profiled by :class:`~tfdiag.capture.callback.ProfileCallback` says in its
report: which batches were profiled, timed and traced (the notes), and the call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tfdiag.capture.environment import flavour_of
from tfdiag.records.catalog.backends import profiler_of
from tfdiag.records.report import CallInfo


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}–{last}"


def batch_notes(
    batches: tuple[int, int],
    *,
    profiled: int,
    timed: int,
    traced: int,
    dropped: int,
    stopped: str | None,
    tf_recorded: bool,
    tf_wanted: bool = False,
    tracer: str | None = None,
) -> list[str]:
    """The notes on a fit's batches ``(first, last)``: ``profiled`` of them ran under cProfile
    (the cold one included), ``timed`` were kept for the timeline (``dropped`` were not),
    ``traced`` ran under ``tracer`` (None: the TF profiler; it recorded something when
    ``tf_recorded``); ``stopped``: why the fit stopped early, if it did; ``tf_wanted``: the
    tracer was to trace the batches after ``last``."""
    first, last = batches
    done = first + profiled - 1
    notes = [
        f"iterations are training batches {first + 1}–{done} of this fit, batch {first} "
        "is shown as the first call",
    ]
    if timed:
        before = min(timed, first - 1)
        after = timed - before
        start = last + 1 + traced
        spans = [_span(1, before)] if before else []
        spans += [_span(start, start + after - 1)] if after else []
        notes.append(
            f"the timeline is batches {' and '.join(spans)}, timed with no profiler attached "
            f"(numbered 1–{timed} there)"
        )
    if stopped:
        notes.append(stopped)
    if done < last:
        notes.append(f"fit ended after batch {done}, before batch {last}")
    if tf_wanted and not traced:
        end = min(done, last)
        example = f" (`batches=(10, {min(end // 2, 40)})`)" if end >= 40 else ""
        notes.append(
            f"no batch ran after batch {end} for the {tracer or profiler_of(None)} to trace, "
            "so the step's waits for its input were not measured (input-bound cannot be told from "
            f"compute): end `batches=` earlier than the fit's last batch{example}"
        )
    if profiled - 1 < 3:
        notes.append("fewer than 3 steady batches: build and per-iteration cost blur")
    if dropped:
        notes.append(f"the last {dropped} batch times were not kept")
    if traced:
        notes.append(
            f"batches {_span(last + 1, last + traced)} ran under the {tracer or profiler_of(None)}"
            + ("" if tf_recorded else ", which recorded nothing")
            + ", and are left out of the timeline"
        )
    return notes


def fit_call(
    model: Any,
    batches: tuple[int, int],
    params: Mapping[str, Any],
    facts: tuple[tuple[str, str], ...],
    line: tuple[str, int, str],
) -> CallInfo:
    """The ``fit`` of ``model`` made at ``line`` (file, number, code), as the report names it."""
    cls = type(model)
    first, last = batches
    kwargs = [("batches", f"{first}–{last}")]
    kwargs += [(k, str(params[k])) for k in ("epochs", "steps") if k in params]
    return CallInfo(
        label=f"{cls.__name__}.fit",
        target=f"{cls.__module__}.{cls.__qualname__}.fit",
        method="fit",
        flavour=flavour_of(model),
        kwargs=tuple(kwargs),
        facts=facts,
        file=line[0],
        line=line[1],
        code=line[2],
    )
