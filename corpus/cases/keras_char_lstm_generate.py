"""keras-io's character-level LSTM text generation, run as written: each epoch is one
`fit(x, y, batch_size=128, epochs=1)` and then, for four temperatures, characters generated
one at a time with `model.predict(x_pred, verbose=0)[0]` on a one-hot (1, maxlen, chars)
array. Nietzsche's text is replaced by synthetic sentences of the same encoding (maxlen 40,
57 characters); sizes shrunk: 512 sentences, 3 generated characters per temperature."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="keras-char-lstm-generate",
    title="the LSTM text-generation example spends more time generating than training",
    source="https://keras.io/examples/generative/lstm_character_level_text_generation/ "
    "(keras-team/keras-io examples/generative/lstm_character_level_text_generation.py); "
    "tensorflow/tensorflow#46126 (predict on a single batch: predict_on_batch is much "
    "faster); tensorflow/tensorflow#35124 (predict -> predict_on_batch per step)",
    mechanism=(
        "12 model.predict calls per epoch on one (1, 40, 57) array each: every call builds a "
        "data adapter, a tf.data pipeline, an iterator and callbacks for a single sample, "
        "and this is most of the epoch; predict_on_batch runs the same compiled graph on "
        "it (an eager model(x) call is no fix here: the LSTM's 40 steps then run from "
        "Python)"
    ),
    expect="per-call-input-pipeline",
    fix_mentions=("predict_on_batch",),
    premise=3,
    iterations=2,
    also=("per-iteration-tracing",),
)

MAXLEN, CHARS, SENTENCES, GENERATE = 40, 57, 512, 3


def setup():
    import keras
    from keras import layers

    keras.utils.set_random_seed(73)
    rng = np.random.default_rng(73)
    text_ids = rng.integers(0, CHARS, SENTENCES * 3 + MAXLEN + 1)
    x = np.zeros((SENTENCES, MAXLEN, CHARS), dtype="bool")
    y = np.zeros((SENTENCES, CHARS), dtype="bool")
    for i in range(SENTENCES):
        for t in range(MAXLEN):
            x[i, t, text_ids[3 * i + t]] = 1
        y[i, text_ids[3 * i + MAXLEN]] = 1

    def build():
        model = keras.Sequential(
            [
                keras.Input(shape=(MAXLEN, CHARS)),
                layers.LSTM(128),
                layers.Dense(CHARS, activation="softmax"),
            ]
        )
        optimizer = keras.optimizers.RMSprop(learning_rate=0.01)
        model.compile(loss="categorical_crossentropy", optimizer=optimizer)
        return model

    model = build()
    s = SimpleNamespace(model=model, x=x, y=y, text_ids=text_ids, rng=rng)
    slow(s)
    fast(s)
    return s


def sample(rng, preds, temperature=1.0):
    preds = np.asarray(preds).astype("float64")
    preds = np.log(preds) / temperature
    exp_preds = np.exp(preds)
    preds = exp_preds / np.sum(exp_preds)
    probas = rng.multinomial(1, preds, 1)
    return np.argmax(probas)


def epoch(s, next_probs):
    s.model.fit(s.x, s.y, batch_size=128, epochs=1, verbose=0)
    start_index = int(s.rng.integers(0, len(s.text_ids) - MAXLEN - 1))
    for diversity in [0.2, 0.5, 1.0, 1.2]:
        generated = []
        sentence = list(s.text_ids[start_index : start_index + MAXLEN])
        for _ in range(GENERATE):
            x_pred = np.zeros((1, MAXLEN, CHARS))
            for t, char in enumerate(sentence):
                x_pred[0, t, char] = 1.0
            preds = next_probs(s, x_pred)
            next_index = sample(s.rng, preds, diversity)
            sentence = sentence[1:] + [next_index]
            generated.append(next_index)
    return generated


def slow(s):
    return epoch(s, lambda s, x_pred: s.model.predict(x_pred, verbose=0)[0])


def fast(s):
    # The fix: predict_on_batch on the one-sample batch instead of predict().
    return epoch(s, lambda s, x_pred: s.model.predict_on_batch(x_pred)[0])
