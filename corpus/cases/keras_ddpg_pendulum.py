"""keras-io's DDPG on the inverted pendulum, run as written: every environment step calls
the actor eagerly in `policy()` (`actor_model(state)`, then `.numpy()` plus noise), records
the transition, and learns with the `tf.function` `update` on a batch of 64 and two
`tf.function` soft target updates. Gym's Pendulum is replaced by the same dynamics in NumPy
(3-float observations, one action in [-2, 2]); an episode is shrunk to 20 steps, and one
iteration is one episode."""

from types import SimpleNamespace

import numpy as np

from corpus.harness import Case

CASE = Case(
    id="keras-ddpg-pendulum",
    title="DDPG from the Keras examples takes 20 minutes; where does an episode go?",
    source="https://keras.io/examples/rl/ddpg_pendulum/ (keras-team/keras-io "
    "examples/rl/ddpg_pendulum.py); keras-team/keras-io#250 (tf.function put on the "
    "update and target updates, the actor call in policy() left eager); "
    "tensorflow/tensorflow#46126 (an RL agent's per-step model call: "
    "model.call = tf.function(model.call)); tensorflow/tensorflow#33487",
    mechanism=(
        "policy() runs actor_model(state) eagerly on one (1, 3) state per environment "
        "step: a 3-512-512-1 MLP with two BatchNormalization layers dispatched op by op "
        "from Python, beside the compiled learn step; the same actor call in a "
        "tf.function built once is the fix"
    ),
    expect="eager-execution",
    fix_mentions=("tf.function",),
    premise=1.8,
    iterations=3,
    also=("per-step-overhead",),
)

STEPS = 20


class Pendulum:
    """Gym's Pendulum dynamics (g=10, m=l=1, dt=0.05), observations (cos, sin, thdot)."""

    max_speed, max_torque, dt, g, m, length = 8.0, 2.0, 0.05, 10.0, 1.0, 1.0

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.state = self.rng.uniform([-np.pi, -1.0], [np.pi, 1.0])
        self.t = 0
        return self._obs()

    def _obs(self):
        th, thdot = self.state
        return np.array([np.cos(th), np.sin(th), thdot], dtype=np.float32)

    def step(self, u):
        th, thdot = self.state
        u = float(np.clip(u, -self.max_torque, self.max_torque)[0])
        norm = ((th + np.pi) % (2 * np.pi)) - np.pi
        cost = norm**2 + 0.1 * thdot**2 + 0.001 * u**2
        accel = 3 * self.g / (2 * self.length) * np.sin(th) + 3.0 / (self.m * self.length**2) * u
        thdot = thdot + accel * self.dt
        thdot = float(np.clip(thdot, -self.max_speed, self.max_speed))
        self.state = np.array([th + thdot * self.dt, thdot])
        self.t += 1
        return self._obs(), -cost, self.t >= STEPS, {}


