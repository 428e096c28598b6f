"""What was called and where: labels, Keras flavour and backend, the versions of what the
process has loaded. Never imports TensorFlow (nor JAX, nor Keras)."""

from __future__ import annotations

import inspect
import json
import os
import platform
import sys
from typing import Any

from tfdiag.capture.facts import call_facts
from tfdiag.capture.lines import caller_line
from tfdiag.capture.native_log import quiet
from tfdiag.records.catalog.backends import DEFAULT, PACKAGES
from tfdiag.records.paths import is_user_code
from tfdiag.records.report import CallInfo, Environment

_MAX_REPR = 60


def _version(dist: str) -> str | None:
    from importlib import metadata  # slow to import; only a run needs it

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def flavour_of(obj: Any) -> str:
    """``keras3``, ``tf_keras``, ``tensorflow`` or ``python`` from the classes' modules."""
    owner = getattr(obj, "__self__", obj)
    cls = owner if isinstance(owner, type) else type(owner)
    modules = [c.__module__ or "" for c in cls.__mro__]
    modules.append(getattr(obj, "__module__", "") or "")
    for mod in modules:
        if mod.startswith("tf_keras") or mod.startswith("tensorflow.python.keras"):
            return "tf_keras"
        if mod.startswith("keras"):
            return "keras3"
    if any(m.startswith("tensorflow") for m in modules):
        return "tensorflow"
    return "python"


def describe_value(value: Any) -> str:
    """``ndarray float32 (32, 4)`` for arrays and tensors, a short repr otherwise.

    Never builds more than a short text: a string or bytes argument is cut before its repr
    is taken, a list, tuple, dict or set shows its first items and its length, an int too
    large to write is its bit length (a 200 MiB bytes argument cost 800 MiB when the whole
    repr was built first, #20.9). Other objects give their own repr, cut to length.
    """
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        dname = getattr(dtype, "name", None) or str(dtype)
        try:
            dims = tuple(None if d is None else int(d) for d in shape)
        except (TypeError, ValueError):
            dims = shape
        return f"{type(value).__name__} {dname} {dims}"
    return _cut(_short_repr(value, _MAX_REPR, _DEPTH))


#: How deep :func:`describe_value` looks into nested lists, tuples, dicts and sets.
_DEPTH = 2
#: An int of more bits than this is described by its size (a 10**5000 has no str()).
_MAX_INT_BITS = 256


def _cut(text: str, limit: int = _MAX_REPR) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short_repr(value: Any, budget: int, depth: int) -> str:
    """At most about ``budget`` characters of ``value``'s repr, built from as little of it as
    that needs (exact built-in types only: a subclass's repr is its own)."""
    kind = type(value)
    if kind in (str, bytes, bytearray):
        if len(value) <= budget:
            return repr(value)
        return f"{kind.__name__} of {len(value):,} {repr(value[:budget])}"
    if kind is int and value.bit_length() > _MAX_INT_BITS:
        return f"int of {value.bit_length():,} bits"
    if kind in (list, tuple, set, frozenset, dict):
        return _container(value, budget, depth)
    return repr(value)


def _container(value: Any, budget: int, depth: int) -> str:
    kind, n = type(value), len(value)
    if n and depth <= 0:
        return f"{kind.__name__} of {n:,}"
    parts: list[str] = []
    used = 0
    for item in value.items() if kind is dict else value:
        if used > budget:
            break
        if kind is dict:
            key, val = item
            key_text = _short_repr(key, budget, depth - 1)
            text = f"{key_text}: {_short_repr(val, budget, depth - 1)}"
        else:
            text = _short_repr(item, budget, depth - 1)
        parts.append(text)
        used += len(text) + 2
    inner = ", ".join(parts) + (", …" if len(parts) < n else "")
    if kind is list:
        text = f"[{inner}]"
    elif kind is tuple:
        text = f"({inner},)" if n == 1 else f"({inner})"
    elif kind is dict:
        text = f"{{{inner}}}"
    else:
        text = (
            f"{{{inner}}}"
            if n and kind is set
            else f"{kind.__name__}({{{inner}}})"
            if n
            else f"{kind.__name__}()"
        )
    return text if len(parts) == n else f"{kind.__name__} of {n:,} {text}"


