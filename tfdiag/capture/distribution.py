"""Read a model's ``tf.distribute`` strategy, duck-typed (no TensorFlow import): which
strategy, the cluster, this worker's task, the replicas in sync, its devices.

Keras 3 and tf_keras both keep the strategy a model was built under in
``model.distribute_strategy`` (inside a Keras 3 callback ``tf.distribute.get_strategy()``
is the default one, so the model's is read). The cluster comes from the strategy's
cluster resolver (``TF_CONFIG`` for MultiWorkerMirroredStrategy); a single-process
strategy (MirroredStrategy) has none.
"""

from __future__ import annotations

from typing import Any

from tfdiag.records.distributed import Distribution, strategy_name

#: The strategy a model has when it was built under none.
_DEFAULT = ("_DefaultDistributionStrategy", "_DefaultDistributionStrategyV1")


def _safe(read: Any, default: Any = None) -> Any:
    try:
        return read()
    except Exception:  # a half-built strategy, an attribute a later TF renamed
        return default


def distribution_of(model: Any) -> Distribution | None:
    """The model's strategy and this worker's task, or ``None`` under the default strategy."""
    strategy = _safe(lambda: model.distribute_strategy)
    if strategy is None or type(strategy).__name__ in _DEFAULT:
        return None
    resolver = _safe(lambda: strategy.cluster_resolver)
    task_type = _safe(lambda: resolver.task_type) if resolver is not None else None
    task_id = _safe(lambda: resolver.task_id) if resolver is not None else None
    spec = _safe(lambda: resolver.cluster_spec().as_dict(), {}) if resolver is not None else {}
    cluster = []
    for job, tasks in sorted((spec or {}).items()):
        if isinstance(tasks, dict):  # sparse cluster spec: {index: address}
            tasks = [tasks[k] for k in sorted(tasks)]
        cluster.append((str(job), tuple(str(a) for a in tasks)))
    if not isinstance(task_type, str) or not task_type or not isinstance(task_id, int):
        task_type, task_id = None, None
    replicas = _safe(lambda: int(strategy.num_replicas_in_sync), 1)
    devices = _safe(lambda: tuple(str(d) for d in strategy.extended.worker_devices), ())
    return Distribution(
        strategy=strategy_name(type(strategy).__name__),
        task_type=task_type,
        task_index=task_id,
        cluster=tuple(cluster) if task_type is not None else (),
        num_replicas=max(replicas, 1),
        devices=devices,
    )


def tf_profiler_choice(
    asked: bool | None, dist: Distribution | None
) -> tuple[bool | None, str | None]:
    """Whether the Keras callback's TF profiler probe runs (``None``: when TensorFlow is
    imported), and a note for the report when it is left off.

    In a multi-worker job it runs only when asked for (``tf_profiler=True``): TF 2.21's
    profiler crashes the worker (a segfault in ``tf.profiler.experimental.stop``) in about one
    MultiWorkerMirroredStrategy run in four on loopback, whichever batch it stops after; a
    profiler server in each worker and ``tfdiag capture`` read the same figures from outside.
    """
    if asked is not None or dist is None or sum(len(a) for _, a in dist.cluster) < 2:
        return asked, None
    return False, (
        "TF profiler probe off in a multi-worker job (tf_profiler=True runs it: TF 2.21's "
        "profiler can crash a worker when it stops in-process); for collective op times, "
        "start a profiler server in each worker and run tfdiag capture"
    )
