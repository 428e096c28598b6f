"""``tfdiag run`` of a script whose own ``jax.jit`` step recompiles: no Keras call site
sees it (a jitted function is no Keras method), so the script's compilations, recorded for
the whole run, make the finding, at the line that calls the function. Synthetic records,
no JAX."""

from __future__ import annotations

import pytest
from synth import SITE

from tfdiag.advise.script import script_findings
from tfdiag.records.jit import JitCompile
from tfdiag.records.lines import LinePlace, LinesRecord
from tfdiag.records.script import ScriptRecord

USER = "/home/me/train.py"
MISS = (SITE + "jax/_src/pjit.py", 250, "_cpp_pjit.<locals>.cache_miss")
CODE = "w = step(w, 0.1 / (1 + i))"


def _script(compiles: tuple[JitCompile, ...], wall_s: float = 10.0) -> ScriptRecord:
    lines = LinesRecord(
        interval_s=0.005,
        samples=100,
        places=(LinePlace(USER, 17, (USER, 1, "<module>"), MISS, MISS, 90, 9.0, 90),),
        source=((USER, 17, CODE),),
    )
    return ScriptRecord("train.py", (), wall_s, "ok", (), 10, lines=lines, jit_compiles=compiles)


def _static(n: int, name: str = "step", file: str = USER, seconds: float = 0.3) -> tuple:
    first = JitCompile(0, name, file, 9, 0.01, 0.01, seconds, "first")
    return (first,) + tuple(
        JitCompile(0, name, file, 9, 0.01, 0.01, seconds, "static", "scale", str(i), "0")
        for i in range(n)
    )


def test_a_jitted_step_recompiled_for_each_static_value_is_the_scripts_first_finding() -> None:
    (sf,) = script_findings(_script(_static(29)))
    f = sf.finding
    assert sf.site is None and f.id == "per-iteration-tracing" and f.severity == "high"
    assert f.remedy == "per-iteration-tracing:jax:static"
    assert f.evidence[0].startswith(f"line train.py:17 `{CODE}` runs a jitted function")
    assert "JAX compiled `step` (train.py:9) 29× during the script" in f.evidence[1]
    assert sf.share == pytest.approx(29 * 0.32 / 10.0, rel=1e-3)
    assert "`scale` is a static argument" in f.fix and "static_argnums" in f.fix
    assert f.line is not None and f.line.line == 17


@pytest.mark.parametrize(
    ("compiles", "why"),
    [
        (_static(3), "a few compiles: warm-up, not recompiling"),
        (_static(29, seconds=0.001), "cheap compiles: under the share"),
        (_static(29, name="true_divide", file=""), "a jnp op per new shape, not the user's"),
        (
            _static(29, name="train_step", file=SITE + "keras/src/backend/jax/trainer.py"),
            "Keras' own step: its call site's",
        ),
    ],
)
def test_what_is_not_a_recompiling_step_of_the_users(compiles: tuple, why: str) -> None:
    assert not [sf for sf in script_findings(_script(compiles)) if sf.site is None], why


def test_a_step_of_the_users_named_as_keras_names_its_own_is_the_users() -> None:
    (sf,) = script_findings(_script(_static(29, name="train_step")))
    assert sf.finding.remedy == "per-iteration-tracing:jax:static"


def test_a_function_jitted_anew_each_time_is_told_to_jit_it_once() -> None:
    compiles = tuple(JitCompile(0, "step", USER, 9, 0.01, 0.01, 0.3, "first") for _ in range(20))
    (sf,) = script_findings(_script(compiles))
    assert sf.finding.remedy == "per-iteration-tracing:jax:new-function"
    assert "jit it once, outside the loop" in sf.finding.fix


def test_the_scripts_compilations_survive_its_json() -> None:
    from tfdiag.render.script_json import script_to_json
    from tfdiag.results.load import RESULT_KINDS

    record = _script(_static(5))
    doc = script_to_json(record)
    assert RESULT_KINDS["script"](doc).jit_compiles == record.jit_compiles
    del doc["jit_compiles"]  # a report from before: none
    assert RESULT_KINDS["script"](doc).jit_compiles == ()
