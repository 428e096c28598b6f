"""Findings a user adds as data, the way they add culprit rules.

A :class:`FindingRule` says: when the functions matching these globs take at least
``min_share`` of the steady state (cumulative), report this finding with this fix.
It is saved with the report, so ``explain`` re-runs it; in Python a
:class:`~tfdiag.advise.finding.FindingSpec` with any detector is the general form.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

from tfdiag.records.catalog.rule import read_json_list
from tfdiag.records.errors import InputError
from tfdiag.records.fields import text

_TEXT = ("id", "title", "path", "function", "fix")


@dataclass(frozen=True)
class FindingRule:
    """A finding defined as data.

    Attributes:
        id: the finding's id (``my-slow-loader``); must not be a built-in one.
        title: one line.
        path: glob on the module path (as in :class:`~tfdiag.records.catalog.Rule`).
        function: glob on the qualified name (or its last component).
        fix: what to do, one line or a few.
        min_share: fires when the heaviest matching function's cumulative time is at least
            this share of the steady state (0–1).
    """

    id: str
    title: str
    path: str
    function: str
    fix: str
    min_share: float = 0.10

    def __post_init__(self) -> None:
        for key in _TEXT:
            if not isinstance(getattr(self, key), str) or not getattr(self, key):
                raise InputError(f"a finding rule's {key!r} must be a non-empty string")
            text(getattr(self, key), f"a finding rule's {key!r}")
        share = self.min_share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
            raise InputError(f"a finding rule's 'min_share' must be in (0, 1], got {share!r}")

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> FindingRule:
        if not isinstance(data, dict):
            raise InputError("a finding rule must be an object with id, title, path, function, fix")
        missing = [k for k in _TEXT if k not in data]
        if missing:
            raise InputError(f"a finding rule is missing {missing[0]!r}")
        return cls(**{k: data[k] for k in (*_TEXT, "min_share") if k in data})


def load_finding_rules(path: str | os.PathLike[str]) -> tuple[FindingRule, ...]:
    """Read finding rules from a JSON file: a list of objects (see docs/catalog.md)."""
    return tuple(read_json_list(path, "finding rules", FindingRule.from_json))