def _is_users(fn: Any) -> bool:
    """Is ``fn`` the user's own code (a function, a method, a callable object of theirs)?
    Its lines are the report's; the line that called it is tfdiag's ``profile(...)``."""
    for candidate in (fn, getattr(fn, "__func__", None), vars(type(fn)).get("__call__")):
        try:
            code = getattr(inspect.unwrap(candidate), "__code__", None) if candidate else None
        except ValueError:  # a cycle of __wrapped__
            code = None
        if code is not None:
            return is_user_code(code.co_filename)
    return False


def describe_call(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> CallInfo:
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", None)
    if owner is not None and name:
        label, method = f"{type(owner).__name__}.{name}", name
        target = f"{type(owner).__module__}.{type(owner).__qualname__}.{name}"
    elif name:
        label, method = name, name
        target = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', name)}"
    else:
        label, method = f"{type(fn).__name__}.__call__", "__call__"
        target = f"{type(fn).__module__}.{type(fn).__qualname__}.__call__"
    file, line, code = caller_line() if not _is_users(fn) else ("", 0, "")
    return CallInfo(
        label=label,
        target=target,
        method=method,
        flavour=flavour_of(fn),
        args=tuple(describe_value(a) for a in args),
        kwargs=tuple((k, describe_value(v)) for k, v in kwargs.items()),
        facts=call_facts(fn, args, kwargs),
        file=file,
        line=line,
        code=code,
    )


def _devices() -> tuple[str, ...]:
    tf = sys.modules.get("tensorflow")  # only if the user already imported it
    jax = sys.modules.get("jax")
    try:
        # The first look for devices in a process logs (``failed call to cuInit`` without a
        # GPU): when the program never ran an op, that look is tfdiag's own work.
        with quiet():
            if tf is not None:
                return tuple(f"{d.device_type}:{d.name}" for d in tf.config.list_physical_devices())
            if jax is not None:  # the program's JAX backend is up: it ran
                return tuple(f"{d.platform.upper()}:{d.id}" for d in jax.devices())
    except Exception:  # a broken TF or JAX install must not break the report
        return ()
    return ()


def _loaded(module: str, *dists: str) -> str | None:
    """The installed version of a package the process has imported (None otherwise: a
    package installed beside the program but never loaded is no part of its stack)."""
    if module not in sys.modules:
        return None
    return next((v for d in dists if (v := _version(d))), None)


def keras_backend() -> str | None:
    """Keras 3's backend (``tensorflow``, ``jax``, ``torch``, ``numpy``) when the process has
    imported Keras 3, else None. Never imports anything."""
    keras = sys.modules.get("keras")
    backend = getattr(getattr(keras, "backend", None), "backend", None)
    if not callable(backend):
        return None
    try:
        name = backend()
    except Exception:  # a half-imported Keras must not break the report
        return None
    return name if isinstance(name, str) else None


def running_backend() -> str:
    """The backend the process computes with: Keras 3's when it has imported Keras 3, else
    the default (a tf_keras or TensorFlow program runs on TensorFlow). Never imports
    anything."""
    return keras_backend() or DEFAULT.name


def configured_keras_backend() -> str:
    """The backend Keras 3 picks when it is imported: the loaded Keras' own when it is, else
    as Keras reads it (keras/src/backend/config.py): ``KERAS_BACKEND``, else the ``backend``
    of ``keras.json`` in ``KERAS_HOME`` (or ``~/.keras``, ``/tmp/.keras`` where the home is
    not writable), else ``tensorflow``. Never imports anything."""
    loaded = keras_backend()
    if loaded is not None:
        return loaded
    env = os.environ.get("KERAS_BACKEND")
    if env:
        return env
    home = os.environ.get("KERAS_HOME")
    if home is None:
        base = os.path.expanduser("~")
        home = os.path.join(base if os.access(base, os.W_OK) else "/tmp", ".keras")
    try:
        with open(os.path.join(os.path.expanduser(home), "keras.json"), encoding="utf-8") as f:
            backend = json.load(f).get("backend")
    except (OSError, ValueError, AttributeError):
        return DEFAULT.name
    return backend if isinstance(backend, str) and backend else DEFAULT.name


def current_environment() -> Environment:
    versions = {p.key: v for p in PACKAGES if (v := _loaded(p.module, *p.dists)) is not None}
    return Environment(
        python=platform.python_version(),
        platform=platform.platform(terse=True),
        cpu_count=os.cpu_count(),
        devices=_devices(),
        backend=keras_backend(),
        versions=versions,
    )
