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
