"""``tfdiag fix``'s view: each finding, its fix, and under it the patch block (the diff
and what running both versions showed) or why there is no patch; and its JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from tfdiag.fix.patch import Proposal
from tfdiag.records.report import SCHEMA_VERSION
from tfdiag.render.patch_block import PatchBlock
from tfdiag.render.safe import Plain


def _one(p: Proposal) -> RenderableType:
    where = f" {p.location}" if p.location else ""
    head = Text.assemble((f"[{p.finding}]", "bold"), where)
    return Group(head, Text("  Fix: " + p.fix), PatchBlock(p.records()[0], indent=2))


def fix_view(script: str, proposals: Sequence[Proposal]) -> RenderableType:
    """Every proposal, then one line: how many patches are offered."""
    offered = sum(p.offered for p in proposals)
    if not proposals:
        return Plain(Text(f"{script}: nothing to fix (no finding)"))
    parts: list[RenderableType] = []
    for p in proposals:
        parts += [_one(p), Text("")]
    if offered:
        tail = f"{offered} patch(es) verified: `tfdiag fix --apply {script}` writes them"
    elif any(p.edit is not None for p in proposals):
        tail = f"{script}: nothing to fix (no patch verified faster with matching output)"
    else:
        tail = f"{script}: nothing to fix (no finding has a mechanical edit)"
    parts.append(Text(tail, style="bold"))
    return Plain(Group(*parts))


def fix_to_json(script: str, argv: Sequence[str], proposals: Sequence[Proposal]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "fix",
        "script": script,
        "argv": list(argv),
        "proposals": [p.to_json() for p in proposals],
        "offered": sum(p.offered for p in proposals),
    }
