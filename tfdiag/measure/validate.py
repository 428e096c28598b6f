"""Checks on what :func:`tfdiag.compare` is given: one clear InputError per problem."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tfdiag.capture.environment import flavour_of, running_backend
from tfdiag.measure.methods import (
    BASELINES,
    INFERENCE,
    KINDS,
    METHODS,
    TRAINING,
    Method,
    method_named,
)
from tfdiag.measure.methods_jax import JAX_METHODS
from tfdiag.measure.subject import is_compiled, leaves, serializing_without_tensorflow
from tfdiag.records.catalog.backends import DEFAULT, JAX
from tfdiag.records.compare import Settings
from tfdiag.records.errors import InputError

FLAVOURS = ("keras3", "tf_keras")
#: Most warm-up calls or timed blocks per method (the CLI allows 1,000).
MAX_REPEATS = 10_000


def settings_from(
    batch_size: int,
    warmup: int,
    repeats: int,
    min_block_s: float,
    rtol: float,
    atol: float,
    loss_rise: float,
) -> Settings:
    for name, value, high in (
        ("batch_size", batch_size, 10**7),
        ("warmup", warmup, MAX_REPEATS),
        ("repeats", repeats, MAX_REPEATS),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{name} must be an integer of at least 1, got {value!r}")
        if value > high:
            raise InputError(f"{name} must be at most {high:,}, got {value:,}")
    for name, number in (
        ("min_block_s", min_block_s),
        ("rtol", rtol),
        ("atol", atol),
        ("loss_rise", loss_rise),
    ):
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not number >= 0:
            raise InputError(f"{name} must be a number ≥ 0, got {number!r}")
    return Settings(warmup, repeats, float(min_block_s), batch_size, rtol, atol, loss_rise)


def check_model(model: Any) -> str:
    flavour = flavour_of(model)
    methods = ("predict", "predict_on_batch", "get_weights")
    if flavour not in FLAVOURS or not all(callable(getattr(model, a, None)) for a in methods):
        raise InputError(
            "expected a Keras model (keras.Model or tf_keras.Model), "
            f"got {type(model).__module__}.{type(model).__qualname__}"
        )
    return flavour


def check_trainable(model: Any) -> None:
    with serializing_without_tensorflow():
        config = model.get_compile_config() if is_compiled(model) else None
    if not config or config.get("loss") is None:
        raise InputError(
            "training methods need a model compiled with a loss: "
            "call model.compile(optimizer, loss) first, or leave y out"
        )


def _shape(value: Any) -> tuple[int | None, ...]:
    dims = value.shape
    as_list = getattr(dims, "as_list", None)
    return tuple(as_list() if callable(as_list) else dims)


def check_data(model: Any, x: Any, y: Any) -> None:
    xs = _arrays(x, "x")
    n = _samples(xs, "x")
    expected = _shapes(model, "inputs")
    if expected is not None and not isinstance(x, dict):
        if len(expected) != len(xs):
            raise InputError(f"the model takes {len(expected)} input(s); x holds {len(xs)}")
        for leaf, want in zip(xs, expected):
            got = _shape(leaf)
            if len(got) != len(want) or any(w is not None and w != g for g, w in zip(got, want)):
                raise InputError(
                    f"x has shape {got} but the model expects {tuple(want)} (None: any size)"
                )
    if y is not None:
        ys = _arrays(y, "y")
        m = _samples(ys, "y")
        if m != n:
            raise InputError(f"y has {m} samples but x has {n}")
        if not isinstance(y, dict):
            _check_targets(ys, _shapes(model, "outputs"))


def _check_targets(ys: list[Any], outputs: list[tuple[int | None, ...]] | None) -> None:
    """y's last dimension must be the output's, as the loss will compare them.

    Only where the ranks match: integer labels of shape (n,) or (n, 1) against a softmax
    output of (None, k) are what sparse losses take, so a y whose last dimension is 1 passes.
    """
    if outputs is None or len(outputs) != len(ys):
        return
    for leaf, want in zip(ys, outputs):
        got = _shape(leaf)
        if len(got) == len(want) and want[-1] is not None and got[-1] not in (want[-1], 1):
            raise InputError(
                f"y has shape {got} but the model's output is {tuple(want)}: "
                f"its last dimension must be {want[-1]}"
            )


def _arrays(x: Any, what: str) -> list[Any]:
    xs = leaves(x)
    for leaf in xs:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise InputError(
                f"{what} must be a NumPy array or a tensor (or a list/dict of them), "
                f"got {type(leaf).__name__}"
            )
        numpy_array = type(leaf).__module__ == "numpy" and type(leaf).__name__ == "ndarray"
        if numpy_array and leaf.dtype.kind not in "biuf":
            raise InputError(f"{what} has dtype {leaf.dtype}; expected numbers")
    return xs


def _samples(xs: list[Any], what: str) -> int:
    shapes = [_shape(leaf) for leaf in xs]
    if not shapes or any(len(s) == 0 for s in shapes):
        raise InputError(f"{what} needs a batch dimension (got a scalar)")
    counts = {s[0] for s in shapes}
    if len(counts) != 1:
        raise InputError(f"the arrays in {what} hold different numbers of samples: {counts}")
    n = counts.pop()
    if not n:
        raise InputError(f"{what} holds no samples")
    return int(n)


def _shapes(model: Any, what: str) -> list[tuple[int | None, ...]] | None:
    """The shapes of ``model.inputs`` or ``model.outputs``; None when the model has none yet."""
    try:
        tensors = getattr(model, what)
    except (AttributeError, ValueError):
        return None
    if not isinstance(tensors, (list, tuple)) or not tensors:
        return None
    try:
        return [_shape(t) for t in tensors]
    except (AttributeError, TypeError, ValueError):
        return None


#: The methods ``compare`` measures on each backend, by its name; a backend without a row
#: is measured with the default's (:func:`choose`).
METHODS_BY_BACKEND: dict[str, tuple[Method, ...]] = {DEFAULT.name: METHODS, JAX.name: JAX_METHODS}


def choose(methods: Iterable[str | Method] | None, *, with_y: bool) -> list[Method]:
    """The methods to measure: the given ones, else every one of the model's backend
    (:data:`METHODS_BY_BACKEND`), training methods only with targets. A name is the
    backend's method of that name, else the default's."""
    table = METHODS_BY_BACKEND.get(running_backend(), METHODS)
    if methods is None:
        return [m for m in table if with_y or m.kind == INFERENCE]
    own = {m.name: m for m in table} if table is not METHODS else {}
    chosen = [
        m if isinstance(m, Method) else own[m] if m in own else method_named(m) for m in methods
    ]
    odd = [m.name for m in chosen if m.kind not in KINDS]
    if odd:
        raise InputError(f"method {odd[0]!r} has an unknown kind (expected one of {KINDS})")
    if not chosen:
        raise InputError("no methods to compare")
    names = [m.name for m in chosen]
    if len(set(names)) != len(names):
        raise InputError(f"methods named twice: {sorted({n for n in names if names.count(n) > 1})}")
    if not with_y and any(m.kind == TRAINING for m in chosen):
        raise InputError("training methods need targets: pass y")
    return chosen


def pick_baselines(
    baseline: str | Iterable[str] | None, chosen: list[Method]
) -> tuple[tuple[str, str], ...]:
    names = {m.name: m for m in chosen}
    picked = dict(BASELINES)
    given = [baseline] if isinstance(baseline, str) else list(baseline or ())
    for name in given:
        if name not in names:
            raise InputError(f"baseline {name!r} is not among the methods compared")
        picked[names[name].kind] = name
    kinds = [k for k in (INFERENCE, TRAINING) if any(m.kind == k for m in chosen)]
    return tuple((k, picked[k]) for k in kinds if picked[k] in names)
