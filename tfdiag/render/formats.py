"""The output formats: one table, keyed by result kind.

Every way a result leaves tfdiag is a row here: the console view as text, JSON,
pstats for snakeviz, CSV, the HTML page, the timeline PNG, the sampling probe's files. ``show()``,
``save()``, the CLI's ``--format`` and notebook display all look formats up in this
table; no result imports a renderer. A row names its result kind (``profile``,
``compare``, ``bench``, ``script``, ``job``, ``diff``), the file suffixes that pick it in
``save()``, and the function that writes it.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfdiag.records.errors import InputError

if TYPE_CHECKING:
    from rich.console import RenderableType

#: Width of the text format when none is asked for (a terminal's own width is used by show()).
TEXT_WIDTH = 100

#: The console view of each result kind (``show()``, ``--format text``, notebooks), as
#: ``"module:function"``: each writer's module is imported when it first writes, so showing
#: a report loads neither the compare, bench, job and script views nor the HTML page.
VIEWS: Mapping[str, str] = {
    "profile": "tfdiag.render.console:render_report",
    "compare": "tfdiag.render.compare_console:render_compare",
    "bench": "tfdiag.render.bench_console:render_bench",
    "script": "tfdiag.render.script_console:render_script",
    "job": "tfdiag.render.job_console:render_job",
    "diff": "tfdiag.render.diff_console:render_diff",
}

#: The short console view of the kinds that have one (``--brief``, ``show(brief=True)``, what
#: ``%tfdiag`` shows): the findings only.
BRIEF_VIEWS: Mapping[str, str] = {"profile": "tfdiag.render.console:render_brief"}

#: The JSON document of each result kind: raw records plus derived views.
DOCUMENTS: Mapping[str, str] = {
    "profile": "tfdiag.render.json:report_to_json",
    "compare": "tfdiag.render.compare_json:result_to_json",
    "bench": "tfdiag.render.bench_files:bench_to_json",
    "script": "tfdiag.render.script_json:script_to_json",
    "job": "tfdiag.render.job_json:job_to_json",
    "diff": "tfdiag.render.diff_json:diff_to_json",
}

#: The kinds whose views and documents take the result's diagnosis (computed once per
#: result: ``Report.diagnosis``) rather than the result itself.
_DIAGNOSED = frozenset({"profile"})


def writer(ref: str) -> Callable[..., Any]:
    """The function ``"module:function"`` names, its module imported on first use."""
    module, _, name = ref.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found


def subject(result: Any) -> Any:
    """What the views and documents of ``result``'s kind take: a report's diagnosis, any
    other result itself."""
    return result.diagnosis if result.kind in _DIAGNOSED else result


@dataclass(frozen=True)
class Options:
    """How to write: the text width (``None``: :data:`TEXT_WIDTH`); ``brief``: the short
    view (:data:`BRIEF_VIEWS`) where the kind has one."""

    width: int | None = None
    brief: bool = False


@dataclass(frozen=True)
class Format:
    """One output format of one result kind.

    Attributes:
        name: what ``--format`` takes.
        kind: the result kind it writes.
        write: ``write(result, options)`` → text or bytes.
        suffixes: a ``save()`` path ending in one of these is written in this format.
        binary: the output is bytes (never printed to a terminal).
        about: one line for ``--help`` and the docs.
    """

    name: str
    kind: str
    write: Callable[[Any, Options], str | bytes]
    suffixes: tuple[str, ...] = ()
    binary: bool = False
    about: str = ""


def view(result: Any, brief: bool = False) -> RenderableType:
    """The console view of ``result`` (its short one when ``brief`` and it has one); every
    string in it is shown as text (no markup, no control characters:
    :class:`tfdiag.render.safe.Plain`)."""
    from tfdiag.render.safe import Plain

    views = BRIEF_VIEWS if brief and result.kind in BRIEF_VIEWS else VIEWS
    return Plain(writer(views[result.kind])(subject(result)))


def document(result: Any) -> dict[str, Any]:
    doc: dict[str, Any] = writer(DOCUMENTS[result.kind])(subject(result))
    return doc


def _text(result: Any, options: Options) -> str:
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, width=options.width or TEXT_WIDTH, color_system=None)
    console.print(view(result, options.brief))
    return out.getvalue()


def _json(result: Any, options: Options) -> str:
    if result.kind == "profile":  # its function tables written by the fast encoder
        from tfdiag.render.json import report_json_text

        return report_json_text(result.diagnosis) + "\n"
    from tfdiag.records.jsontext import indented_json

    return indented_json(document(result)) + "\n"


def _pstats(result: Any, options: Options) -> bytes:
    return bytes(result.profile.to_prof_bytes())


def _png(result: Any, options: Options) -> bytes:
    from tfdiag.render.plot import timeline_png

    return timeline_png(result.diagnosis)


def _session(result: Any, options: Options) -> str:
    import json

    from tfdiag.render.artefacts import sampling_session

    doc = sampling_session(result)
    if doc is None:
        raise InputError("this report has no sampled stacks (profile it with sampling=True)")
    return json.dumps(doc)


def _sampled(render: str) -> Callable[[Any, Options], str]:
    def write(result: Any, options: Options) -> str:
        from tfdiag.render.artefacts import sampling_session

        if sampling_session(result) is None:
            raise InputError("this report has no sampled stacks (profile it with sampling=True)")
        text: str = writer(render)(result)
        return text

    return write


def _html(result: Any, options: Options) -> str:
    from tfdiag.render.html import report_html, result_html

    if result.kind == "profile":
        return report_html(result.diagnosis)
    return result_html(result, writer(VIEWS[result.kind])(result))


def _csv(result: Any, options: Options) -> str:
    from tfdiag.render.bench_files import bench_to_csv

    return bench_to_csv(result)


_JSON_SUFFIXES = (".tfdiag.json", ".json")

FORMATS: tuple[Format, ...] = (
    *(
        Format("text", kind, _text, (".txt",), about="the console view as plain text")
        for kind in VIEWS
    ),
    *(
        Format("json", kind, _json, _JSON_SUFFIXES, about="raw records plus derived views")
        for kind in DOCUMENTS
    ),
    *(
        Format("html", kind, _html, (".html",), about="one self-contained page (offline)")
        for kind in VIEWS
    ),
    Format("pstats", "profile", _pstats, (".prof", ".pstats"), binary=True, about="for snakeviz"),
    Format("png", "profile", _png, (".png",), binary=True, about="the iteration timeline plot"),
    Format(
        "pyisession", "profile", _session, (".pyisession",), about="pyinstrument --load (sampling)"
    ),
    Format(
        "speedscope",
        "profile",
        _sampled("tfdiag.render.artefacts:speedscope_json"),
        (".speedscope.json",),
        about="https://www.speedscope.app (sampling)",
    ),
    Format(
        "sampling-html",
        "profile",
        _sampled("tfdiag.render.artefacts:pyinstrument_html"),
        (".sampling.html",),
        about="pyinstrument's HTML page (sampling)",
    ),
    Format("csv", "bench", _csv, (".csv",), about="one row per cell, for a spreadsheet"),
)

#: Every format name, for ``--format`` (which ones apply depends on the result).
NAMES: tuple[str, ...] = tuple(dict.fromkeys(f.name for f in FORMATS))


def formats_for(kind: str) -> tuple[Format, ...]:
    return tuple(f for f in FORMATS if f.kind == kind)


def format_named(kind: str, name: str) -> Format:
    """The format ``name`` of ``kind``.

    Raises:
        InputError: ``name`` is not a format of ``kind``.
    """
    for f in FORMATS:
        if f.kind == kind and f.name == name:
            return f
    known = ", ".join(f.name for f in formats_for(kind))
    raise InputError(f"--format {name} does not apply to a {kind} result (it has: {known})")


def format_for_path(kind: str, path: str | Path) -> Format | None:
    """The format a ``save()`` path names by its suffix (the longest that matches), or None."""
    name = Path(path).name.lower()
    best: tuple[int, Format] | None = None
    for f in formats_for(kind):
        for suffix in f.suffixes:
            if name.endswith(suffix) and len(name) > len(suffix):
                if best is None or len(suffix) > best[0]:
                    best = (len(suffix), f)
    return best[1] if best else None


def write(result: Any, name: str, *, width: int | None = None, brief: bool = False) -> str | bytes:
    """``result`` in format ``name``."""
    return format_named(result.kind, name).write(result, Options(width=width, brief=brief))
