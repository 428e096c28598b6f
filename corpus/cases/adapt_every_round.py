"""Each round of a text-classification job calls `TextVectorization.adapt()` over the whole
corpus again before vectorising the round's batch and scoring it."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="adapt-every-round",
    title="every round of my text job takes seconds although the model is tiny",
    source="keras-team/keras#16005 and tensorflow/tensorflow#47321 (TextVectorization.adapt is "
    "slow on a large corpus); Keras preprocessing-layers guide (adapt once, before training)",
    mechanism=(
        "score_round() calls vectorizer.adapt(corpus) over all 10,000 documents on every "
        "round: a tf.data pass that splits, counts and sorts every token to rebuild the "
        "vocabulary, which never changes, for a 32-document batch and one call of a small "
        "model through a tf.function built once"
    ),
    expect="model-rebuilt-per-call",
    # Capitalised: the case's own file name holds "adapt", and a fix quoting its line would
    # match a lower-case substring without naming the remedy.
    fix_mentions=("Adapt", "adapt once"),
    premise=10,  # 11.9x measured (--rounds 3, 2026-12-04)
    iterations=3,
)

DOCS, WORDS, VOCAB = 10_000, 30, 5000


def setup():
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(32)
    rng = np.random.default_rng(32)
    words = np.array([f"w{i}" for i in range(VOCAB)])
    corpus = np.array([" ".join(rng.choice(words, WORDS)) for _ in range(DOCS)])
    batch = corpus[:32]
    vectorizer = keras.layers.TextVectorization(max_tokens=VOCAB, output_sequence_length=WORDS)
    vectorizer.adapt(corpus)
    model = keras.Sequential(
        [
            keras.Input((WORDS,), dtype="int64"),
            keras.layers.Embedding(VOCAB + 2, 16),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    score = tf.function(lambda ids: model(ids, training=False))
    s = SimpleNamespace(corpus=corpus, batch=batch, vectorizer=vectorizer, score=score)
    slow(s)
    fast(s)
    return s


def score_round(vectorizer, score, corpus, batch):
    """The user's round: (re)build the vocabulary, vectorise the batch, score it."""
    vectorizer.adapt(corpus)
    return np.asarray(score(vectorizer(batch)))


def slow(s):
    return score_round(s.vectorizer, s.score, s.corpus, s.batch)


def fast(s):
    # The fix: adapt once at start-up (setup); each round only vectorises and scores.
    return np.asarray(s.score(s.vectorizer(s.batch)))


def target(s):
    return score_round, (s.vectorizer, s.score, s.corpus, s.batch), {}
