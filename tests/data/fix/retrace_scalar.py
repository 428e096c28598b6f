import tensorflow as tf

w = tf.Variable(tf.ones((64, 64)))


@tf.function
def step(x, scale):
    return tf.reduce_sum(tf.matmul(x, w) * scale)


x = tf.ones((8, 64))
total = 0.0
for i in range(40):
    total += float(step(x, i / 10))  # a new Python float every call
print(f"total {total:.4f}")
