"""Record the xprof fixture: the seed-003 ``predict`` traced for 3 steps, as the probe traces it.

Run from the repository root (it imports TensorFlow):
    TF_CPP_MIN_LOG_LEVEL=3 python tests/data/xprof/record.py
It rewrites ``framework_op_stats.json`` and ``overview_page.json`` here: xprof's own
output for the trace, unedited.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

HERE = Path(__file__).resolve().parent
STEPS = 3


def main() -> None:
    import numpy as np
    import tensorflow as tf
    from xprof.convert import raw_to_tool_data

    from tfdiag.capture.tfprofiler import HOST_TRACER_LEVEL, STEP_NAME, TOOLS
    from tfdiag.measure.seed_models import BATCH_SHAPE, tiny_model

    model = tiny_model()
    x = np.random.default_rng(0).standard_normal(BATCH_SHAPE).astype("float32")
    model.predict(x, verbose=0)
    with tempfile.TemporaryDirectory() as logdir:
        options = tf.profiler.experimental.ProfilerOptions(
            host_tracer_level=HOST_TRACER_LEVEL, python_tracer_level=0, device_tracer_level=1
        )
        tf.profiler.experimental.start(logdir, options=options)
        for i in range(STEPS):
            with tf.profiler.experimental.Trace(STEP_NAME, step_num=i, _r=1):
                model.predict(x, verbose=0)
        tf.profiler.experimental.stop()
        paths = [str(p) for p in Path(logdir).glob("plugins/profile/*/*.xplane.pb")]
        for tool in TOOLS:
            data, _ = raw_to_tool_data.xspace_to_tool_data(paths, tool, {})
            doc = json.loads(data)
            (HERE / f"{tool}.json").write_text(json.dumps(doc, indent=0) + "\n")


if __name__ == "__main__":
    main()
