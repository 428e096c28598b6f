"""Remedies keyed by the API at the user's line: one rule per nature of work
(:data:`~tfdiag.records.catalog.apis.NATURES`), each writing the change to that line.

A rule reads the anchored line (its code, the API it calls, how often it ran) and the
record, and returns one remedy: the change, with its code, and at most one alternative.
Every sentence is chosen by what the record shows: a rule that cannot say something true
of this line returns None, and the finding keeps its own text. The API's public name
comes from the catalog; the user's own names (the variable a line assigns, the object a
method is called on, the dataset a loop iterates) from the line's text.
"""

from __future__ import annotations

from tfdiag.advise.remedies.base import Remedy, Rule, Scene, evidence
from tfdiag.advise.remedies.build import construct, setup
from tfdiag.advise.remedies.eager import debug_switch, eager
from tfdiag.advise.remedies.work import (
    clear,
    convert,
    data_iterate,
    data_read,
    keras_loop,
    save,
    summary,
    to_host,
    weights_host,
)
from tfdiag.analysis.lines import UserLine

__all__ = ["RULES", "Remedy", "Scene", "evidence", "remedy"]


#: One rule per nature (a nature without one keeps the finding's own text).
RULES: dict[str, Rule] = {
    "debug-switch": debug_switch,
    "model-call": eager,
    "eager-op": eager,
    "train-op": eager,
    "metric": eager,
    "construct": construct,
    "setup": setup,
    "keras-loop": keras_loop,
    "data-iterate": data_iterate,
    "data-read": data_read,
    "weights-host": weights_host,
    "to-host": to_host,
    "convert": convert,
    "summary": summary,
    "save": save,
    "clear": clear,
}


def remedy(line: UserLine | None, scene: Scene | None = None) -> Remedy | None:
    """The remedy for the API at ``line`` (None: no rule, or none true of this line)."""
    if line is None or line.entry:
        return None
    rule = RULES.get(line.nature)
    return rule(line, scene or Scene()) if rule is not None else None
