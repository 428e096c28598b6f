"""The backend table (tfdiag/records/catalog/backends.py) is the one place a backend is named:
no module outside the backend files spells a backend's name, as tests/test_roles.py keeps
framework paths out of the detectors. A layer that needs a backend reads its row (its label,
tracer, overlay, versions...) or compares with ``row.name``, so adding a backend is adding a
row, not a search through the package (docs/how-it-works.md, "Adding a backend")."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from tfdiag.records.catalog import FRAMEWORK_FILES, STACKS
from tfdiag.records.catalog.backends import BACKENDS, DEFAULT, NUMPY, PACKAGES, backend_named

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tfdiag"

#: The names the check looks for: every row's but NumPy's, which is also Python's array
#: package, imported by name across the package (Keras' NumPy backend is never branched on).
NAMES = frozenset(b.name for b in BACKENDS if b is not NUMPY)

#: The backend files: where a backend is named on purpose (the table and each backend's
#: catalog file, its fix overlay, its detectors' module, the tracers).
BACKEND_FILES = (
    "tfdiag/records/catalog/",
    "tfdiag/advise/fixes/",
    *(f"tfdiag/advise/keras_{b.name}.py" for b in BACKENDS),
    "tfdiag/capture/tracers.py",
)

#: A literal outside the backend files that names a *module* (an import name, a module path
#: prefix, a logger), not the backend: (file, literal) → why it stays.
ALLOWED: dict[tuple[str, str], str] = {
    ("tfdiag/capture/callback.py", "tensorflow"): "the module prefix of TF's OutOfRangeError",
    ("tfdiag/capture/environment.py", "tensorflow"): "flavour_of reads the classes' module "
    "paths (a raw TensorFlow program); _devices asks the loaded module for its devices",
    ("tfdiag/capture/environment.py", "jax"): "_devices asks the loaded JAX module",
    ("tfdiag/capture/facts.py", "tensorflow"): "reads tf.config off the loaded module",
    ("tfdiag/capture/jit.py", "jax"): "the JAX compile probe hooks the loaded jax module",
    ("tfdiag/capture/native_log.py", "tensorflow"): "imports TensorFlow with its log kept",
    ("tfdiag/capture/switches.py", "tensorflow"): "reads TF's debug switches off the module",
    ("tfdiag/capture/switches.py", "jax"): "reads JAX's debug switches off the module",
    ("tfdiag/fix/source.py", "tensorflow"): "the import name in the user's source (`import "
    "tensorflow as tf`), whose alias a fix writes",
    ("tfdiag/measure/run.py", "tensorflow"): "TensorFlow's logger (its retracing warning)",
    ("tfdiag/measure/subject.py", "tensorflow"): "whether the module is loaded (a copy that "
    "must not import it)",
    ("tfdiag/measure/verify/inference.py", "tensorflow"): "a tensor's module path",
}


def _spelled() -> dict[tuple[str, str], list[int]]:
    """Every backend-name string literal outside the backend files: (file, name) → lines."""
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(BACKEND_FILES):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in NAMES:
                found.setdefault((rel, node.value), []).append(node.lineno)
    return found


def test_no_backend_name_is_spelled_outside_the_backend_files() -> None:
    odd = [
        f"{f}:{n[0]}: {name!r}" for (f, name), n in _spelled().items() if (f, name) not in ALLOWED
    ]
    assert not odd, (
        "a backend named outside tfdiag/records/catalog/backends.py: read its row "
        f"(backend_named, DEFAULT, JAX.name...) instead, or allow a module name: {odd}"
    )


def test_every_allowed_literal_is_still_there() -> None:
    stale = sorted(set(ALLOWED) - set(_spelled()))
    assert not stale, f"allowed but no longer spelled (drop the entry): {stale}"


def test_each_row_is_whole() -> None:
    assert BACKENDS[0] is DEFAULT
    assert len({b.name for b in BACKENDS}) == len(BACKENDS)
    for b in BACKENDS:
        assert backend_named(b.name) is b
        assert set(b.catalog_files) <= set(FRAMEWORK_FILES), b.name
        assert b.diagnosed or b.line, f"{b.name}: not diagnosed says why"
        assert not (b.diagnosed and b.line), f"{b.name}: a diagnosed backend has no line"
        if b.overlay:
            overlay = importlib.import_module(f"tfdiag.advise.fixes.{b.name}")
            assert {"FIXES", "TITLES", "KEPT"} <= set(vars(overlay)), b.name
        if b is not DEFAULT and b.diagnosed and b.catalog_files:
            assert any(set(b.catalog_files) <= set(files) for files in STACKS.values()), b.name
    overlays = {p.stem for p in (PACKAGE / "advise" / "fixes").glob("*.py")} - {"__init__"}
    assert overlays == {b.name for b in BACKENDS if b.overlay}
    assert len({p.key for p in PACKAGES}) == len(PACKAGES)


def test_each_tracer_has_a_row() -> None:
    from tfdiag.capture.tracers import TRACERS

    for name in TRACERS:
        row = backend_named(name)
        assert row is not None and row.profiler, name


def test_the_environment_json_keeps_the_old_keys_in_the_old_order() -> None:
    """Versions are read off the table, and old readers still find each package's key."""
    from tfdiag.records.report import Environment

    old = ["python", "platform", "tensorflow", "keras", "tf_keras", "cpu_count", "devices"]
    old += ["backend", "jax", "jaxlib"]
    assert list(Environment().to_json()) == old
    env = Environment(versions={"jax": "0.10.2", "keras": "3.15.1"}, backend="jax")
    assert Environment.from_json(env.to_json()) == env
    assert env.stack() == ["Keras 3.15.1", "jax 0.10.2"]
