"""``python -m tfdiag bench``: the seeds' grid, timed the tfdiag way.

Models small/medium/large × data small/medium/large (the seeds skip the large model
on small data: it does not fit), and in each the seeds' eight training
configurations: ``fit`` vs ``train_on_batch`` × NumPy vs ``tf.data`` × graph vs eager
(``compile(run_eagerly=True)``). As in the seeds, one iteration is one batch of 32,
a block of N iterations is N calls (``fit`` on tf.data: one ``fit`` call with
``steps_per_epoch=N``), and a call outside the timing builds the model's graphs
first. Unlike the seeds, the eight configurations of one model × data are timed
interleaved, block by block, and every figure is a median of several blocks with
its IQR.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfdiag.capture.environment import current_environment
from tfdiag.measure.seed_models import batch_shape, build_model, fits, make_data
from tfdiag.measure.timing import measure
from tfdiag.records.bench import BenchCell, BenchSettings
from tfdiag.records.clock import Clock, Progress, now_iso
from tfdiag.records.errors import InputError
from tfdiag.results.bench import BenchResult

LOOPS = ("fit", "train_on_batch")
INPUTS = ("numpy", "tf.data")
MODES = ("graph", "eager")

#: The CI-sized subset: small model on small data, few iterations.
QUICK = BenchSettings(
    models=("small",), data=("small",), flavours=("keras3",), iterations=5, repeats=3, warmup=1
)


@dataclass(frozen=True)
class Config:
    model: str
    data: str
    flavour: str


def configs(settings: BenchSettings) -> list[Config]:
    """The grid's (model, data, flavour) points, the ones that fit."""
    points = [
        Config(m, d, f)
        for f in settings.flavours
        for m in settings.models
        for d in settings.data
        if fits(m, d)
    ]
    if not points:
        raise InputError("nothing to run: the large model does not fit the small data")
    return points


def _runner(loop: str, source: str, model: Any, x: Any, y: Any) -> Callable[[int], object]:
    if source == "tf.data":
        import tensorflow as tf

        ds = tf.data.Dataset.from_tensors((x, y)).repeat()
        if loop == "fit":
            return lambda n: model.fit(ds, epochs=1, steps_per_epoch=n, shuffle=False, verbose=0)
        batches = iter(ds)

        def from_iterator(n: int) -> None:
            for _ in range(n):
                xb, yb = next(batches)
                model.train_on_batch(xb, yb)

        return from_iterator
    if loop == "fit":

        def fit(n: int) -> None:
            for _ in range(n):
                model.fit(x, y, epochs=1, verbose=0)

        return fit

    def train_on_batch(n: int) -> None:
        for _ in range(n):
            model.train_on_batch(x, y)

    return train_on_batch


def run_bench(
    settings: BenchSettings,
    *,
    on_step: Progress | None = None,
    clock: Clock = time.perf_counter,
) -> BenchResult:
    """Run the grid; one model per cell, each point's eight cells timed interleaved."""
    points = configs(settings)
    per_point = len(LOOPS) * len(INPUTS) * len(MODES) * (settings.warmup + settings.repeats)
    total = per_point * len(points)
    cells: list[BenchCell] = []
    for k, point in enumerate(points):
        shape = batch_shape(point.data)
        x, y = make_data(shape)
        keys = [(loop, src, mode) for loop in LOOPS for src in INPUTS for mode in MODES]
        runners = []
        for loop, src, mode in keys:
            model = build_model(point.model, shape, point.flavour, run_eagerly=mode == "eager")
            runners.append((f"{loop} · {src} · {mode}", _runner(loop, src, model, x, y)))

        def step(
            done: int,
            _total: int,
            name: str,
            offset: int = k * per_point,
            where: str = f"{point.model} model · {point.data} data",
        ) -> None:
            if on_step is not None:
                on_step(offset + done, total, f"{where} · {name}")

        timed = measure(
            runners,
            warmup=settings.warmup,
            repeats=settings.repeats,
            number=settings.iterations_for(point.model),
            clock=clock,
            on_step=step,
        )
        for (loop, src, mode), t in zip(keys, timed):
            cells.append(
                BenchCell(
                    model=point.model,
                    data=point.data,
                    flavour=point.flavour,
                    loop=loop,
                    input=src,
                    mode=mode,
                    number=t.number,
                    times_s=t.times_s,
                    warmup_s=t.warmup_s,
                    error=t.error,
                )
            )
        del runners
        gc.collect()
    return BenchResult(
        cells=tuple(cells),
        settings=settings,
        environment=current_environment(),
        created=now_iso(),
    )
