"""Your lines on real TensorFlow, through the three drivers: a layer built per call under
``profile()``, a callback's line inside ``fit``, a call site's line under ``tfdiag run``."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

import tfdiag

pytestmark = pytest.mark.tf

VOCAB = [f"w{i}" for i in range(3000)]


def test_profile_names_the_line_that_builds_a_layer_per_call() -> None:
    import keras
    import numpy as np

    def handle(words: Any) -> Any:
        lookup = keras.layers.StringLookup(vocabulary=VOCAB)
        return lookup(words)

    report = tfdiag.profile(handle, np.array(["w1", "w7"]), iterations=6, tf_profiler=False)
    lines = report.diagnosis.analysis.lines
    assert lines, "no line recorded"
    top = lines[0]
    assert not top.entry  # the callable is the user's: its own lines, not profile()'s line
    assert top.code == "lookup = keras.layers.StringLookup(vocabulary=VOCAB)"
    assert top.api == "keras.layers.StringLookup" and top.nature == "construct"
    assert top.calls_per_iteration == pytest.approx(1.0)
    assert top.share > 0.5
    assert report.to_json()["your_lines"][0]["line"] == top.line


def test_a_framework_callable_is_anchored_at_the_line_that_profiled_it(
    tiny_model_factory: Any, tiny_data: Any
) -> None:
    model = tiny_model_factory("keras3")
    x, _ = tiny_data
    report = tfdiag.profile(model.predict, x, iterations=4, tf_profiler=False, verbose=0)
    entry = report.diagnosis.analysis.lines[0]
    assert entry.entry and entry.file == __file__
    assert "tfdiag.profile(model.predict" in entry.code


def test_the_callback_records_the_fit_line_and_the_users_callback_line() -> None:
    import keras
    import numpy as np

    class Heavy(keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            self.model.get_weights()

    # The line of a callback is placed by a 1 ms stack sampler: 10 batches of a 64-wide
    # model left get_weights unsampled in 1 of 3 runs on a busy machine; 40 batches of a
    # wider one give it time to be seen (the counts come from cProfile all the same).
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(512), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.random.rand(512, 4).astype("float32")
    y = np.random.rand(512, 1).astype("float32")
    cb = tfdiag.keras.ProfileCallback(batches=(2, 42), tf_profiler=False)
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[Heavy(), cb])
    assert cb.report is not None
    lines = cb.report.diagnosis.analysis.lines
    assert lines[0].entry and "model.fit(" in lines[0].code
    mine = [u for u in lines if u.code == "self.model.get_weights()"]
    assert mine and mine[0].api == "model.get_weights" and mine[0].nature == "weights-host"
    assert mine[0].calls_per_iteration == pytest.approx(1.0)


def test_a_run_site_is_anchored_at_its_own_line(tmp_path: Path) -> None:
    script = tmp_path / "serve.py"
    script.write_text(
        textwrap.dedent(
            """
            import keras, numpy as np
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
            x = np.zeros((2, 4), "float32")
            for _ in range(8):
                model.predict(x, verbose=0)
            """
        ).lstrip()
    )
    from tfdiag.script.instrument import run_script

    result = run_script(script, iterations=3, tf_profiler=False)
    (site,) = [s for s in result.sites if s.method == "predict"]
    assert site.report is not None
    entry = site.report.diagnosis.analysis.lines[0]
    assert entry.entry and entry.line == 5 and entry.code == "model.predict(x, verbose=0)"


def test_run_finds_a_layer_built_per_request_outside_every_call_site(tmp_path: Path) -> None:
    script = tmp_path / "serve.py"
    script.write_text(
        textwrap.dedent(
            """
            import keras, numpy as np
            VOCAB = [f"w{i}" for i in range(20000)]
            model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
            def handle(words):
                lookup = keras.layers.StringLookup(vocabulary=VOCAB)
                ids = lookup(words)
                return model.predict_on_batch(np.asarray(ids, "float32").reshape(-1, 1))
            for _ in range(12):
                handle(np.array(["w1", "w5"]))
            """
        ).lstrip()
    )
    from tfdiag.advise.script import script_findings
    from tfdiag.script.instrument import run_script

    result = run_script(script, iterations=3, tf_profiler=False)
    first = script_findings(result)[0]
    assert first.site is None and first.finding.id == "model-rebuilt-per-call"
    assert first.finding.line is not None and first.finding.line.line == 5
    assert "lookup = keras.layers.StringLookup(vocabulary=VOCAB)" in first.finding.fix
    assert result.render("text", width=100).index("Findings") < result.render(
        "text", width=100
    ).index("Keras calls by call site")


def _every_finding_names_a_line(findings: Any) -> None:
    assert findings, "no finding"
    for f in findings:
        assert f.line is not None and f.line.code, f.id
        assert f.evidence[0].startswith("line ") and f"`{f.line.code}`" in f.evidence[0], f.id


def test_every_finding_names_a_line_under_profile(tiny_model_factory: Any, tiny_data: Any) -> None:
    model = tiny_model_factory("keras3")
    x, _ = tiny_data
    report = tfdiag.profile(model.predict, x, iterations=4, tf_profiler=False, verbose=0)
    _every_finding_names_a_line(report.findings)


def test_every_finding_names_a_line_under_the_callback() -> None:
    import keras
    import numpy as np

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.random.rand(512, 4).astype("float32")
    y = np.random.rand(512, 1).astype("float32")
    cb = tfdiag.keras.ProfileCallback(batches=(2, 12), tf_profiler=False)
    model.fit(x, y, batch_size=4, epochs=1, verbose=1, callbacks=[cb])
    assert cb.report is not None
    _every_finding_names_a_line(cb.report.findings)


def test_every_finding_names_a_line_under_run(tmp_path: Path) -> None:
    script = tmp_path / "loop.py"
    script.write_text(
        textwrap.dedent(
            """
            import keras, numpy as np
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            x, y = np.zeros((8, 4), "float32"), np.zeros((8, 1), "float32")
            for _ in range(10):
                model.fit(x, y, verbose=0)
            """
        ).lstrip()
    )
    from tfdiag.advise.script import script_findings
    from tfdiag.script.instrument import run_script

    result = run_script(script, iterations=3, tf_profiler=False)
    _every_finding_names_a_line([sf.finding for sf in script_findings(result)])
