"""A stand-in for ``keras.Model`` with the six instrumented methods, for TF-free tests."""

from __future__ import annotations


class FakeModel:
    def predict(self, x: object, work: int = 30_000) -> int:
        return sum(range(work))

    def predict_on_batch(self, x: object) -> int:
        return 0

    def evaluate(self, x: object) -> int:
        return self.predict(x, work=10)

    def fit(self, x: object, epochs: int = 1) -> None:
        for _ in range(epochs):
            self.evaluate(x)

    def train_on_batch(self, x: object, y: object) -> int:
        return 0

    def test_on_batch(self, x: object, y: object) -> int:
        return 0
