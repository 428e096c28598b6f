"""Rewrite a finished ``tf.data.Dataset`` with public ops, as the fix for an input-bound call
would have written it: every sequential ``map`` made parallel (``num_parallel_calls=
tf.data.AUTOTUNE``), every sequential ``interleave`` too, and (optionally) a ``cache()``.

``tf.raw_ops.DatasetToGraphV2`` serialises the dataset to a ``GraphDef`` (its functions in the
library, a ``py_function`` kept by its token, valid in this process); ``MapDataset`` nodes
become ``ParallelMapDatasetV2`` with an ``AUTOTUNE`` input (``InterleaveDataset``:
``ParallelInterleaveDatasetV4``), and ``tf.raw_ops.DatasetFromGraph`` +
``tf.data.experimental.from_variant`` give a dataset back. The user's dataset is not changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Ops whose result changes from one pass to the next: a pipeline holding one must not be
#: cached (the second epoch would see the first one's shuffle or random augmentation).
_RANDOM = ("Random", "Shuffle", "Stateless", "Multinomial", "Dropout")

_AUTOTUNE = "tfdiag_autotune"


@dataclass(frozen=True)
class Rewritten:
    """The rewritten dataset and what was changed in it."""

    dataset: Any
    maps: int
    interleaves: int
    deterministic: bool


def _has_random(graph: Any) -> bool:
    ops = [n.op for n in graph.node]
    for fn in graph.library.function:
        ops += [n.op for n in fn.node_def]
    return any(any(word in op for word in _RANDOM) for op in ops)


def _const(graph: Any, tf: Any, name: str, value: int) -> None:
    import numpy as np

    node = graph.node.add()
    node.name, node.op = name, "Const"
    node.attr["dtype"].type = tf.int64.as_datatype_enum
    node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(np.int64(value)))


def _inputs(node: Any, extra: list[str]) -> None:
    data = [i for i in node.input if not i.startswith("^")]
    control = [i for i in node.input if i.startswith("^")]
    del node.input[:]
    node.input.extend(data + extra + control)


def parallel(tf: Any, ds: Any) -> Rewritten:
    """``ds`` with every sequential map and interleave parallel (AUTOTUNE), ending in
    ``prefetch(AUTOTUNE)``.

    Raises:
        ValueError: the dataset cannot be serialised or rebuilt (a resource it holds, an op
            with no kernel here), or there is nothing sequential to make parallel.
    """
    try:
        blob = tf.raw_ops.DatasetToGraphV2(
            input_dataset=ds._variant_tensor, external_state_policy=1, strip_device_assignment=True
        )
        graph = tf.compat.v1.GraphDef.FromString(blob.numpy())
    except Exception as exc:  # noqa: BLE001 - TF raises many kinds here
        raise ValueError(f"the dataset cannot be serialised ({type(exc).__name__})") from None
    for fn in graph.library.function:  # stripped devices read "/device::0": clear them
        for node in fn.node_def:
            node.device = ""
    for node in graph.node:
        node.device = ""
    maps = interleaves = 0
    for node in list(graph.node):
        if node.op == "MapDataset":
            node.op = "ParallelMapDatasetV2"
            _inputs(node, [_AUTOTUNE])
            node.attr["deterministic"].s = b"default"
            maps += 1
        elif node.op == "InterleaveDataset":
            node.op = "ParallelInterleaveDatasetV4"
            # cycle_length and block_length are kept; buffer_output_elements and
            # prefetch_input_elements at their defaults (AUTOTUNE), num_parallel_calls AUTOTUNE
            _inputs(node, [_AUTOTUNE, _AUTOTUNE, _AUTOTUNE])
            node.attr["deterministic"].s = b"default"
            interleaves += 1
    if not maps and not interleaves:
        raise ValueError("the pipeline has no sequential map or interleave to make parallel")
    _const(graph, tf, _AUTOTUNE, -1)
    try:
        variant = tf.raw_ops.DatasetFromGraph(graph_def=graph.SerializeToString())
        out = tf.data.experimental.from_variant(variant, structure=ds.element_spec)
    except Exception as exc:  # noqa: BLE001
        why = type(exc).__name__
        raise ValueError(f"the rewritten dataset cannot be rebuilt ({why})") from None
    return Rewritten(out.prefetch(tf.data.AUTOTUNE), maps, interleaves, not _has_random(graph))
