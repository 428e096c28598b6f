"""Which fixes verification measures on which Keras backend, on a fake ``keras`` module: no
TensorFlow, no JAX. A TensorFlow rewrite with a JAX twin (``tf.function`` ↔ a ``jax.jit`` of
``stateless_call``) is not named on JAX, and the twin is not named on TensorFlow."""

from __future__ import annotations

import sys
import types

import pytest

from tfdiag.measure.verify.table import FIXES
from tfdiag.measure.verify.variant import INFERENCE, Variant


def _on(monkeypatch: pytest.MonkeyPatch, backend: str | None) -> None:
    if backend is None:
        monkeypatch.delitem(sys.modules, "keras", raising=False)
        return
    keras = types.ModuleType("keras")
    keras.backend = types.SimpleNamespace(backend=lambda: backend)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "keras", keras)


def _variant(backends: set[str], twin: str | None = None) -> Variant:
    return Variant(
        "v",
        INFERENCE,
        lambda call: None,
        lambda call: None,  # type: ignore[arg-type, return-value]
        backends=frozenset(backends),
        twin=twin,
    )


def test_a_tensorflow_rewrite_with_a_twin_is_silent_on_jax_and_measured_on_tensorflow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tf_only, jax_only = _variant({"tensorflow"}, "j"), _variant({"jax"}, "t")
    _on(monkeypatch, "jax")
    assert tf_only.elsewhere() and not jax_only.elsewhere()
    assert jax_only.why_not(None) is None  # type: ignore[arg-type]
    for backend in ("tensorflow", None):  # tf_keras alone runs on TensorFlow
        _on(monkeypatch, backend)
        assert not tf_only.elsewhere() and jax_only.elsewhere()
        assert tf_only.why_not(None) is None  # type: ignore[arg-type]
        assert "built for Keras' jax backend" in (jax_only.why_not(None) or "")  # type: ignore[arg-type]


def test_a_rewrite_without_a_twin_says_it_is_not_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _on(monkeypatch, "jax")
    lone = _variant({"tensorflow"})
    assert not lone.elsewhere()
    assert "not measured on Keras' jax backend yet" in (lone.why_not(None) or "")  # type: ignore[arg-type]


def test_every_twin_in_the_fixes_table_sits_beside_its_counterpart() -> None:
    for finding, variants in FIXES.items():
        names = {v.name: v for v in variants}
        for v in variants:
            if v.twin is None:
                continue
            other = names.get(v.twin)
            assert other is not None, (finding, v.name, v.twin)
            assert other.twin == v.name and not (other.backends & v.backends)


def test_on_each_backend_the_inference_pipeline_fix_has_one_compiled_forward_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for backend, expected, other in (
        ("jax", "jit stateless_call", "tf.function"),
        ("tensorflow", "tf.function", "jit stateless_call"),
    ):
        _on(monkeypatch, backend)
        kept = [v.name for v in FIXES["per-call-input-pipeline"] if not v.elsewhere()]
        assert expected in kept and other not in kept


def test_every_finding_has_a_fix_to_measure_or_a_reason_for_none() -> None:
    """`verify=True` says of each finding what it measured or why it measured nothing: a
    finding in neither table would read as "no mechanical fix" by accident."""
    from tfdiag.advise.table import FINDINGS
    from tfdiag.measure.verify.table import NO_FIX

    ids = {spec.id for spec in FINDINGS}
    assert ids - set(FIXES) - set(NO_FIX) == set()
    assert set(FIXES) & set(NO_FIX) == set(), "a finding with fixes has no reason for none"
    assert (set(FIXES) | set(NO_FIX)) - ids == set(), "an entry for a finding that is gone"
