"""Debugging switches a run had on, and the lines of the user's code that set them.

``tf.config.run_functions_eagerly(True)``, ``tf.data.experimental.enable_debug_mode()``,
``tf.debugging.enable_check_numerics()``, JAX's ``jax_disable_jit`` and ``jax_debug_nans``
are process-wide: their state is read here, by attribute, from the modules the program
loaded (none is imported). ``run_eagerly=True`` and ``dynamic=True`` belong to one model or
layer: their state is the profile's to show (a Keras step run as Python), so only their
lines are looked for. The lines come from the user's files the samples saw and the main
script, read as text (never imported), comment lines left out.
"""

from __future__ import annotations

import linecache
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any

from tfdiag.records.lines import MAX_CODE, SwitchLine
from tfdiag.records.paths import is_user_code

#: Files read for switch lines, and the largest one read.
_MAX_FILES = 50
_MAX_FILE_LINES = 50_000


def _tf_functions_eagerly() -> bool:
    tf = sys.modules.get("tensorflow")
    return bool(tf is not None and tf.config.functions_run_eagerly())


def _tf_data_debug() -> bool:
    mode = sys.modules.get("tensorflow.python.data.ops.debug_mode")
    return bool(getattr(mode, "DEBUG_MODE", False))


def _tf_check_numerics() -> bool:
    module = sys.modules.get("tensorflow.python.debug.lib.check_numerics_callback")
    state = getattr(module, "_state", None)
    return state is not None and hasattr(state, "check_numerics_callback")


def _jax_flag(name: str) -> Callable[[], bool]:
    def read() -> bool:
        jax = sys.modules.get("jax")
        config: Any = getattr(jax, "config", None)
        return bool(getattr(config, name, False)) if config is not None else False

    return read


#: Each switch: its name, how to read its state (None: not process-wide), and what its
#: line looks like in the user's code.
SWITCHES: tuple[tuple[str, Callable[[], bool] | None, re.Pattern[str]], ...] = (
    ("tf-functions-eagerly", _tf_functions_eagerly, re.compile(r"run_functions_eagerly\(\s*True")),
    ("tf-data-debug", _tf_data_debug, re.compile(r"enable_debug_mode\(\s*\)")),
    ("tf-check-numerics", _tf_check_numerics, re.compile(r"enable_check_numerics\(")),
    (
        "jax-disable-jit",
        _jax_flag("jax_disable_jit"),
        re.compile(r"jax_disable_jit['\"]\s*,\s*True|disable_jit\(\s*\)"),
    ),
    (
        "jax-debug-nans",
        _jax_flag("jax_debug_nans"),
        re.compile(r"jax_debug_(?:nans|infs)['\"]\s*,\s*True"),
    ),
    ("run-eagerly", None, re.compile(r"\brun_eagerly\s*=\s*True\b")),
    ("dynamic", None, re.compile(r"\bdynamic\s*=\s*True\b")),
)


def live_switches() -> tuple[str, ...]:
    """The process-wide switches on now."""
    on = []
    for name, read, _ in SWITCHES:
        try:
            if read is not None and read():
                on.append(name)
        except Exception:  # noqa: BLE001 - a module's internals moved: not known, not on
            continue
    return tuple(on)


def _main_file() -> str | None:
    main = sys.modules.get("__main__")
    file = getattr(main, "__file__", None)
    return file if isinstance(file, str) else None


def switch_lines(files: Iterable[str] = ()) -> tuple[SwitchLine, ...]:
    """The switches on, and those found in the user's ``files`` (and the main script), each
    with the first line that sets it; a live switch with no line found has line 0."""
    live = set(live_switches())
    wanted = [f for f in (*files, _main_file()) if f and is_user_code(f)]
    seen: set[str] = set()
    found: dict[str, SwitchLine] = {}
    for file in wanted:
        if file in seen or len(seen) >= _MAX_FILES:
            continue
        seen.add(file)
        lines = linecache.getlines(file)[:_MAX_FILE_LINES]
        for n, raw in enumerate(lines, 1):
            code = raw.strip()
            if not code or code.startswith("#"):
                continue
            for name, read, pattern in SWITCHES:
                if name in found or (read is not None and name not in live):
                    continue
                if pattern.search(code):
                    found[name] = SwitchLine(name, file, n, code[:MAX_CODE])
    for name in live:
        found.setdefault(name, SwitchLine(name))
    return tuple(found[name] for name, _, _ in SWITCHES if name in found)
