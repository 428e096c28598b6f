"""What tfdiag reads off the objects of a call before profiling it: the Keras model's
execution settings and what kind of input it was given.

These are facts the profile cannot show (``run_eagerly``, ``steps_per_execution``, a
``PyDataset``'s ``workers``), read by attribute only — nothing is called that could
change the model — and never a reason for ``profile()`` to fail.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

#: Model attributes worth recording: name → how it is spelled on Keras 3 / tf_keras models.
_MODEL = (
    ("run_eagerly", ("run_eagerly",)),
    # what the user set (tf_keras's run_eagerly is also True for a dynamic layer's model)
    ("run_eagerly_set", ("_run_eagerly",)),
    ("dynamic", ("dynamic",)),
    ("steps_per_execution", ("steps_per_execution", "_steps_per_execution")),
    ("jit_compile", ("jit_compile", "_jit_compile")),
)
_PY_DATASET = ("workers", "use_multiprocessing", "max_queue_size")
#: The settings of Keras' own callbacks that decide how often they work: name → attributes
#: read (the first that is set). TensorBoard keeps ``profile_batch`` as ``_start_batch``.
_CALLBACK_SETTINGS = (
    ("save_freq", ("save_freq",)),
    ("update_freq", ("update_freq",)),
    ("histogram_freq", ("histogram_freq",)),
    ("profile_batch", ("_start_batch",)),
)


def _scalar(value: Any) -> str | None:
    """A plain value as text; a TF variable's value too; anything else: None."""
    numpy = getattr(value, "numpy", None)
    if callable(numpy):
        try:
            value = numpy()
        except Exception:
            return None
        value = getattr(value, "item", lambda: value)()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return str(value)
    return None


_KERAS = ("keras", "tf_keras")


def _is_model(obj: Any) -> bool:
    return any(
        c.__name__ == "Model" and (c.__module__ or "").startswith(_KERAS) for c in type(obj).__mro__
    )


def model_facts(model: Any) -> list[tuple[str, str]]:
    out = []
    for name, spellings in _MODEL:
        for attr in spellings:
            try:
                value = _scalar(getattr(model, attr))
            except Exception:  # a property that raises on an uncompiled model
                continue
            if value is not None:
                out.append((name, value))
                break
    return out + _user_layers(model) + _metrics(model)


def _flat(items: Any) -> list[Any]:
    """Nested lists and dicts of metrics (one per output), flattened."""
    out: list[Any] = []
    for x in items.values() if isinstance(items, dict) else items:
        out.extend(_flat(x) if isinstance(x, (list, tuple, dict)) else [x])
    return out


#: A metric's configuration number from this size is worth naming (``num_thresholds``).
_LARGE_CONFIG = 1000


def _metrics(model: Any) -> list[tuple[str, str]]:
    """``metric.auc`` → ``AUC(num_thresholds=8000)``: the compiled metrics (read off
    ``model.metrics`` and the containers in it), each with its configuration numbers of
    :data:`_LARGE_CONFIG` or more, which set how much work each update does."""
    out: list[tuple[str, str]] = []
    try:
        todo = list(getattr(model, "metrics", None) or ())
    except Exception:  # noqa: BLE001 - a property that raises before the model is built
        return out
    seen = 0
    while todo and seen < 32:
        m = todo.pop(0)
        seen += 1
        # a container (Keras 3's CompileMetrics): the user's metrics as compile() got them
        # (built only by the first step), else the ones it holds
        inner = getattr(m, "_user_metrics", None) or getattr(m, "metrics", None)
        if isinstance(inner, (list, tuple)) and not (inner and inner[0] is m):
            todo.extend(x for x in _flat(inner) if not isinstance(x, str))
            continue
        try:
            config = m.get_config()
        except Exception:  # noqa: BLE001 - a metric without a config: its class alone
            config = {}
        big = [
            f"{k}={v}"
            for k, v in config.items()
            if isinstance(v, int) and not isinstance(v, bool) and v >= _LARGE_CONFIG
        ]
        name = str(getattr(m, "name", type(m).__name__))
        out.append((f"metric.{name}", f"{type(m).__name__}({', '.join(big)})"))
    return out


