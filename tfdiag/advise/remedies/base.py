"""What every remedy rule shares: the remedy and scene types, and the user's names read
off a line's text (the variable it assigns, the object it calls, the dataset it counts)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tfdiag.analysis.lines import UserLine
from tfdiag.records.units import fmt_pct0

#: At least this many calls per iteration make a build-type call "on every call".
PER_CALL = 0.5


@dataclass(frozen=True)
class Remedy:
    """A fix for one line: ``key`` names the rule and case (``construct:tf.function``) for
    tests and for ``tfdiag fix``; ``text`` is what the finding shows."""

    key: str
    text: str


def where(line: UserLine) -> str:
    """``app.py:34 `lookup = …``` — the line, and its text when captured."""
    return f"{line.location} `{line.code}`" if line.code else line.location


def per_iteration(line: UserLine) -> str:
    n = line.calls_per_iteration
    if n is None:
        return ""
    figure = f"{n:.0f}" if n >= 10 or abs(n - round(n)) < 0.05 else f"{n:.2g}"
    return f"{'' if line.exact else '≈'}{figure}× per iteration"


_VERBS = {
    "construct": "builds a new",
    "setup": "runs",
    "keras-loop": "calls",
    "keras-step": "calls",
    "model-call": "calls a model or layer eagerly",
    "graph-call": "runs",
    "eager-op": "dispatches",
    "train-op": "runs",
    "weights-host": "copies every weight with",
    "to-host": "waits for a value with",
    "convert": "converts data with",
    "data-iterate": "starts a new pass over a dataset with",
    "data-read": "reads",
    "metric": "updates",
    "summary": "writes",
    "save": "writes",
    "clear": "clears the session with",
    "numpy": "runs",
}


def evidence(line: UserLine, scope: str = "of steady state") -> str:
    """The finding's first evidence line: the user's line, the API and its figures
    (``scope``: what its share is a share of)."""
    verb = _VERBS.get(line.nature, "calls") if line.api else "runs your own Python"
    api = f"`{line.api}`" if line.api and line.nature not in ("model-call", "graph-call") else ""
    if line.nature == "graph-call":
        api = line.api  # "a tf.function": a call, not a name the user wrote
    figures = ", ".join(x for x in (per_iteration(line), f"{fmt_pct0(line.share)} {scope}") if x)
    head = f"line {where(line)}"
    if line.nature == "debug-switch":
        return f"{head} turns on `{SPELLED.get(line.api, line.api)}`"
    if line.entry:
        return f"line {where(line)} makes the call profiled (`{line.api}`)"
    return f"{head} {verb}{' ' + api if api else ''}: {figures}"


# -- what the line's text names --------------------------------------------------------------

_ASSIGNED = re.compile(r"^\s*(?:self\.)?([A-Za-z_]\w*)\s*=[^=]")


def assigned(code: str) -> str | None:
    """``lookup = keras.layers.StringLookup(...)`` → ``lookup``."""
    m = _ASSIGNED.match(code)
    return m.group(1) if m else None


def receiver(code: str, method: str) -> str | None:
    """``y = self.model.predict(x)`` with ``predict`` → ``self.model``."""
    m = re.search(rf"([A-Za-z_][\w.]*(?:\[[^\]]*\])?)\.{re.escape(method)}\s*\(", code)
    return m.group(1) if m else None


def first_argument(code: str, method: str) -> str | None:
    """``model.predict(batch, verbose=0)`` → ``batch``."""
    m = re.search(rf"\.{re.escape(method)}\s*\(\s*([^,()=]+?)\s*[,)]", code)
    return m.group(1) if m else None


_FOR = re.compile(r"^\s*for\s+(.+?)\s+in\s+(.+?)\s*:")
_COUNT = re.compile(r"sum\(\s*1\s+for\s+\w+\s+in\s+([\w.]+)|len\(\s*list\(\s*([\w.]+)\s*\)")


def counted_dataset(code: str) -> str | None:
    """The dataset a line counts by reading it (``sum(1 for _ in ds)``,
    ``len(list(ds))``, ``for _ in ds:``), or None."""
    m = _COUNT.search(code)
    if m:
        return m.group(1) or m.group(2)
    m = _FOR.match(code)
    if m and m.group(1).strip() in ("_", "_batch", "_b", "_x"):
        return m.group(2).strip()
    return None


@dataclass(frozen=True)
class Scene:
    """What a rule may read beside its line: every line of the run and its backend."""

    lines: tuple[UserLine, ...] = ()
    backend: str | None = None

    def siblings(self, line: UserLine) -> list[UserLine]:
        """The other lines of the same user function."""
        return [
            u
            for u in self.lines
            if u.file == line.file
            and u.function_line == line.function_line
            and u is not line
            and not u.entry
        ]


Rule = Callable[[UserLine, Scene], "Remedy | None"]


SPELLED = {
    "run-eagerly": "run_eagerly=True",
    "dynamic": "dynamic=True",
    "tf-functions-eagerly": "tf.config.run_functions_eagerly(True)",
    "tf-data-debug": "tf.data.experimental.enable_debug_mode()",
    "tf-check-numerics": "tf.debugging.enable_check_numerics()",
    "jax-disable-jit": "jax_disable_jit",
    "jax-debug-nans": "jax_debug_nans",
    "eager-step": "run_eagerly=True",
}


def per_call(line: UserLine) -> bool:
    return line.calls_per_iteration is None or line.calls_per_iteration >= PER_CALL


def outside(line: UserLine) -> str:
    return (
        f"outside `{line.function}`"
        if line.function and line.function != "<module>"
        else ("before the loop")
    )


def quoted(line: UserLine) -> str:
    """```lookup = …``` (app.py:34): the line, as the fix names it."""
    return f"`{line.code}` ({line.location})" if line.code else f"line {line.location}"
