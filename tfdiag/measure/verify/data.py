"""Input-pipeline variants for a ``tf.data.Dataset`` the call is given: the fixes tfdiag can
apply to a finished dataset it did not build, and the bound any input fix can reach.

tfdiag holds the finished dataset, not the code that built it, so it rewrites the dataset's
graph (:mod:`tfdiag.measure.verify.rewrite`): every sequential ``map`` and ``interleave``
made parallel (``num_parallel_calls=tf.data.AUTOTUNE``, a ``py_function`` map included), and a
final ``prefetch(AUTOTUNE)``; where the graph cannot be rewritten, the
``map_parallelization`` option (stateless maps only) is applied instead. Where the pipeline
holds no random op (no shuffle, no random augmentation) ``cache()`` is a candidate too: every
pass after the first reads the cache. The bound (the same steps on batches taken from the
pipeline beforehand) says how much is there to win. The datasets are new objects: the user's
dataset is left as it was.
"""

from __future__ import annotations

from typing import Any

from tfdiag.measure.verify.call import Call
from tfdiag.measure.verify.rewrite import Rewritten, parallel
from tfdiag.measure.verify.training import loss_of, trainable
from tfdiag.measure.verify.variant import EVERY_BACKEND, INFERENCE, Built, NotApplicable, Variant
from tfdiag.records.verification import BOUND

#: The bound caches the whole pipeline in memory: at most this many elements.
MAX_CACHED = 100_000


def _dataset_applies(call: Call) -> str | None:
    if call.x_kind != "tf.data.Dataset" or call.named is None:
        return "x is not a tf.data.Dataset (tfdiag can rewrite only a dataset it is given)"
    if call.method not in ("fit", "predict", "evaluate"):
        return f"the call is {call.method or 'not a Keras method'}"
    if call.method == "fit":
        return trainable(call)
    return None


def _run_with(call: Call, ds: Any, fix: str) -> Built:
    named = {**(call.named or {}), "x": ds}
    if call.method == "fit":
        clone = call.clone()
        method = clone.fit

        def train() -> Any:
            return method(**named)

        return Built(run=train, fix=fix, loss=lambda: loss_of(call, clone))
    method = getattr(call.model, call.method)

    def infer() -> Any:
        return method(**named)

    return Built(run=infer, result=infer, fix=fix)


def _parallel(call: Call) -> Built:
    """Every sequential map/interleave of the dataset made parallel, then prefetch."""
    try:
        done = parallel(call.tf, call.x)
    except ValueError as exc:
        built = _parallel_option(call)
        built.note = f"{built.note}; the graph rewrite did not apply: {exc}"
        return built
    fix = (
        f"# in the code that builds the dataset: {_what(done)}\n"
        "ds = ds.map(f, num_parallel_calls=tf.data.AUTOTUNE)  # each map(f) so\n"
        "ds = ds.prefetch(tf.data.AUTOTUNE)  # last\n" + call.code()
    )
    built = _run_with(call, done.dataset, fix)
    built.note = f"measured: the dataset's graph rewritten ({_what(done)}) + prefetch"
    return built


def _what(done: Rewritten) -> str:
    parts = []
    if done.maps:
        parts.append(f"{done.maps} map(s) given num_parallel_calls=tf.data.AUTOTUNE")
    if done.interleaves:
        parts.append(f"{done.interleaves} interleave(s) given num_parallel_calls=AUTOTUNE")
    return ", ".join(parts)


def _cache_applies(call: Call) -> str | None:
    why = _dataset_applies(call)
    if why is not None:
        return why
    n = int(call.x.cardinality())
    if n < 0 or n > MAX_CACHED:
        return "the dataset is infinite, of unknown length or too long to cache"
    return None


def _cache(call: Call) -> Built:
    """``cache()`` after the (parallel) pipeline: a candidate only where it is deterministic."""
    tf = call.tf
    try:
        done = parallel(tf, call.x)
        ds, deterministic = done.dataset, done.deterministic
    except ValueError:
        ds, deterministic = call.x, None
    if deterministic is False:
        raise NotApplicable("the pipeline holds a random op (a shuffle or random augmentation)")
    if deterministic is None:
        raise NotApplicable("the dataset's graph could not be read to see it is deterministic")
    fix = "ds = ds.cache().prefetch(tf.data.AUTOTUNE)  # after the expensive steps\n"
    built = _run_with(call, ds.cache().prefetch(tf.data.AUTOTUNE), fix + call.code())
    built.note = (
        "candidate: cache() (the pipeline holds no random op, so every pass gives the same "
        "elements): the first pass fills the cache, every later pass (epoch) reads it"
    )
    return built


def _parallel_option(call: Call) -> Built:
    tf = call.tf
    options = tf.data.Options()
    options.experimental_optimization.map_parallelization = True
    ds = call.x.with_options(options).prefetch(tf.data.AUTOTUNE)
    fix = (
        "options = tf.data.Options()\n"
        "options.experimental_optimization.map_parallelization = True\n"
        "ds = ds.with_options(options).prefetch(tf.data.AUTOTUNE)\n" + call.code()
    )
    built = _run_with(call, ds, fix)
    built.note = (
        "measured: map_parallelization + prefetch applied from outside (stateless maps only); "
        "num_parallel_calls=tf.data.AUTOTUNE on your map() is the fix to try in your code"
    )
    return built


def _bound(call: Call) -> Built:
    tf = call.tf
    n = int(call.x.cardinality())
    if n < 0 or n > MAX_CACHED:
        raise NotApplicable("the dataset is infinite, of unknown length or too long to cache")
    cached = call.x.cache()
    for _ in cached:  # taken from the pipeline beforehand, untimed
        pass
    ds = cached.prefetch(tf.data.AUTOTUNE)
    fix = "ds = ds.cache()  # filled once beforehand: the steps alone, no input work\n"
    built = _run_with(call, ds, fix + call.code())
    built.note = "bound: the same steps on batches taken from the pipeline beforehand"
    return built


#: ``kind`` is decided per call: a ``fit`` makes these training variants (run on clones).
DATA_VARIANTS = {
    "parallel": Variant(
        "parallel map + prefetch", INFERENCE, _dataset_applies, _parallel, backends=EVERY_BACKEND
    ),
    "cache": Variant("cache", INFERENCE, _cache_applies, _cache, backends=EVERY_BACKEND),
    "bound": Variant(
        "input bound", INFERENCE, _dataset_applies, _bound, role=BOUND, backends=EVERY_BACKEND
    ),
}
