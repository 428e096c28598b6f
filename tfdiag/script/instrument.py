"""Run a user's script with Keras' step methods timed per call site, and profiled.

``predict``, ``fit``, ``evaluate``, ``train_on_batch``, ``test_on_batch`` and
``predict_on_batch`` are patched on the classes that define them for
``keras.Model`` (Keras 3) and ``tf_keras.Model``, and so are the user's ``tf.function``
steps and eager model calls (:mod:`tfdiag.script.loops`: custom training loops); all are
always restored, whether the script returns, raises or calls ``sys.exit``;
:class:`~tfdiag.script.recorder.Recorder` charges each call to the user's line that made it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import runpy
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tfdiag.capture.environment import configured_keras_backend
from tfdiag.capture.plan import MAX_ITERATIONS
from tfdiag.capture.script_lines import ScriptSampler
from tfdiag.capture.tracers import tracer_in_use
from tfdiag.records.catalog.backends import DEFAULT, FRONTENDS, JAX
from tfdiag.records.clock import Clock
from tfdiag.records.errors import InputError
from tfdiag.records.reading import check_regular
from tfdiag.results.script import ScriptResult
from tfdiag.script.loops import loops_recorded
from tfdiag.script.recorder import Recorder

METHODS = ("predict", "fit", "evaluate", "train_on_batch", "test_on_batch", "predict_on_batch")


def model_classes() -> list[type]:
    """``keras.Model`` and ``tf_keras.Model``, whichever are installed (imports them).
    ``tf_keras`` loads TensorFlow: on another Keras backend (``KERAS_BACKEND=jax``) it is
    left out unless the program has loaded TensorFlow already."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    found = []
    names = ["keras", "tf_keras"]
    if configured_keras_backend() != DEFAULT.name and DEFAULT.module not in sys.modules:
        names.remove("tf_keras")
    for name in names:
        if importlib.util.find_spec(name) is not None:
            found.append(importlib.import_module(name).Model)
    if not found:
        raise InputError("neither keras nor tf_keras is installed: nothing to instrument")
    return found


def imports_jax(script: Path) -> bool:
    """Whether the script's text imports JAX (``import jax``, ``from jax import …``): read
    from its syntax tree, never run (False when it does not parse)."""
    try:
        tree = ast.parse(script.read_bytes())
    except (SyntaxError, ValueError, OSError, RecursionError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == JAX.module for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == JAX.module:
            return True
    return False


def preloaded() -> tuple[str, ...]:
    """The frameworks imported now (before the script starts), as the note names them."""
    packages = (*DEFAULT.versions, *FRONTENDS, JAX.versions[0])
    return tuple(p.label for p in packages if p.module in sys.modules)


@contextmanager
def instrumented(classes: Sequence[type], recorder: Recorder) -> Iterator[None]:
    """Patch METHODS where each class's MRO defines them; restore them on the way out."""
    patched: list[tuple[type, str, Any]] = []
    try:
        for cls in classes:
            for name in METHODS:
                owner = next((c for c in cls.__mro__ if name in c.__dict__), None)
                if owner is None or any(o is owner and n == name for o, n, _ in patched):
                    continue
                original = owner.__dict__[name]
                setattr(owner, name, recorder.wrap(original, name))
                patched.append((owner, name, original))
        yield
    finally:
        for owner, name, original in reversed(patched):
            setattr(owner, name, original)


def _exit_status(code: object) -> str:
    if code is None or code == 0:
        return "ok"
    if isinstance(code, int):
        return f"exit {code}"
    print(code, file=sys.stderr)
    return f"exit 1 ({code})"


def _print_script_traceback(exc: BaseException, script: str) -> None:
    """The traceback from the script's first frame on, as ``python script.py`` prints it."""
    tb = exc.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb or exc.__traceback__, file=sys.stderr)


def run_script(
    path: str | Path,
    argv: Sequence[str] = (),
    *,
    iterations: int = 10,
    tf_profiler: bool | None = None,
    clock: Clock = time.perf_counter,
) -> ScriptResult:
    """Run ``path`` as ``__main__`` with ``sys.argv = [path, *argv]``, Keras calls recorded.

    Each site's first call and ``iterations`` more run under cProfile; with
    ``tf_profiler`` (default: when the running backend's tracer is loaded, which it is once
    Keras is) the next few calls of the busiest sites run under it (the TF profiler, or
    ``jax.profiler`` on Keras' JAX backend).

    The script's own exceptions are printed (as Python would) and reported in
    ``status``; ``KeyboardInterrupt`` stops the script and is reported as ``interrupted``.

    Raises:
        InputError: ``path`` is not a file, ``iterations`` is out of range, or no Keras
            is installed.
    """
    script = Path(path)
    if not script.exists():
        raise InputError(f"{script}: no such script")
    check_regular(script, "a script")
    if isinstance(iterations, bool) or not isinstance(iterations, int):
        raise InputError(f"iterations must be an integer, got {iterations!r}")
    if not 0 <= iterations <= MAX_ITERATIONS:
        raise InputError(f"iterations must be between 0 and {MAX_ITERATIONS:,}, got {iterations}")
    classes = model_classes()
    jax = JAX.module
    if jax not in sys.modules and imports_jax(script) and importlib.util.find_spec(jax):
        # imported before the script (as Keras is) so that its compilations are recorded
        # from the first: JAX's monitoring hooks exist only once it is loaded
        importlib.import_module(jax)
    if tf_profiler is not None and not isinstance(tf_profiler, bool):
        raise InputError(f"tf_profiler must be True, False or None, got {tf_profiler!r}")
    recorder = Recorder(
        script,
        iterations=iterations,
        tf_profiler=tracer_in_use() is not None if tf_profiler is None else tf_profiler,
        clock=clock,
    )
    saved_argv, saved_path = sys.argv, sys.path[:]
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.resolve().parent))
    status = "ok"
    recorder.preloaded = preloaded()
    sampler = ScriptSampler()
    t0 = clock()
    recorder.probes.start()
    sampler.start()
    try:
        with instrumented(classes, recorder), loops_recorded(classes, recorder):
            try:
                runpy.run_path(str(script), run_name="__main__")
            except SystemExit as exc:
                status = _exit_status(exc.code)
            except KeyboardInterrupt:
                status = "interrupted (KeyboardInterrupt)"
            except Exception as exc:
                _print_script_traceback(exc, recorder.script)
                status = f"raised {type(exc).__name__}: {exc}"
    finally:
        wall = clock() - t0
        sampler.stop()
        recorder.probes.stop()
        sys.argv = saved_argv
        sys.path[:] = saved_path
    return recorder.result(argv, wall, status, sampler.record())
