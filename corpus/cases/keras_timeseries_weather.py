"""keras-io's timeseries weather forecasting, run as written: 7 normalised features,
`timeseries_dataset_from_array` windows of 120 steps sampled every 6 rows (720 past rows),
an LSTM(32) fitted with validation data, EarlyStopping and a best-only ModelCheckpoint.
The Jena climate CSV is replaced by synthetic rows of its shape; the sizes are shrunk to
four training and two validation batches of 256 windows, two epochs per `fit` (diagnosed
with `ProfileCallback` inside a longer fit)."""

import os
import tempfile
from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="keras-timeseries-weather",
    title="the weather-forecasting example is slow per epoch although the LSTM is tiny",
    source="https://keras.io/examples/timeseries/timeseries_weather_forecasting/ "
    "(keras-team/keras-io examples/timeseries/timeseries_weather_forecasting.py); "
    "tensorflow/tensorflow#44592 (timeseries_dataset_from_array); tensorflow/docs "
    "data_performance.ipynb (cache)",
    mechanism=(
        "timeseries_dataset_from_array gathers every window of 120 rows from the array "
        "again on every epoch (an index dataset mapped to slices, then batched) and the "
        "step waits for it; the windows do not change, so dataset.cache() (train and "
        "validation) removes the work after the first epoch"
    ),
    expect="input-bound",
    fix_mentions=("cache()",),
    premise=2.5,
    iterations=6,
    also=("per-step-overhead", "per-epoch-overhead", "callback-overhead"),
)

STEP, PAST, FUTURE, BATCH = 6, 720, 72, 256
TRAIN_WINDOWS, VAL_WINDOWS = 4 * BATCH, 2 * BATCH


def setup():
    import keras

    keras.utils.set_random_seed(75)
    rng = np.random.default_rng(75)
    sequence_length = int(PAST / STEP)
    start = PAST + FUTURE
    train_rows = TRAIN_WINDOWS + PAST
    rows = train_rows + VAL_WINDOWS + PAST + start
    features = rng.standard_normal((rows, 7)).cumsum(axis=0).astype("float32")
    mean = features[:train_rows].mean(axis=0)
    std = features[:train_rows].std(axis=0)
    features = (features - mean) / std
    train_data, val_data = features[:train_rows], features[train_rows:]

    x_train = train_data[:, :7]
    y_train = features[start : start + train_rows][:, [1]]
    dataset_train = keras.preprocessing.timeseries_dataset_from_array(
        x_train, y_train, sequence_length=sequence_length, sampling_rate=STEP, batch_size=BATCH
    )
    x_end = len(val_data) - PAST - FUTURE
    label_start = train_rows + PAST + FUTURE
    x_val = val_data[:x_end, :7]
    y_val = features[label_start:][:, [1]]
    dataset_val = keras.preprocessing.timeseries_dataset_from_array(
        x_val, y_val, sequence_length=sequence_length, sampling_rate=STEP, batch_size=BATCH
    )

    def build():
        inputs = keras.layers.Input(shape=(sequence_length, 7))
        lstm_out = keras.layers.LSTM(32)(inputs)
        outputs = keras.layers.Dense(1)(lstm_out)
        model = keras.Model(inputs=inputs, outputs=outputs)
        model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.001), loss="mse")
        return model

    folder = tempfile.mkdtemp(prefix="tfdiag-corpus-weather-")
    s = SimpleNamespace(
        model=build(),
        fixed=build(),
        train=dataset_train,
        val=dataset_val,
        train_cached=dataset_train.cache(),
        val_cached=dataset_val.cache(),
        path_checkpoint=os.path.join(folder, "model_checkpoint.weights.h5"),
    )
    s.fixed.set_weights(s.model.get_weights())
    slow(s)
    fast(s)
    return s


def callbacks(s):
    import keras

    es_callback = keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=0, patience=5)
    modelckpt_callback = keras.callbacks.ModelCheckpoint(
        monitor="val_loss",
        filepath=s.path_checkpoint,
        verbose=0,
        save_weights_only=True,
        save_best_only=True,
    )
    return [es_callback, modelckpt_callback]


def train(s, model, train_ds, val_ds, epochs, extra=()):
    return model.fit(
        train_ds,
        epochs=epochs,
        validation_data=val_ds,
        callbacks=callbacks(s) + list(extra),
        verbose=0,
    )


def slow(s):
    return train(s, s.model, s.train, s.val, 2)


def fast(s):
    # The fix: the windows are the same every epoch, so cache them.
    return train(s, s.fixed, s.train_cached, s.val_cached, 2)


def diagnose(s, iterations):
    import tfdiag

    prof = tfdiag.keras.ProfileCallback(batches=(3, 3 + iterations))
    train(s, s.model, s.train, s.val, 4, extra=[prof])
    return prof.report
