"""The backends tfdiag knows, one row each: the one place a backend is named.

Keras 3 picks one backend per process (``keras.backend.backend()``); tf_keras and plain
TensorFlow programs run on TensorFlow. Each layer reads what it needs off these rows
instead of naming a backend itself (tests/test_backends.py checks that no module outside
the backend files spells one):

- the catalog its culprits come from (``catalog_files``, tfdiag/records/catalog/),
- whether the findings table diagnoses it (``diagnosed``; ``line`` says why not),
- its fix texts beside TensorFlow's (tfdiag/advise/fixes/<name>.py, applied by
  tfdiag/advise/table.py),
- the tracer of its timed pass (tfdiag/capture/tracers.py) and its name (``profiler``),
- the packages whose versions a report records (``versions``),
- whether ``compare``/``verify`` measure on it (``measured``; tfdiag/measure/).

A new backend is a row here; docs/how-it-works.md says which files go with it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Package:
    """A package whose version a report records when the process has imported it."""

    #: Its key in ``Environment.versions`` and in the report's ``environment`` JSON.
    key: str
    #: How the stack line names it (``TensorFlow 2.21.0``).
    label: str
    #: Its top-level import name: a package installed but never imported is no part of the
    #: run's stack.
    module: str
    #: The distributions that install it, the first installed one giving the version.
    dists: tuple[str, ...]
    #: One of the packages of the environment's first JSON layout, written before the
    #: machine (``cpu_count``); the others follow ``backend``. ``compare`` names a change in
    #: these (analysis/diff.py).
    first_layout: bool = False


@dataclass(frozen=True)
class Backend:
    """One backend Keras (or a program without it) computes with."""

    #: Keras 3's name for it (``keras.backend.backend()``), the ``environment.backend`` of
    #: a report and the ``<name>:`` prefix of a finding's fix keys.
    name: str
    #: How a report names it (``Keras 3 on JAX``).
    label: str
    #: Its top-level import name.
    module: str
    #: Its framework files in tfdiag/records/catalog/ (:data:`FRAMEWORK_FILES`).
    catalog_files: tuple[str, ...] = ()
    #: Whether the built-in findings are made on it (the catalog and detectors know it).
    diagnosed: bool = True
    #: Where it is not diagnosed, the one line a report says instead of findings.
    line: str = ""
    #: The packages of its own whose versions a report records.
    versions: tuple[Package, ...] = ()
    #: Whether tfdiag/advise/fixes/<name>.py gives its fix texts and titles (else the
    #: default backend's are its own).
    overlay: bool = False
    #: The tracer of its timed pass, by name (``""``: none).
    profiler: str = ""
    #: Whether ``compare`` and ``verify`` measure on it (their methods and variants).
    measured: bool = False


TENSORFLOW = Backend(
    name="tensorflow",
    label="TensorFlow",
    module="tensorflow",
    catalog_files=("tf_keras", "tensorflow", "legacy"),
    versions=(
        Package(
            "tensorflow",
            "TensorFlow",
            "tensorflow",
            ("tensorflow", "tensorflow-cpu"),
            first_layout=True,
        ),
    ),
    profiler="TF profiler",
    measured=True,
)
JAX = Backend(
    name="jax",
    label="JAX",
    module="jax",
    catalog_files=("jax",),
    overlay=True,
    versions=(
        Package("jax", "jax", "jax", ("jax",)),
        Package("jaxlib", "jaxlib", "jaxlib", ("jaxlib",)),
    ),
    profiler="JAX profiler",
    measured=True,
)
TORCH = Backend(
    name="torch",
    label="PyTorch",
    module="torch",
    diagnosed=False,
    line="Keras 3 on the PyTorch backend is not diagnosed yet: the profile, the timings "
    "and the tables above are measured, but no built-in finding is made (its culprits are "
    "not in the catalog); run on the JAX or TensorFlow backend (KERAS_BACKEND) to diagnose "
    "the same model",
)
#: Keras' NumPy backend (inference only): no catalog file of its own, the shared findings
#: run on it as they always have.
NUMPY = Backend(name="numpy", label="NumPy", module="numpy")

#: Every backend, Keras' default first.
BACKENDS: tuple[Backend, ...] = (TENSORFLOW, JAX, TORCH, NUMPY)

#: Keras' default backend, the one tf_keras and plain TensorFlow programs run on; the
#: findings table's own fix texts and titles are its (the others' are overlays).
DEFAULT = TENSORFLOW

#: The front-end packages a report records beside the backends' own.
FRONTENDS: tuple[Package, ...] = (
    Package("keras", "Keras", "keras", ("keras",), first_layout=True),
    Package("tf_keras", "tf_keras", "tf_keras", ("tf-keras", "tf_keras"), first_layout=True),
)

#: Every package a report records, in the stack line's order.
PACKAGES: tuple[Package, ...] = (
    *DEFAULT.versions,
    *FRONTENDS,
    *(p for b in BACKENDS if b is not DEFAULT for p in b.versions),
)

_BY_NAME = {b.name: b for b in BACKENDS}


def backend_named(name: str | None) -> Backend | None:
    """The row of ``name`` (None: a backend tfdiag has no row for, or none recorded)."""
    return _BY_NAME.get(name) if name is not None else None


def label_of(name: str) -> str:
    """``JAX`` for ``jax``; a backend without a row is named as Keras names it."""
    row = _BY_NAME.get(name)
    return row.label if row is not None else name


def profiler_of(name: str | None) -> str:
    """The name of the tracer the timed pass ran on ``name``: its row's, else the default
    backend's (``tfdiag.profile`` tries TensorFlow's profiler wherever no other applies)."""
    row = backend_named(name)
    return row.profiler if row is not None and row.profiler else DEFAULT.profiler


def undiagnosed_line(name: str | None) -> str | None:
    """The one line that says ``name`` is not diagnosed (None: it is, or it has no row)."""
    row = backend_named(name)
    return row.line if row is not None and not row.diagnosed else None


#: The backends ``compare`` and ``verify`` measure on: a variant written in Keras' own API
#: is built for all of them.
MEASURED: frozenset[str] = frozenset(b.name for b in BACKENDS if b.measured)
