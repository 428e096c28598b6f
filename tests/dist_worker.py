"""One worker of a 2-worker MultiWorkerMirroredStrategy job on loopback (tf_keras), for
tests/test_distributed_tf.py: ``python dist_worker.py OUT_DIR MODE``.

MODE ``callback``: profile the fit with tfdiag's ProfileCallback, saved as OUT_DIR/w<task>.
MODE ``server``: no tfdiag in the worker at all, only a TF profiler server on
``PROF_PORT``; it prints ``ready`` and waits for OUT_DIR/go before it trains, prints
``training`` once the step is built (so a remote capture sees steady steps), and trains
until a worker sees OUT_DIR/stop.
The worker ``SLOW_TASK`` sleeps ``SLOW_S`` in a callback after every batch.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
faulthandler.enable()  # a native crash leaves its Python stack in the log

import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402

out, mode = Path(sys.argv[1]), sys.argv[2]
options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=60)
strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
task = strategy.cluster_resolver.task_id
slow_s = float(os.environ.get("SLOW_S", "0")) if task == int(os.environ["SLOW_TASK"]) else 0.0
steps = int(os.environ.get("STEPS", "30"))


class Sleep(tf_keras.callbacks.Callback):  # type: ignore[misc]
    def on_train_batch_end(self, batch: int, logs: object = None) -> None:
        if batch == 3:
            print("training", flush=True)
        time.sleep(slow_s)
        if mode == "server" and batch % 10 == 0 and _everyone_saw_stop():
            self.model.stop_training = True


def _everyone_saw_stop() -> bool:
    """Whether any worker sees OUT_DIR/stop: an all-reduce, so every worker stops after the
    same batch (workers that stop apart leave the others in a collective that never ends)."""
    seen = tf.constant(1.0 if (out / "stop").exists() else 0.0)
    total = strategy.reduce(
        tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.identity(seen)), axis=None
    )
    return float(total) > 0


x = tf.random.stateless_normal([256, 8], seed=[1, 2])
y = tf.random.stateless_normal([256, 1], seed=[3, 4])
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(16).repeat()
with strategy.scope():
    model = tf_keras.Sequential(
        [tf_keras.layers.Dense(16, activation="relu", input_shape=(8,)), tf_keras.layers.Dense(1)]
    )
    model.compile("sgd", "mse")

callbacks: list[object] = []
if mode == "callback":
    import tfdiag.keras

    callbacks.append(tfdiag.keras.ProfileCallback(batches=(3, 6), save=out / f"w{task}"))
else:
    tf.profiler.experimental.server.start(int(os.environ["PROF_PORT"]))
    print("ready", flush=True)
    while not (out / "go").exists():
        time.sleep(0.05)
callbacks.append(Sleep())
model.fit(ds, epochs=1, steps_per_epoch=steps, verbose=0, callbacks=callbacks)
print("done", flush=True)
