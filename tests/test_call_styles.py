"""The same program gets the same first finding whichever way its user runs tfdiag:
``tfdiag.profile``, ``ProfileCallback`` inside ``fit``, ``tfdiag run`` on the script —
custom training loops included. One test per program and call style, on the corpus's
programs that exist in several styles (corpus/cases/_*_program.py); the premises are
measured in tests/test_corpus.py."""

from __future__ import annotations

import gc
import sys

import pytest

from corpus.harness import diagnose, load_cases

pytestmark = pytest.mark.tf

STYLES = {
    # program: (the finding each style must put first, its cases)
    "sequence-decode": ("input-bound", ("profile", "callback", "run")),
    "eager-loop": ("eager-execution", ("profile", "run")),
    "xla-compile-new-shape": ("xla-compile-per-shape", ("", "run")),
    # compile() / clone_model between the calls: inside the profiled call for profile(),
    # outside the call site for run (which sees the model's step function gone).
    "compile-per-epoch-cyclic-lr": ("model-rebuilt-per-call", ("", "run")),
    "clone-snapshot-per-round": ("model-rebuilt-per-call", ("", "run")),
}
SLOW = frozenset({"sequence-decode", "compile-per-epoch-cyclic-lr", "clone-snapshot-per-round"})
PARAMS = [
    pytest.param(
        program,
        style,
        marks=[pytest.mark.slow] if program in SLOW else [],
        id=f"{program}-{style or 'profile'}",
    )
    for program, (_, styles) in STYLES.items()
    for style in styles
]


@pytest.mark.parametrize(("program", "style"), PARAMS)
def test_each_call_style_gets_the_programs_first_finding(program: str, style: str) -> None:
    (loaded,) = load_cases([f"{program}-{style}" if style else program])
    state = loaded.setup()
    try:
        report = diagnose(loaded, state)
        assert report is not None, f"{program} through {style}: no report"
        first = report.findings[0].id if report.findings else None
        assert first == STYLES[program][0], (style, [f.id for f in report.findings])
    finally:
        del state
        for name in ("keras", "tf_keras"):
            module = sys.modules.get(name)
            if module is not None:
                module.backend.clear_session()
        gc.collect()
