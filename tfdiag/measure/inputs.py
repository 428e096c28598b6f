"""What ``python -m tfdiag compare`` reads: a model file, .npy arrays, or a factory.

A factory is ``path.py:function``: a function returning ``(model, x, y)`` (or
``(model, x)``). When it takes a ``flavour`` argument, it is called once per Keras
flavour (``"keras3"``, ``"tf_keras"``) for the keras vs tf.keras comparison.
Importing the factory's file runs its code, as ``python path.py`` would.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfdiag.measure.timing import one_line
from tfdiag.records.errors import InputError


def load_array(path: str, what: str) -> Any:
    """One array saved with ``numpy.save`` (no pickles)."""
    import numpy as np

    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file ({what})")
    try:
        value = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(f"{p}: cannot load {what} as .npy ({one_line(exc)})") from None
    if not isinstance(value, np.ndarray):
        value.close()
        raise InputError(f"{p}: an .npz archive; save {what} as one array with numpy.save")
    return value


def load_model(path: str) -> Any:
    """``keras.models.load_model`` (Keras 3, safe_mode on) with a one-line error."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file (model)")
    import keras

    try:
        with warnings.catch_warnings():
            # Keras warns when the saved optimizer state does not fit the rebuilt optimizer
            # (a model saved before any training step); compare never reads that state:
            # its training copies get a fresh optimizer.
            warnings.filterwarnings("ignore", "Skipping variable loading for optimizer")
            return keras.models.load_model(p)
    except Exception as exc:  # any reason Keras gives is the file's fault
        raise InputError(f"{p}: cannot load a Keras model ({one_line(exc)})") from None


def load_factory(spec: str) -> Callable[..., Any]:
    """The function named by ``path.py:function``."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise InputError(f"--factory takes path.py:function, got {spec!r}")
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file (factory)")
    module_name = f"_tfdiag_factory_{abs(hash(str(p.resolve())))}"
    loader_spec = importlib.util.spec_from_file_location(module_name, p)
    if loader_spec is None or loader_spec.loader is None:
        raise InputError(f"{p}: not a Python file")
    module = importlib.util.module_from_spec(loader_spec)
    folder = str(p.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as `python path.py` would: its siblings import
    sys.modules[module_name] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise InputError(f"{p}: cannot import the factory ({one_line(exc)})") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise InputError(f"{p} has no function {name!r}")
    return fn  # type: ignore[no-any-return]


def takes_flavour(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "flavour" in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
    )


def call_factory(fn: Callable[..., Any], flavour: str | None) -> tuple[Any, Any, Any]:
    """``(model, x, y)`` from the factory; ``y`` is ``None`` when it returns two values."""
    label = getattr(fn, "__name__", "factory")
    try:
        out = fn(flavour=flavour) if flavour is not None else fn()
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"factory {label}() failed: {one_line(exc)}") from None
    if not isinstance(out, (tuple, list)) or len(out) not in (2, 3):
        raise InputError(
            f"factory {label}() must return (model, x, y) or (model, x), got {type(out).__name__}"
        )
    model, x, *rest = out
    return model, x, rest[0] if rest else None
