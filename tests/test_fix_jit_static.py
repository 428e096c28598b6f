"""The ``jit-static`` edit on source text (libcst, no JAX): a ``jax.jit`` static argument
whose value changes on every call is taken out of ``static_argnums``/``static_argnames``
where the function is jitted; refused where the body reads it as a Python value."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfdiag.fix.edits import Edit, Files, NoEdit, Target, kind_for
from tfdiag.fix.patch import unified_diff

REMEDY = "per-iteration-tracing:jax:static"


def _target(def_line: int, argument: str = "scale", function: str = "step") -> Target:
    return Target(
        "per-iteration-tracing",
        REMEDY,
        evidence=(
            f"JAX compiled `{function}` (train.py:{def_line}) 29× during the script, 0.2 s "
            "each (trace, lowering, XLA compile): 91 % of the script's wall time",
            f"`{argument}` is a static argument (`static_argnums`/`static_argnames`) whose "
            "value changes: 0.05, 0.03 — each new value compiles anew",
        ),
    )


def _edit(tmp_path: Path, code: str, target: Target) -> Edit | NoEdit:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    kind = kind_for(target.remedy)
    assert kind is not None and kind.name == "jit-static"
    return kind.edit(Files(tmp_path, (path,)), target)


def _changed(e: Edit | NoEdit) -> list[str]:
    assert isinstance(e, Edit), e
    diff = unified_diff(e.before, e.after, "train.py").splitlines()
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


DECORATED = """\
from functools import partial

import jax


@partial(jax.jit, static_argnums=(1,))  # the schedule reads a Python step size
def step(w, scale):
    return w - scale * w


for i in range(30):
    w = step(w, 0.1 / (1 + i))
"""


def test_a_partial_jit_decorator_becomes_jax_jit_keeping_the_comment(tmp_path: Path) -> None:
    assert _changed(_edit(tmp_path, DECORATED, _target(6))) == [
        "-@partial(jax.jit, static_argnums=(1,))  # the schedule reads a Python step size",
        "+@jax.jit  # the schedule reads a Python step size",
    ]


@pytest.mark.parametrize(
    ("jit", "expected"),
    [
        ("jax.jit(step, static_argnums=(1, 2))", "jax.jit(step, static_argnums=(2,))"),
        ("jax.jit(step, static_argnums=1)", "jax.jit(step)"),
        ("jax.jit(step, static_argnames=('scale',))", "jax.jit(step)"),
        (
            "jax.jit(step, static_argnames='scale', donate_argnums=0)",
            "jax.jit(step, donate_argnums=0)",
        ),
        ("partial(jax.jit, static_argnums=1)(step)", "partial(jax.jit)(step)"),
    ],
)
def test_a_jit_call_loses_the_argument_and_nothing_else(
    tmp_path: Path, jit: str, expected: str
) -> None:
    code = f"""\
from functools import partial

import jax


def step(w, scale, mode):
    return w - scale * w


update = {jit}
for i in range(30):
    w = update(w, 0.1 / (1 + i), 0)
"""
    assert _changed(_edit(tmp_path, code, _target(6))) == [
        f"-update = {jit}",
        f"+update = {expected}",
    ]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("    if scale > 0.05:\n        w = w * 2\n    return w", "an `if` test"),
        ("    for _ in range(scale):\n        w = w * 2\n    return w", "`range(...)`"),
    ],
)
def test_an_argument_the_body_reads_as_a_python_value_stays_static(
    tmp_path: Path, body: str, why: str
) -> None:
    code = DECORATED.replace("    return w - scale * w", body)
    e = _edit(tmp_path, code, _target(6))
    assert isinstance(e, NoEdit) and why in e.reason and "as a Python value" in e.reason


def test_a_computed_static_argnums_is_not_read(tmp_path: Path) -> None:
    code = DECORATED.replace("static_argnums=(1,)", "static_argnums=STATIC")
    e = _edit(tmp_path, code, _target(6))
    assert isinstance(e, NoEdit) and "is not a literal" in e.reason


def test_no_static_argument_named_no_edit(tmp_path: Path) -> None:
    e = _edit(tmp_path, DECORATED, Target("per-iteration-tracing", REMEDY, evidence=()))
    assert isinstance(e, NoEdit) and "names no static argument" in e.reason
    e = _edit(tmp_path, DECORATED.replace("(1,)", "(0,)"), _target(6))
    assert isinstance(e, NoEdit) and "makes `scale` static" in e.reason


# -- jax-jit: an eager JAX step → @jax.jit ---------------------------------------------------

STEP = """\
import jax


def train_step(trainable, x):
    loss, grads = grad_fn(trainable, x)
    return loss, [w - 0.05 * g for w, g in zip(trainable, grads)]


for _ in range(60):
    loss, trainable = train_step(trainable, x)
"""


def _step_target(line: int = 5) -> Target:
    return Target("eager-execution", "eager:jit", line=line, function="train_step")


def _step_edit(tmp_path: Path, code: str, target: Target) -> Edit | NoEdit:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    t = Target(**{**target.__dict__, "file": str(path)})
    kind = kind_for(t.remedy)
    assert kind is not None and kind.name == "jax-jit"
    return kind.edit(Files(tmp_path, (path,)), t)


def test_an_eager_jax_step_gets_jax_jit_on_its_function(tmp_path: Path) -> None:
    assert _changed(_step_edit(tmp_path, STEP, _step_target())) == ["+@jax.jit"]
    assert kind_for("eager:jit-step").name == "jax-jit"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (("    return loss,", "    print(loss)\n    return loss,"), "`print(...)`"),
        (("    return loss,", "    model.w.assign(loss)\n    return loss,"), "`.assign(...)`"),
        (("    return loss,", "    state.last = loss\n    return loss,"), "an assignment to an"),
        (("    return loss,", "    n = float(loss)\n    return loss,"), "`float(...)`"),
        (
            ("    return loss, [w - 0.05 * g for w, g in zip(trainable, grads)]", "    pass"),
            "returns nothing",
        ),
        (("def train_step", "@jax.jit\ndef train_step"), "jitted already"),
        (("import jax\n", "from jax import grad\n"), "does not `import jax`"),
    ],
)
def test_a_step_a_trace_would_change_is_not_jitted(
    tmp_path: Path, change: tuple[str, str], why: str
) -> None:
    code = STEP.replace(*change)
    target = _step_target(line=6 if "@jax.jit" in change[1] else 5)
    e = _step_edit(tmp_path, code, target)
    assert isinstance(e, NoEdit) and why in e.reason, e
