"""Which functions of a profile hold a role (:data:`~tfdiag.records.catalog.ROLES`).

A function holds a role when a rule giving that role matches it: its path glob the module
path, its name glob the qualified name or its last component. Every matching rule counts,
not only the first (the one that decides the category), so a role-only rule never shadows
a category and a user's rule can give their own function a role. Each role is resolved on
first use, with the profile's index (one lookup per rule), and kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tfdiag.records.catalog import Rule
from tfdiag.records.index import glob_matcher, last_name
from tfdiag.records.paths import normalize_path
from tfdiag.records.stats import ProfileStats


class Roles:
    """The functions of one profile by role."""

    def __init__(self, stats: ProfileStats, rules: Iterable[Rule]) -> None:
        self._stats = stats
        self._rules: dict[str, list[Rule]] = {}
        for rule in rules:
            for role in rule.roles:
                self._rules.setdefault(role, []).append(rule)
        self._rows: dict[tuple[str, str], tuple[int, ...]] = {}
        self._members: dict[str, frozenset[int]] = {}
        self._held: dict[tuple[int, str], bool] = {}

    def given(self) -> frozenset[str]:
        """The roles some rule gives (whether or not a function of this profile holds them)."""
        return frozenset(self._rules)

    def with_role(self, role: str, name: str = "*") -> tuple[int, ...]:
        """The functions holding ``role``, in table order; with ``name``, only those whose
        qualified or last name matches that glob."""
        key = (role, name)
        found = self._rows.get(key)
        if found is None:
            if name == "*":
                index = self._stats.index
                rows: set[int] = set()
                for rule in self._rules.get(role, ()):
                    rows.update(index.find(rule.path, rule.function))
                found = tuple(sorted(rows))
            else:
                test = glob_matcher(name)
                fns = self._stats.functions
                found = tuple(
                    i
                    for i in self.with_role(role)
                    if test(fns[i].name) or test(last_name(fns[i].name))
                )
            self._rows[key] = found
        return found

    def has_role(self, i: int, role: str) -> bool:
        """Does function ``i`` hold ``role``? One row's test, for a detector that asks about
        a few rows (a role given to every ``__init__`` need not be listed whole)."""
        members = self._members.get(role)
        if members is None and (role, "*") in self._rows:
            members = self._members[role] = frozenset(self._rows[(role, "*")])
        if members is not None:
            return i in members
        key = (i, role)
        held = self._held.get(key)
        if held is None:
            fn = self._stats.functions[i]
            held = self._held[key] = _matches(
                self._rules.get(role, ()), normalize_path(fn.file), fn.name
            )
        return held


def _matches(rules: Sequence[Rule], path: str, name: str) -> bool:
    last = last_name(name)
    for rule in rules:
        if glob_matcher(rule.path)(path):
            test = glob_matcher(rule.function)
            if test(name) or test(last):
                return True
    return False
