"""The package is a stack of layers: every import goes down a layer (or stays inside one),
and no chain of imports comes back to where it started.

Every import statement counts — at the top of a module, inside a function, under
``TYPE_CHECKING`` — read from the source with ``ast``, so a lazy import cannot hide an
edge. There is no exception list: a failure here is a design change to make on purpose,
in docs/how-it-works.md and in :data:`LAYERS` together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "tfdiag"

#: Lowest first. A module's layer is that of its first component under ``tfdiag``.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("records",),
    ("analysis",),
    ("advise",),
    ("fix",),
    ("render",),
    ("results",),
    ("capture", "measure", "script"),
    ("keras", "frontends"),
    ("__init__", "__main__"),
)

#: Third-party packages a layer may not import at all (at any depth, lazily included).
HEAVY = ("tensorflow", "keras", "tf_keras", "numpy", "xprof", "tensorboard", "IPython")
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "records": (*HEAVY, "rich", "matplotlib", "pyinstrument"),
    "analysis": (*HEAVY, "rich", "matplotlib", "pyinstrument"),
    "advise": (*HEAVY, "rich", "matplotlib", "pyinstrument"),
    "fix": (*HEAVY, "rich", "matplotlib", "pyinstrument"),
    "render": HEAVY,
    "results": HEAVY,
}


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for level, names in enumerate(LAYERS):
        if top in names:
            return level
    raise AssertionError(f"{module}: in no layer (add its package to LAYERS and the docs)")


def imports(module: str) -> list[tuple[str, int]]:
    """``(imported name, line)`` for every import statement in ``module``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # `from pkg import module` imports the module
                full = f"{target}.{alias.name}"
                found.append((full if full in MODULES else target, node.lineno))
    return found


def internal(name: str) -> str | None:
    """The tfdiag module an imported name lives in, or None for a third-party import."""
    if name != "tfdiag" and not name.startswith("tfdiag."):
        return None
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


GRAPH: dict[str, set[str]] = {
    m: {t for name, _ in imports(m) if (t := internal(name)) is not None and t != m}
    for m in MODULES
}


def test_every_module_is_in_a_layer() -> None:
    assert len(MODULES) > 60
    for module in MODULES:
        layer_of(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_go_down(module: str) -> None:
    mine = layer_of(module)
    for name, line in imports(module):
        target = internal(name)
        if target is not None:
            assert layer_of(target) <= mine, (
                f"{module}:{line} imports {target}, a higher layer "
                f"({LAYERS[layer_of(target)]} above {LAYERS[mine]})"
            )


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("tfdiag.capture.")))
def test_capture_imports_nothing_from_measure(module: str) -> None:
    """capture and measure share a layer, but measure runs capture (compare, verify): the
    arrow goes one way. ``profile()``, which does both, is frontends/api.py."""
    for name, line in imports(module):
        target = internal(name)
        assert target is None or not target.startswith("tfdiag.measure"), (
            f"{module}:{line} imports {target}"
        )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_lower_layers_import_no_heavy_package(module: str) -> None:
    parts = module.split(".")
    banned = FORBIDDEN.get(parts[1] if len(parts) > 1 else "", ())
    for name, line in imports(module):
        assert name.split(".")[0] not in banned, f"{module}:{line} imports {name}"


#: What the renderers may import from analysis/: its value types, never a function. Every
#: figure a view shows is derived once, in the diagnosis (advise/diagnosis.py), and read off
#: it, so two views cannot show two computations of one number.
RENDER_MAY_IMPORT_FROM_ANALYSIS: dict[str, frozenset[str]] = {
    "tfdiag.analysis.classify": frozenset({"CostClass"}),
    "tfdiag.analysis.lines": frozenset({"UserLine"}),
    "tfdiag.analysis.pipeline": frozenset({"Analysis"}),
    "tfdiag.analysis.probe_figures": frozenset({"ProbeFigures"}),
    "tfdiag.analysis.timeline": frozenset({"ProgramTimeline"}),
}
#: The views of a job and of a script still derive their figures (no diagnosis value of
#: theirs yet, issue #34): this list may only shrink.
STILL_DERIVING = frozenset(
    {
        "tfdiag.render.job_console",
        "tfdiag.render.job_json",
        "tfdiag.render.script_console",
        "tfdiag.render.script_json",
    }
)


def analysis_imports(module: str) -> list[tuple[str, str, int]]:
    """``(analysis module, name, line)`` for each name ``module`` imports from analysis/
    (``name`` is ``*`` for ``import tfdiag.analysis...``)."""
    path = MODULES[module]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [
                (a.name, "*", node.lineno)
                for a in node.names
                if a.name == "tfdiag.analysis" or a.name.startswith("tfdiag.analysis.")
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tfdiag.analysis"):
            found += [(node.module or "", a.name, node.lineno) for a in node.names]
    return found


RENDERERS = sorted(m for m in MODULES if m.startswith("tfdiag.render."))


#: The still-deriving views are held to their list by the test below, not here.
@pytest.mark.parametrize("module", [m for m in RENDERERS if m not in STILL_DERIVING])
def test_renderers_import_only_types_from_analysis(module: str) -> None:
    for source, name, line in analysis_imports(module):
        assert name in RENDER_MAY_IMPORT_FROM_ANALYSIS.get(source, ()), (
            f"{module}:{line} imports {name} from {source}: a view reads its figures off the "
            "diagnosis (advise/diagnosis.py), it does not derive them"
        )


def test_what_renderers_may_import_from_analysis_are_types() -> None:
    import importlib

    for source, names in RENDER_MAY_IMPORT_FROM_ANALYSIS.items():
        for name in names:
            assert isinstance(getattr(importlib.import_module(source), name), type), name
    deriving = {
        m
        for m in RENDERERS
        for source, name, _ in analysis_imports(m)
        if name not in RENDER_MAY_IMPORT_FROM_ANALYSIS.get(source, ())
    }
    assert deriving == STILL_DERIVING  # one that stopped deriving leaves the list


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle() -> None:
    assert cycles(GRAPH) == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_import_reader_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from tfdiag.results.report import Report\n"
        "def f():\n    from tfdiag.render import formats\n    import tfdiag.frontends.cli\n"
    )
    path = tmp_path / "_probe_for_test.py"  # read as a module of records/, kept outside it
    path.write_text(source)
    MODULES["tfdiag.records._probe_for_test"] = path
    try:
        names = {n for n, _ in imports("tfdiag.records._probe_for_test")}
    finally:
        del MODULES["tfdiag.records._probe_for_test"]
    assert {"tfdiag.results.report", "tfdiag.render.formats", "tfdiag.frontends.cli"} <= names


def test_the_top_of_the_package_reads_as_the_pipeline() -> None:
    entries = sorted(p.name for p in PACKAGE.iterdir() if p.name != "__pycache__")
    assert len(entries) <= 13, entries  # 13: fix/ (tfdiag fix) joined the pipeline
    for names in LAYERS:
        for name in names:
            assert name in entries or f"{name}.py" in entries, name
