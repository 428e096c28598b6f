"""What ``python -m tfdiag compare`` reads: a model file, .npy arrays, or a factory.

A factory is ``path.py:function``: a function returning ``(model, x, y)`` (or
``(model, x)``). When it takes a ``flavour`` argument, it is called once per Keras
flavour (``"keras3"``, ``"tf_keras"``) for the keras vs tf.keras comparison.
Importing the factory's file runs its code, as ``python path.py`` would.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfdiag.measure.timing import one_line
from tfdiag.records.errors import InputError
from tfdiag.records.reading import check_regular, open_regular


def load_array(path: str, what: str) -> Any:
    """One array saved with ``numpy.save`` (no pickles), its header checked against the
    file's size before any memory is taken for it."""
    import numpy as np

    p = Path(path)
    fd = open_regular(p, f"an .npy file ({what})")
    with os.fdopen(fd, "rb") as fh:
        try:
            _check_npy_header(fh, os.fstat(fh.fileno()).st_size)
            fh.seek(0)
            value = np.load(fh, allow_pickle=False)
        except InputError as exc:
            raise InputError(f"{p}: cannot load {what} as .npy ({exc})") from None
        except (ValueError, OSError, EOFError, MemoryError) as exc:
            raise InputError(f"{p}: cannot load {what} as .npy ({one_line(exc)})") from None
    if not isinstance(value, np.ndarray):
        value.close()
        raise InputError(f"{p}: an .npz archive; save {what} as one array with numpy.save")
    return value


def _check_npy_header(fh: Any, size: int) -> None:
    """The shape and dtype an .npy header claims must fit in the bytes after it."""
    import numpy as np

    if fh.read(6) != b"\x93NUMPY":
        return  # not an .npy: numpy says what it is (an .npz, garbage)
    fh.seek(0)
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
    else:
        shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
    if dtype.hasobject:
        raise InputError("it holds Python objects (pickles), which are never loaded")
    needed = math.prod(shape) * dtype.itemsize
    available = size - fh.tell()
    if needed > available:
        raise InputError(
            f"its header claims {needed:,} bytes of data, the file holds {available:,}"
        )


def load_model(path: str) -> Any:
    """``keras.models.load_model`` (Keras 3, safe_mode on) with a one-line error."""
    p = Path(path)
    check_regular(p, "model")
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


def factory_spec(spec: str) -> tuple[Path, str]:
    """``path.py:function`` checked (a regular file, a name) without importing anything, so
    a typo is refused before TensorFlow is loaded."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise InputError(f"--factory takes path.py:function, got {spec!r}")
    p = Path(path)
    check_regular(p, "factory")
    return p, name


def load_factory(spec: str) -> Callable[..., Any]:
    """The function named by ``path.py:function``."""
    p, name = factory_spec(spec)
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
    except SystemExit as exc:  # the file is a script, not a module of factories
        sys.modules.pop(module_name, None)
        raise InputError(
            f"{p}: importing the factory called sys.exit({exc.code!r}); guard its script part "
            "with `if __name__ == '__main__':`"
        ) from None
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
    except SystemExit as exc:
        raise InputError(f"factory {label}() called sys.exit({exc.code!r})") from None
    except Exception as exc:
        raise InputError(f"factory {label}() failed: {one_line(exc)}") from None
    if not isinstance(out, (tuple, list)) or len(out) not in (2, 3):
        raise InputError(
            f"factory {label}() must return (model, x, y) or (model, x), got {type(out).__name__}"
        )
    model, x, *rest = out
    return model, x, rest[0] if rest else None
