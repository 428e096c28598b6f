"""TensorFlow op types that do none of the model's math — printing, string formatting,
summaries, file writes — by the Python API that puts them in a graph. Inside a compiled
step such an op is a cost of its own: the TF profiler names it by type, and its fix is
the API's (print or write less, or less often), not a faster device."""

from __future__ import annotations

#: op type → the Python call that makes it.
HOST_OPS: dict[str, str] = {
    "PrintV2": "tf.print",
    "Print": "tf.print",
    "StringFormat": "tf.print",
    "AsString": "tf.strings.as_string",
    "WriteSummary": "tf.summary",
    "WriteScalarSummary": "tf.summary.scalar",
    "WriteHistogramSummary": "tf.summary.histogram",
    "WriteImageSummary": "tf.summary.image",
    "WriteAudioSummary": "tf.summary.audio",
    "WriteRawProtoSummary": "tf.summary",
    "WriteFile": "tf.io.write_file",
    "SaveV2": "a checkpoint save",
}

#: Op-name scopes a graph call and its gradient add around the user's layers.
WRAPPING_SCOPES: tuple[str, ...] = ("StatefulPartitionedCall", "PartitionedCall", "gradient_tape")

#: How the TF profiler names tf.data's iterators (their time is the input pipeline's, not the
#: model's ops).
DATA_OP_PREFIX = "Iterator::"

#: The scope of a loop's body in an op's name (forward, gradient), as a regular expression.
LOOP_SCOPE = r"/while(?:_grad)?/"

#: A loop's own scope name (before its ``while``) → the Python call that makes it, for the
#: loops that run once per element of a batch (vectorisable). Other loops — a recurrent
#: layer's over time steps, ``tf.scan`` — are sequential by nature and not named.
PER_ELEMENT_LOOPS: dict[str, str] = {"map": "tf.map_fn"}
