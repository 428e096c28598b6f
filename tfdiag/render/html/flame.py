"""Call trees for the flame graph: ``{"name", "value", "children"}`` nodes, values in
microseconds, each node's value its total time (its children's included).

Two sources: the cProfile table, a call *graph* (per-caller edges, no full stacks), laid
out as a tree the way snakeviz and gprof2dot do — a function's callees below it, each
edge's time scaled by the share of the function's time that this place in the tree
stands for; and the sampling probe's stacks, which are real stacks and merge exactly.
Both are pruned (nodes under :data:`MIN_SHARE` of the root, depth :data:`MAX_DEPTH`,
:data:`MAX_NODES` in all) so a large profile still gives a page a browser opens quickly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tfdiag.records.function_stat import FunctionStat, builtin_name
from tfdiag.records.probes import SamplingRecord
from tfdiag.records.stats import ProfileStats

#: A node under this share of the root's time is left out (its parent's bar shows it).
MIN_SHARE = 0.002
MAX_DEPTH = 80
MAX_NODES = 4000

Node = dict[str, Any]


def _name(file: str, name: str) -> str:
    if file == "~":
        return builtin_name(name)
    base = file.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{base}:{name}"


def _us(seconds: float) -> int:
    return max(round(seconds * 1e6), 0)


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_NODES

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def profile_tree(stats: ProfileStats, label: str = "all") -> Node | None:
    """The cProfile table as a tree under one root (``label``), or None when it is empty."""
    fns = stats.functions
    if not fns or stats.total_s <= 0:
        return None
    callees: list[list[tuple[int, float]]] = [[] for _ in fns]
    for j, fn in enumerate(fns):
        for edge in fn.callers:
            if 0 <= edge.caller < len(fns) and edge.caller != j:
                callees[edge.caller].append((j, edge.cum_s))
    for row in callees:
        row.sort(key=lambda c: c[1], reverse=True)
    roots = [i for i, fn in enumerate(fns) if not fn.callers]
    if not roots:  # every function has a caller (a cycle at the top): start from the widest
        roots = [max(range(len(fns)), key=lambda i: fns[i].cum_s)]
    total = sum(fns[i].cum_s for i in roots) or stats.total_s
    floor = total * MIN_SHARE
    budget = _Budget()

    def grow(i: int, value: float, path: frozenset[int], depth: int) -> Node:
        fn: FunctionStat = fns[i]
        node: Node = {"name": _name(fn.file, fn.name), "value": _us(value)}
        if depth >= MAX_DEPTH or fn.cum_s <= 0:
            return node
        scale = min(value / fn.cum_s, 1.0)
        children: list[Node] = []
        room = value
        for j, edge_s in callees[i]:
            share = min(edge_s * scale, room)
            if j in path or share < floor or not budget.take():
                continue
            room -= share
            children.append(grow(j, share, path | {j}, depth + 1))
        if children:
            node["children"] = children
        return node

    tops = [grow(i, fns[i].cum_s, frozenset({i}), 1) for i in roots if fns[i].cum_s >= floor]
    return {"name": label, "value": _us(total), "children": tops}


def sampled_tree(record: SamplingRecord, label: str = "sampled") -> Node | None:
    """The sampled stacks merged into one tree (outermost frame first), or None."""
    if not record.stacks or record.sampled_s <= 0:
        return None
    root: dict[str, Any] = {"s": 0.0, "c": {}}
    for stack in record.stacks:
        root["s"] += stack.seconds
        here = root
        for depth, index in enumerate(stack.frames):
            if depth >= MAX_DEPTH or not 0 <= index < len(record.frames):
                break
            here = here["c"].setdefault(index, {"s": 0.0, "c": {}})
            here["s"] += stack.seconds
    floor = root["s"] * MIN_SHARE
    budget = _Budget()
    frames: Sequence[tuple[str, int, str]] = record.frames

    def emit(name: str, raw: dict[str, Any]) -> Node:
        node: Node = {"name": name, "value": _us(raw["s"])}
        kids = sorted(raw["c"].items(), key=lambda kv: kv[1]["s"], reverse=True)
        children = [
            emit(_name(frames[i][0], frames[i][2]), sub)
            for i, sub in kids
            if sub["s"] >= floor and budget.take()
        ]
        if children:
            node["children"] = children
        return node

    return emit(label, root)
