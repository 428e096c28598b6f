"""``python -m tfdiag demo``: the seed-003 case — a tiny Dense model's ``predict`` × 20.

The seeds found ``predict`` on small data dominated by per-call input processing
and graph building; on TF 2.21 the same shape of cost is still there (a tf.data
pipeline and its traced functions, built on every call). This module imports
TensorFlow, so only the CLI imports it, on demand.
"""

from __future__ import annotations

from tfdiag.frontends.api import profile
from tfdiag.measure.budget import DEFAULT_BUDGET_S
from tfdiag.measure.seed_models import BATCH_SHAPE, tiny_model
from tfdiag.results.report import Report


def run_demo(
    flavour: str = "keras3",
    iterations: int = 20,
    *,
    sampling: bool = False,
    tf_profiler: bool = False,
    verify: bool = True,
    verify_s: float = DEFAULT_BUDGET_S,
) -> Report:
    """The seed-003 report; ``verify`` (on by default: the demo shows a fix measured on the
    call) times each finding's mechanical fix against the call as written."""
    import numpy as np

    model = tiny_model(flavour)
    x = np.random.default_rng(0).standard_normal(BATCH_SHAPE).astype("float32")
    return profile(
        model.predict,
        x,
        iterations=iterations,
        sampling=sampling,
        tf_profiler=tf_profiler,
        verify=verify,
        verify_s=verify_s,
        verbose=0,
    )