def setup():
    import keras
    import tensorflow as tf
    from keras import layers

    keras.utils.set_random_seed(74)
    np.random.seed(74)
    num_states, num_actions, upper_bound, lower_bound = 3, 1, 2.0, -2.0

    class OUActionNoise:
        def __init__(self, mean, std_deviation, theta=0.15, dt=1e-2, x_initial=None):
            self.theta, self.mean, self.std_dev, self.dt = theta, mean, std_deviation, dt
            self.x_initial = x_initial
            self.reset()

        def __call__(self):
            x = (
                self.x_prev
                + self.theta * (self.mean - self.x_prev) * self.dt
                + self.std_dev * np.sqrt(self.dt) * np.random.normal(size=self.mean.shape)
            )
            self.x_prev = x
            return x

        def reset(self):
            self.x_prev = self.x_initial if self.x_initial is not None else np.zeros_like(self.mean)

    def get_actor():
        last_init = keras.initializers.RandomUniform(minval=-0.003, maxval=0.003)
        inputs = layers.Input(shape=(num_states,))
        out = layers.Dense(512, activation="relu")(inputs)
        out = layers.BatchNormalization()(out)
        out = layers.Dense(512, activation="relu")(out)
        out = layers.BatchNormalization()(out)
        outputs = layers.Dense(1, activation="tanh", kernel_initializer=last_init)(out)
        outputs = outputs * upper_bound
        return keras.Model(inputs, outputs)

    def get_critic():
        state_input = layers.Input(shape=(num_states,))
        state_out = layers.Dense(16, activation="relu")(state_input)
        state_out = layers.BatchNormalization()(state_out)
        state_out = layers.Dense(32, activation="relu")(state_out)
        state_out = layers.BatchNormalization()(state_out)
        action_input = layers.Input(shape=(num_actions,))
        action_out = layers.Dense(32, activation="relu")(action_input)
        action_out = layers.BatchNormalization()(action_out)
        concat = layers.Concatenate()([state_out, action_out])
        out = layers.Dense(512, activation="relu")(concat)
        out = layers.BatchNormalization()(out)
        out = layers.Dense(512, activation="relu")(out)
        out = layers.BatchNormalization()(out)
        outputs = layers.Dense(1)(out)
        return keras.Model([state_input, action_input], outputs)

    def make_agent(compiled_policy):
        actor_model, critic_model = get_actor(), get_critic()
        target_actor, target_critic = get_actor(), get_critic()
        target_actor.set_weights(actor_model.get_weights())
        target_critic.set_weights(critic_model.get_weights())
        critic_optimizer = keras.optimizers.Adam(0.002)
        actor_optimizer = keras.optimizers.Adam(0.001)
        gamma, tau = 0.99, 0.005

        class Buffer:
            def __init__(self, buffer_capacity=100000, batch_size=64):
                self.buffer_capacity, self.batch_size = buffer_capacity, batch_size
                self.buffer_counter = 0
                self.state_buffer = np.zeros((buffer_capacity, num_states))
                self.action_buffer = np.zeros((buffer_capacity, num_actions))
                self.reward_buffer = np.zeros((buffer_capacity, 1))
                self.next_state_buffer = np.zeros((buffer_capacity, num_states))

            def record(self, obs_tuple):
                index = self.buffer_counter % self.buffer_capacity
                self.state_buffer[index] = obs_tuple[0]
                self.action_buffer[index] = obs_tuple[1]
                self.reward_buffer[index] = obs_tuple[2]
                self.next_state_buffer[index] = obs_tuple[3]
                self.buffer_counter += 1

            @tf.function
            def update(self, state_batch, action_batch, reward_batch, next_state_batch):
                with tf.GradientTape() as tape:
                    target_actions = target_actor(next_state_batch, training=True)
                    y = reward_batch + gamma * target_critic(
                        [next_state_batch, target_actions], training=True
                    )
                    critic_value = critic_model([state_batch, action_batch], training=True)
                    critic_loss = keras.ops.mean(keras.ops.square(y - critic_value))
                critic_grad = tape.gradient(critic_loss, critic_model.trainable_variables)
                critic_optimizer.apply_gradients(zip(critic_grad, critic_model.trainable_variables))
                with tf.GradientTape() as tape:
                    actions = actor_model(state_batch, training=True)
                    critic_value = critic_model([state_batch, actions], training=True)
                    actor_loss = -keras.ops.mean(critic_value)
                actor_grad = tape.gradient(actor_loss, actor_model.trainable_variables)
                actor_optimizer.apply_gradients(zip(actor_grad, actor_model.trainable_variables))

            def learn(self):
                record_range = min(self.buffer_counter, self.buffer_capacity)
                batch_indices = np.random.choice(record_range, self.batch_size)
                state_batch = keras.ops.convert_to_tensor(self.state_buffer[batch_indices])
                action_batch = keras.ops.convert_to_tensor(self.action_buffer[batch_indices])
                reward_batch = keras.ops.convert_to_tensor(self.reward_buffer[batch_indices])
                reward_batch = keras.ops.cast(reward_batch, dtype="float32")
                next_state_batch = keras.ops.convert_to_tensor(
                    self.next_state_buffer[batch_indices]
                )
                self.update(state_batch, action_batch, reward_batch, next_state_batch)

        @tf.function
        def update_target(target, original, tau):
            for a, b in zip(target.weights, original.weights):
                a.assign(b * tau + a * (1 - tau))

        actor_call = tf.function(actor_model) if compiled_policy else actor_model

        def policy(state, noise_object):
            sampled_actions = keras.ops.squeeze(actor_call(state))
            noise = noise_object()
            sampled_actions = sampled_actions.numpy() + noise
            legal_action = np.clip(sampled_actions, lower_bound, upper_bound)
            return [np.squeeze(legal_action)]

        ou_noise = OUActionNoise(mean=np.zeros(1), std_deviation=0.2 * np.ones(1))
        buffer = Buffer(50000, 64)
        env = Pendulum(74)

        def episode():
            prev_state = env.reset()
            episodic_reward = 0
            while True:
                tf_prev_state = keras.ops.expand_dims(keras.ops.convert_to_tensor(prev_state), 0)
                action = policy(tf_prev_state, ou_noise)
                state, reward, done, info = env.step(action)
                buffer.record((prev_state, action, reward, state))
                episodic_reward += reward
                buffer.learn()
                update_target(target_actor, actor_model, tau)
                update_target(target_critic, critic_model, tau)
                if done:
                    break
                prev_state = state
            return episodic_reward

        return episode

    s = SimpleNamespace(episode=make_agent(False), compiled_episode=make_agent(True))
    slow(s)
    fast(s)
    return s


def slow(s):
    return s.episode()


def fast(s):
    # The fix: policy() calls the actor through a tf.function built once.
    return s.compiled_episode()