#: At most this many of a model's own layer classes are recorded.
_MAX_LAYERS = 16


def _user_layers(model: Any) -> list[tuple[str, str]]:
    """``layer.<name>`` → ``Class.call (file.py:12)`` for each layer of the model whose class
    the user wrote (not Keras'): an op's scope in the TF profiler names the layer, this
    names the user's code that made it."""
    out: list[tuple[str, str]] = []
    layers = getattr(model, "_flatten_layers", None)
    if not callable(layers):
        return out
    for layer in layers(include_self=False, recursive=True):
        cls = type(layer)
        if (cls.__module__ or "").startswith(_KERAS) or len(out) >= _MAX_LAYERS:
            continue
        code = getattr(getattr(cls, "call", None), "__code__", None)
        if code is None:
            continue
        where = f"{code.co_filename.replace(chr(92), '/').rsplit('/', 1)[-1]}:{code.co_firstlineno}"
        out.append((f"layer.{layer.name}", f"{cls.__name__}.call ({where})"))
    return out


def input_facts(label: str, value: Any) -> list[tuple[str, str]]:
    """What kind of input ``value`` is: a tf.data dataset, a PyDataset (and its workers),
    a Python generator."""
    cls = type(value)
    mro = {c.__name__ for c in cls.__mro__}
    module = cls.__module__ or ""
    if any(
        c.__name__ in ("PyDataset", "Sequence") and (c.__module__ or "").startswith(_KERAS)
        for c in cls.__mro__
    ):
        found = [(f"{label}.kind", "PyDataset"), (f"{label}.class", cls.__name__)]
        for attr in _PY_DATASET:
            try:
                text = _scalar(getattr(value, attr))
            except Exception:
                continue
            if text is not None:
                found.append((f"{label}.{attr}", text))
        return found
    if "DatasetV2" in mro or module.startswith("tensorflow.python.data"):
        return [(f"{label}.kind", "tf.data.Dataset"), (f"{label}.class", cls.__name__)]
    if cls.__name__ == "generator":
        return [(f"{label}.kind", "generator")]
    return []


def callback_facts(callbacks: Any) -> list[tuple[str, str]]:
    """``callbacks=[...]``'s classes in order (``callbacks``: ``ModelCheckpoint,MyLogger``)
    and the frequency settings of Keras' own (``callback.ModelCheckpoint.save_freq``)."""
    if not isinstance(callbacks, (list, tuple)):
        return []
    names, out = [], []
    for cb in callbacks:
        cls = type(cb)
        names.append(cls.__name__)
        if not (cls.__module__ or "").startswith(_KERAS):
            continue
        for name, spellings in _CALLBACK_SETTINGS:
            for attr in spellings:
                try:
                    value = _scalar(getattr(cb, attr))
                except Exception:
                    continue
                if value is not None:
                    out.append((f"callback.{cls.__name__}.{name}", value))
                    break
    return [("callbacks", ",".join(names)), *out] if names else []


def call_facts(fn: Any, args: Iterable[Any], kwargs: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The facts of ``fn(*args, **kwargs)``; empty for a plain Python call."""
    out: list[tuple[str, str]] = []
    try:
        tf = sys.modules.get("tensorflow")  # only when the user has imported it
        if tf is not None:
            out.append(("functions_run_eagerly", str(bool(tf.config.functions_run_eagerly()))))
        owner = getattr(fn, "__self__", None)
        model = owner if owner is not None and _is_model(owner) else fn if _is_model(fn) else None
        if model is not None:
            out += model_facts(model)
        for i, value in enumerate(args):
            out += input_facts("x" if i == 0 else f"arg{i}", value)
        for key, value in kwargs.items():
            out += callback_facts(value) if key == "callbacks" else input_facts(key, value)
    except Exception:  # facts are a bonus: a strange object must not stop the profile
        return tuple(out)
    return tuple(out)
