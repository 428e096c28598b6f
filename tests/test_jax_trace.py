"""The JAX profiler's trace without JAX: a synthetic XSpace (encoded here in protobuf's wire
format, shaped like jax 0.10's: tfdiag-step annotations on the Python thread, XLA ops with an
``hlo_op`` stat on the PjRt CPU client's threads, an ``Hlo Proto`` per module on the
metadata plane) read into a JaxProfile, its JSON, and compute-bound on JAX from it."""

from __future__ import annotations

import dataclasses

import pytest
from synth import SITE, Node, make_report

from tfdiag.advise.diagnosis import diagnose
from tfdiag.analysis.xspace import XspaceFormatError, jax_profile_from_xspaces, layer_of
from tfdiag.records.jax_profile import JaxProfile, XlaOp
from tfdiag.records.probes import Probes, probes_from_json, probes_to_json
from tfdiag.records.report import Environment

MS = 10**9  # picoseconds


def _varint(v: int) -> bytes:
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def f(num: int, value: int | bytes | str) -> bytes:
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(num << 3 | 2) + _varint(len(data)) + data


def _map(num: int, key: int, value: bytes) -> bytes:
    return f(num, f(1, key) + f(2, value))


def _hlo() -> bytes:
    """Module jit_step: a fusion whose root is a pooling (its own op_name) fusing a
    convolution (computation 7), and a plain dot with no metadata."""
    meta = lambda name: f(7, f(2, name))  # noqa: E731
    conv = (
        f(1, "convolution.3") + f(2, "convolution") + meta("jit(step)/conv2d/conv_general_dilated")
    )
    pool = f(1, "reduce.2") + f(2, "reduce") + meta("jit(step)/pool/reduce_sum")
    conv2 = f(1, "convolution.4") + f(2, "convolution")
    conv2 += meta("jit(step)/conv2d_1/conv_general_dilated")
    fused = f(1, "fused") + f(5, 7) + f(2, conv) + f(2, pool) + f(2, conv2)
    fusion = f(1, "ynn_fusion") + f(2, "fusion") + meta("jit(step)/pool/reduce_sum") + f(38, 7)
    dot = f(1, "dot.1") + f(2, "dot")
    entry = f(1, "main") + f(5, 1) + f(2, fusion) + f(2, dot)
    return f(1, f(1, "jit_step") + f(2, "main") + f(3, entry) + f(3, fused))


def _xspace() -> bytes:
    stats = _map(5, 1, f(1, 1) + f(2, "hlo_op")) + _map(5, 2, f(1, 2) + f(2, "hlo_module"))
    stats += _map(5, 3, f(1, 3) + f(2, "program_id"))
    events = b"".join(
        _map(4, i, f(1, i) + f(2, name))
        for i, name in (
            (1, "tfdiag-step"),
            (2, "ynn_fusion"),
            (3, "dot.1"),
            (4, "PjitFunction(step)"),
            (5, "end: dot.1"),
        )
    )

    def op(meta: int, start_ms: float, dur_ms: float) -> bytes:
        s = f(4, f(1, 1) + f(5, "x")) + f(4, f(1, 2) + f(5, "jit_step")) + f(4, f(1, 3) + f(3, 9))
        return f(4, f(1, meta) + f(2, int(start_ms * MS)) + f(3, int(dur_ms * MS)) + s)

    def ev(meta: int, start_ms: float, dur_ms: float) -> bytes:
        return f(4, f(1, meta) + f(2, int(start_ms * MS)) + f(3, int(dur_ms * MS)))

    # two 10 ms steps at 0 and 20 ms; a call into the program in each
    python = f(2, "python") + f(3, 0) + ev(1, 0, 10) + ev(1, 20, 10) + ev(4, 1, 8) + ev(4, 21, 8)
    # thread A: the fusion 2-6 ms and 22-26 ms; an op at 12-14 ms is between the steps
    a = f(2, "tf_XLAPjRtCpuClient/1") + f(3, 0) + op(2, 2, 4) + op(2, 22, 4) + op(3, 12, 2)
    # thread B: the dot 5-7 ms, overlapping A by 1 ms; its "end:" marker is not an op
    b = f(2, "tf_XLAEigen/2") + f(3, 0) + op(3, 5, 2) + ev(5, 7, 0.1)
    host = f(2, "/host:CPU") + stats + events + f(3, python) + f(3, a) + f(3, b)
    meta_plane = (
        f(2, "/host:metadata")
        + _map(5, 1, f(1, 1) + f(2, "Hlo Proto"))
        + _map(4, 1, f(1, 1) + f(2, "jit_step(9)") + f(5, f(1, 1) + f(6, _hlo())))
    )
    return f(1, meta_plane) + f(1, host)


def test_the_trace_gives_steps_xla_time_and_the_split() -> None:
    p = jax_profile_from_xspaces([_xspace()], (0.011, 0.012), export_s=0.01)
    assert p.steps == 2
    assert p.step_s == pytest.approx((0.010, 0.010))
    # ops inside the steps: fusion 4 + 4 ms, dot 2 ms; 1 ms of them overlap across threads
    assert p.xla_op_s == pytest.approx(0.010)
    assert p.xla_busy_s == pytest.approx(0.009)
    assert p.python_s == pytest.approx(0.011)
    assert p.jit_calls == (("step", 2, pytest.approx(0.016)),)
    assert p.op_count == 2


