"""keras-io's text generation with a miniature GPT, run as written: token and position
embeddings, one causal TransformerBlock, a 20000-way output layer, `fit` over a shuffled,
mapped, prefetched tf.data pipeline with the TextGenerator callback sampling tokens with
`predict` after every epoch. The IMDB text is replaced by synthetic token ids of its
shapes (maxlen 80, vocabulary 20000); the sizes are shrunk: batches of 4, eight per epoch,
two generated tokens per epoch. Diagnosed with `ProfileCallback` inside a two-epoch fit."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="keras-miniature-gpt",
    title="training the miniature GPT example is slow on my laptop; can I speed up fit?",
    source="https://keras.io/examples/generative/text_generation_with_miniature_gpt/ "
    "(keras-team/keras-io examples/generative/text_generation_with_miniature_gpt.py); "
    "keras-team/keras-core PR#838 (steps_per_execution helps small steps, not big ones)",
    mechanism=(
        "each step is a full forward and backward pass of the transformer and its "
        "256x20000 output projection on 4x80 tokens: the model's own ops are nearly all "
        "of the epoch, the data is ready, and steps_per_execution (the best Python-side "
        "change) gains nothing"
    ),
    expect="compute-bound",
    fix_mentions=("won't help", "smaller model", "mixed precision"),
    premise=1.0,
    iterations=3,
    python_fix=False,
)

VOCAB, MAXLEN, EMBED, HEADS, FF = 20000, 80, 256, 2, 256
BATCH, STEPS, MAX_TOKENS = 4, 8, 1


def setup():
    import keras
    import tensorflow as tf
    from keras import layers, ops

    keras.utils.set_random_seed(76)

    def causal_attention_mask(batch_size, n_dest, n_src, dtype):
        i = ops.arange(n_dest)[:, None]
        j = ops.arange(n_src)
        m = i >= j - n_src + n_dest
        mask = ops.cast(m, dtype)
        mask = ops.reshape(mask, [1, n_dest, n_src])
        mult = ops.concatenate([ops.expand_dims(batch_size, -1), ops.convert_to_tensor([1, 1])], 0)
        return tf.tile(mask, mult)  # ops.tile takes no tensor repeats in Keras 3.15

    class TransformerBlock(layers.Layer):
        def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
            super().__init__()
            self.att = layers.MultiHeadAttention(num_heads, embed_dim)
            self.ffn = keras.Sequential(
                [layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)]
            )
            self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
            self.dropout1 = layers.Dropout(rate)
            self.dropout2 = layers.Dropout(rate)

        def call(self, inputs):
            input_shape = tf.shape(inputs)
            batch_size, seq_len = input_shape[0], input_shape[1]
            causal_mask = causal_attention_mask(batch_size, seq_len, seq_len, "bool")
            attention_output = self.att(inputs, inputs, attention_mask=causal_mask)
            attention_output = self.dropout1(attention_output)
            out1 = self.layernorm1(inputs + attention_output)
            ffn_output = self.ffn(out1)
            ffn_output = self.dropout2(ffn_output)
            return self.layernorm2(out1 + ffn_output)

    class TokenAndPositionEmbedding(layers.Layer):
        def __init__(self, maxlen, vocab_size, embed_dim):
            super().__init__()
            self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
            self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

        def call(self, x):
            maxlen = ops.shape(x)[-1]
            positions = ops.arange(0, maxlen, 1)
            positions = self.pos_emb(positions)
            x = self.token_emb(x)
            return x + positions

    def create_model(steps_per_execution):
        inputs = layers.Input(shape=(MAXLEN,), dtype="int32")
        embedding_layer = TokenAndPositionEmbedding(MAXLEN, VOCAB, EMBED)
        x = embedding_layer(inputs)
        transformer_block = TransformerBlock(EMBED, HEADS, FF)
        x = transformer_block(x)
        outputs = layers.Dense(VOCAB)(x)
        model = keras.Model(inputs=inputs, outputs=[outputs, x])
        loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        model.compile("adam", loss=[loss_fn, None], steps_per_execution=steps_per_execution)
        return model

    class TextGenerator(keras.callbacks.Callback):
        def __init__(self, max_tokens, start_tokens, top_k=10, print_every=1):
            super().__init__()
            self.max_tokens = max_tokens
            self.start_tokens = start_tokens
            self.print_every = print_every
            self.k = top_k
            self.generated = []

        def sample_from(self, logits):
            logits, indices = ops.top_k(logits, k=self.k, sorted=True)
            indices = np.asarray(indices).astype("int32")
            preds = keras.activations.softmax(ops.expand_dims(logits, 0))[0]
            preds = np.asarray(preds).astype("float32")
            preds = preds / preds.sum()
            return np.random.choice(indices, p=preds)

        def on_epoch_end(self, epoch, logs=None):
            start_tokens = [_ for _ in self.start_tokens]
            if (epoch + 1) % self.print_every != 0:
                return
            num_tokens_generated = 0
            tokens_generated = []
            while num_tokens_generated <= self.max_tokens:
                pad_len = MAXLEN - len(start_tokens)
                sample_index = len(start_tokens) - 1
                if pad_len < 0:
                    x = start_tokens[:MAXLEN]
                    sample_index = MAXLEN - 1
                elif pad_len > 0:
                    x = start_tokens + [0] * pad_len
                else:
                    x = start_tokens
                x = np.array([x])
                y, _ = self.model.predict(x, verbose=0)
                sample_token = self.sample_from(y[0][sample_index])
                tokens_generated.append(sample_token)
                start_tokens.append(sample_token)
                num_tokens_generated = len(tokens_generated)
            self.generated.append(tokens_generated)

    rng = np.random.default_rng(76)
    tokens = rng.integers(1, VOCAB, (BATCH * STEPS, MAXLEN + 1)).astype("int64")

    def prepare_lm_inputs_labels(tokenized_sentences):
        x = tokenized_sentences[:, :-1]
        y = tokenized_sentences[:, 1:]
        return x, y

    text_ds = tf.data.Dataset.from_tensor_slices(tokens).shuffle(buffer_size=256)
    text_ds = text_ds.batch(BATCH)
    text_ds = text_ds.map(prepare_lm_inputs_labels, num_parallel_calls=tf.data.AUTOTUNE)
    text_ds = text_ds.prefetch(tf.data.AUTOTUNE)

    np.random.seed(76)
    start_tokens = [int(t) for t in rng.integers(1, VOCAB, 5)]
    s = SimpleNamespace(
        model=create_model(1),
        fixed=create_model(STEPS),
        text_ds=text_ds,
        make_callback=lambda: TextGenerator(MAX_TOKENS, start_tokens),
    )
    s.fixed.set_weights(s.model.get_weights())
    slow(s)
    fast(s)
    return s


def slow(s):
    return s.model.fit(s.text_ds, verbose=0, epochs=1, callbacks=[s.make_callback()])


def fast(s):
    # The best Python-side change: every epoch's steps in one graph call.
    return s.fixed.fit(s.text_ds, verbose=0, epochs=1, callbacks=[s.make_callback()])


def diagnose(s, iterations):
    import tfdiag

    prof = tfdiag.keras.ProfileCallback(batches=(2, 2 + iterations))
    s.model.fit(s.text_ds, verbose=0, epochs=2, callbacks=[s.make_callback(), prof])
    return prof.report
