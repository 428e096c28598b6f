"""Input-pipeline variants for a ``tf.data.Dataset`` the call is given: a fix tfdiag can apply
to a dataset object it did not build, and the bound any input fix can reach.

tfdiag holds the finished dataset, not the code that built it, so it cannot rewrite a ``map``
to add ``num_parallel_calls``; what it can apply from outside is
``tf.data.Options().experimental_optimization.map_parallelization`` plus a final
``prefetch(AUTOTUNE)``. That option only parallelises *stateless* map functions — a
``py_function`` map stays as slow as before — so a fix that measures no gain here may still be
won by ``num_parallel_calls=tf.data.AUTOTUNE`` in your own code; the bound (the same steps on
batches taken from the pipeline beforehand) says how much is there to win. The datasets are
new objects: the user's dataset is left as it was.
"""

from __future__ import annotations

from typing import Any

from tfdiag.measure.verify.call import Call
from tfdiag.measure.verify.training import loss_of, trainable
from tfdiag.measure.verify.variant import INFERENCE, Built, NotApplicable, Variant
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
    "parallel": Variant("map_parallelization + prefetch", INFERENCE, _dataset_applies, _parallel),
    "bound": Variant("input bound", INFERENCE, _dataset_applies, _bound, role=BOUND),
}