def test_an_op_is_named_by_the_heaviest_instruction_it_fuses() -> None:
    p = jax_profile_from_xspaces([_xspace()], (0.01,))
    fusion, dot = p.ops
    assert (fusion.name, fusion.category, fusion.occurrences) == ("ynn_fusion", "convolution", 2)
    assert fusion.op_name == "jit(step)/conv2d/conv_general_dilated"  # not the pooling root's
    assert fusion.layers == ("conv2d", "conv2d_1")  # two layers fused into one op
    assert (dot.category, dot.op_name, dot.layers) == ("dot", "", ())
    assert layer_of(fusion.op_name) == "conv2d"
    assert layer_of("jit(predict_step)/conv2d/jit(relu)/max") == "conv2d"
    assert layer_of("jit(train_step)/jvp(functional)/block/dense_2/dot_general") == "dense_2"
    assert layer_of("") == ""


@pytest.mark.parametrize("data", [b"\x0a\xff", b"\x0b", _xspace()[:-3]])
def test_a_truncated_or_garbled_trace_is_one_error(data: bytes) -> None:
    with pytest.raises(XspaceFormatError):
        jax_profile_from_xspaces([data], ())


def test_a_trace_without_steps_is_an_error() -> None:
    with pytest.raises(XspaceFormatError, match="tfdiag-step"):
        jax_profile_from_xspaces([f(1, f(2, "/host:CPU"))], ())


def _profile(busy_s: float, wall_s: float = 0.01) -> JaxProfile:
    ops = (
        XlaOp(
            "ynn_fusion.1",
            "jit_predict_step",
            "convolution",
            "jit(predict_step)/conv2d/c",
            2,
            busy_s * 1.5,
        ),
        XlaOp(
            "fusion.2", "jit_predict_step", "fusion", "jit(predict_step)/dense/add", 2, busy_s * 0.3
        ),
        XlaOp("ynn.3", "jit_predict_step", "convolution", "", 2, busy_s * 0.2, ("c1", "c2", "c3")),
    )
    return JaxProfile(2, (wall_s, wall_s), (wall_s, wall_s), busy_s * 2, busy_s * 2, ops, 2)


def test_the_record_survives_json() -> None:
    probes = Probes(jax_profile=_profile(0.004))
    back = probes_from_json(probes_to_json(probes))
    assert back is not None and back.jax_profile == probes.jax_profile
    assert probes_from_json({"sampling": None, "tf_profile": None}) == Probes()  # older reports


N = 5
TRAINER = SITE + "keras/src/backend/jax/trainer.py"
JAX_ENV = Environment(
    python="3.11", backend="jax", versions={"keras": "3.15.1", "jax": "0.10.2", "jaxlib": "0.10.2"}
)


def _traced_predict(trace: JaxProfile | None) -> list[tuple[str, float, tuple[str, ...]]]:
    """A Keras-on-JAX predict whose cProfile shows no compute (all in Keras' Python), so any
    compute-bound comes from the trace."""

    def tree(n: int) -> Node:
        step = Node(TRAINER, "JAXTrainer._make_function.<locals>.iterator_step", 0.0001 * n, n)
        return Node(TRAINER, "JAXTrainer.predict", 0.0099 * n, n, [step])

    report = make_report([tree(N + 1)], N, cold=[tree(1)], iteration_s=(0.01,) * N)
    record = dataclasses.replace(
        report,
        environment=JAX_ENV,
        probes=Probes(jax_profile=trace) if trace is not None else None,
    )
    return [(x.id, x.impact, x.evidence) for x in diagnose(record).findings]


def test_compute_bound_on_jax_reads_the_trace_and_names_the_layers() -> None:
    found = {i: (impact, ev) for i, impact, ev in _traced_predict(_profile(0.009))}
    impact, evidence = found["compute-bound"]
    assert impact == pytest.approx(0.9)
    assert evidence[0] == (
        "JAX profiler: XLA ran the model's ops 9 ms of 10 ms per traced iteration (90 %); "
        "Python around them (Keras, dispatch, waits) 10 %"
    )
    assert "`conv2d` convolution (ynn_fusion.1) 75 %" in evidence[1]
    assert "`dense` fusion (fusion.2) 15 %" in evidence[1]
    assert "`c1` … `c3` (3 layers) convolution (ynn.3) 10 %" in evidence[1]


def test_compute_bound_on_jax_is_not_found_when_the_trace_shows_python() -> None:
    assert "compute-bound" not in [i for i, _, _ in _traced_predict(_profile(0.002))]
    assert "compute-bound" not in [i for i, _, _ in _traced_predict(None)]  # cProfile: no wait


def test_per_call_set_up_on_jax_gives_the_split_from_the_trace() -> None:
    found = {i: ev for i, _, ev in _traced_predict(_profile(0.002))}
    assert "per-call-input-pipeline" in found, list(found)
    assert (
        "JAX profiler: XLA ran 20 % of the traced calls' wall time, Python and Keras around it 80 %"
    ) in found["per-call-input-pipeline"]
    untraced = {i: ev for i, _, ev in _traced_predict(None)}
    assert not any("JAX profiler" in e for e in untraced["per-call-input-pipeline"])
