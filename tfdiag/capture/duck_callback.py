"""The Keras Callback interface, duck-typed: every hook Keras 3's and tf_keras'
``CallbackList`` call (neither checks ``isinstance(cb, Callback)``), so one class works in
both and imports neither TensorFlow nor Keras."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _noop(*args: Any, **kwargs: Any) -> None:
    return None


class DuckCallback:
    """A callback of training batches whose every hook is a no-op until a subclass
    defines it (``on_epoch_begin``, ``on_test_batch_end``, ... and any a later Keras adds)."""

    def __init__(self) -> None:
        self.model: Any = None
        self.params: dict[str, Any] = {}
        # tf_keras reads these two. True: the logs reach us as they are (never read here);
        # False made tf_keras convert each batch's logs to numpy for this hook alone, a
        # conversion the user's fit without tfdiag does not do, charged to their callbacks.
        self._supports_tf_logs = True
        self._chief_worker_only = None

    def set_model(self, model: Any) -> None:
        self.model = model

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = dict(params or {})

    def _implements_train_batch_hooks(self) -> bool:
        return True

    def _implements_test_batch_hooks(self) -> bool:
        return False

    def _implements_predict_batch_hooks(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("on_"):
            return _noop
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
