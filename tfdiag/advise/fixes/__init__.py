"""The fix overlays: the fix texts and titles of a backend other than the default, beside
the findings table's own (the default backend's, TensorFlow's).

A backend whose row says ``overlay=True`` (:mod:`tfdiag.records.catalog.backends`) has a
module here named after it (``jax.py``) that defines:

- ``FIXES``: finding id → {variant or call kind: text}, its ``<backend>:`` keys, which
  :meth:`~tfdiag.advise.finding.FindingSpec.fix_for` tries first on that backend;
- ``TITLES``: finding id → its title there, where the table's own names TensorFlow;
- ``KEPT``: finding id → the variants whose TensorFlow texts hold there as they are (copied
  under its keys, so its ``other`` does not hide them).

:func:`with_overlays` puts them on a row: one loop over the backend rows.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from importlib import import_module
from types import ModuleType
from typing import TypeVar

from tfdiag.advise.finding import FindingSpec
from tfdiag.records.catalog.backends import BACKENDS

C = TypeVar("C")


@lru_cache(maxsize=1)
def overlays() -> tuple[tuple[str, ModuleType], ...]:
    """Each backend with an overlay and its module, in the rows' order."""
    return tuple((b.name, import_module(f"{__name__}.{b.name}")) for b in BACKENDS if b.overlay)


def with_overlays(spec: FindingSpec[C]) -> FindingSpec[C]:
    """``spec`` with every overlay's fix texts and titles beside its own."""
    fixes, titles = dict(spec.fixes), dict(spec.titles)
    for name, overlay in overlays():
        fixes.update({f"{name}:{k}": v for k, v in overlay.FIXES.get(spec.id, {}).items()})
        kept = (k for k in overlay.KEPT.get(spec.id, ()) if k in spec.fixes)
        fixes.update({f"{name}:{k}": spec.fixes[k] for k in kept})
        if spec.id in overlay.TITLES:
            titles[name] = overlay.TITLES[spec.id]
    return replace(spec, fixes=fixes, titles=titles)
