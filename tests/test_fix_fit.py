"""The one-fit edit kind on source strings (no TensorFlow): a loop of ``fit`` calls, one
per epoch, becomes one ``fit`` of every epoch, and what is not that is refused with why."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfdiag.fix.edits import Edit, Files, NoEdit, Target, kind_for
from tfdiag.fix.patch import unified_diff
from tfdiag.fix.verify_patch import Outcome, judge


def _edit(tmp_path: Path, code: str, line: int, remedy: str = "per-call-input-pipeline:fit"):
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    kind = kind_for(remedy)
    assert kind is not None and kind.name == "one-fit", remedy
    return kind.edit(
        Files(tmp_path, (path,)), Target("per-call-input-pipeline", remedy, str(path), line)
    )


def _changed(e: Edit | NoEdit) -> list[str]:
    assert isinstance(e, Edit), e
    diff = unified_diff(e.before, e.after, "train.py").splitlines()
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _refused(tmp_path: Path, code: str, line: int) -> str:
    e = _edit(tmp_path, code, line)
    assert isinstance(e, NoEdit), e
    return e.reason


def test_a_loop_of_one_epoch_fits_becomes_one_fit_keeping_the_comments(tmp_path: Path) -> None:
    code = """\
    model.compile("sgd", "mse")
    # train
    for epoch in range(20):
        model.fit(x, y, batch_size=16, epochs=1, verbose=0)  # one epoch per call
    print("done")
    """
    e = _edit(tmp_path, code, 4)
    assert _changed(e) == [
        "-for epoch in range(20):",
        "-    model.fit(x, y, batch_size=16, epochs=1, verbose=0)  # one epoch per call",
        "+model.fit(x, y, batch_size=16, epochs=20, verbose=0)  # one epoch per call",
    ]
    assert isinstance(e, Edit) and e.new_line == 3 and not e.same_call
    assert "# train\nmodel.fit(" in e.after
    assert kind_for("keras-loop:fit") is not None


def test_epochs_multiply_and_a_missing_epochs_is_one(tmp_path: Path) -> None:
    code = "for _ in range(n_rounds):\n    model.fit(x, y, epochs=3)\n"
    assert _changed(_edit(tmp_path, code, 2))[-1] == "+model.fit(x, y, epochs=n_rounds * 3)"
    code = "for _ in range(4):\n    model.fit(x, y, epochs=3)\n"
    assert _changed(_edit(tmp_path, code, 2))[-1] == "+model.fit(x, y, epochs=12)"
    code = "for _ in range(4):\n    model.fit(x, y, verbose=0)\n"
    assert _changed(_edit(tmp_path, code, 2))[-1] == "+model.fit(x, y, verbose=0, epochs=4)"


def test_initial_epoch_counting_along_is_folded_into_epochs(tmp_path: Path) -> None:
    code = """\
    def train(model, x, y, n):
        for epoch in range(n):
            model.fit(x, y, initial_epoch=epoch, epochs=epoch + 1, verbose=0)
    """
    assert _changed(_edit(tmp_path, code, 3)) == [
        "-    for epoch in range(n):",
        "-        model.fit(x, y, initial_epoch=epoch, epochs=epoch + 1, verbose=0)",
        "+    model.fit(x, y, epochs=n, verbose=0)",
    ]
    code = "for epoch in range(5):\n    model.fit(x, y, initial_epoch=epoch, epochs=1)\n"
    assert "do not train one epoch each" in _refused(tmp_path, code, 2)


def test_a_fit_per_batch_is_refused(tmp_path: Path) -> None:
    code = "for i in range(n):\n    model.fit(xb[i], yb[i], verbose=0)\n"
    assert "a positional argument reads `i`" in _refused(tmp_path, code, 2)
    code = "for i in range(n):\n    model.fit(x[i * 8 : i * 8 + 8], y[i * 8 : i * 8 + 8])\n"
    assert "reads `i`" in _refused(tmp_path, code, 2)


def test_a_loop_doing_anything_else_is_refused(tmp_path: Path) -> None:
    code = """\
    for epoch in range(5):
        model.fit(x, y, epochs=1)
        model.evaluate(xv, yv)
    """
    assert "does more than call `fit`" in _refused(tmp_path, code, 2)
    code = """\
    for epoch in range(5):
        model.optimizer.learning_rate.assign(0.1 / (epoch + 1))
        model.fit(x, y, epochs=1)
    """
    assert "does more than call `fit`" in _refused(tmp_path, code, 3)
    code = "for epoch in range(5):\n    h = model.fit(x, y)\nprint(h.history)\n"
    assert "`h` (the `History`) is read" in _refused(tmp_path, code, 2)
    code = "for epoch in range(5):\n    model.fit(x, y)\nprint(epoch)\n"
    assert "`epoch` is read after the loop" in _refused(tmp_path, code, 2)


def test_arguments_that_may_change_or_act_per_call_are_refused(tmp_path: Path) -> None:
    code = "for epoch in range(5):\n    model.fit(x, y, callbacks=[EarlyStopping()])\n"
    assert "`callbacks=`" in _refused(tmp_path, code, 2)
    code = "for epoch in range(5):\n    model.fit(ds, steps_per_epoch=10)\n"
    assert "`steps_per_epoch=`" in _refused(tmp_path, code, 2)
    code = "for epoch in range(5):\n    model.fit(next_batch(), epochs=1)\n"
    assert "a call, which could give another value" in _refused(tmp_path, code, 2)
    code = "for epoch in range(5):\n    model.fit(x, y, epochs=k)\n"
    assert "`epochs=` is not a number" in _refused(tmp_path, code, 2)
    code = "for epoch in range(5):\n    model.fit(x, y, batch_size=sizes[epoch])\n"
    assert "`batch_size=` reads `epoch`" in _refused(tmp_path, code, 2)


def test_loops_that_are_not_a_plain_count_are_refused(tmp_path: Path) -> None:
    code = "for part in parts:\n    model.fit(part, epochs=1)\n"
    assert "not `for … in range(n)`" in _refused(tmp_path, code, 2)
    code = "while True:\n    model.fit(x, y)\n"
    assert "not directly in a `for` loop" in _refused(tmp_path, code, 2)
    code = "model.fit(x, y, epochs=20)\n"
    assert "not directly in a `for` loop" in _refused(tmp_path, code, 1)


def _outcome(wall_s: float, per_call_s: float) -> Outcome:
    return Outcome(0, "ok", "loss 0.1\n", wall_s, {"train.py:3": (per_call_s,) * 5})


def test_one_fit_is_judged_on_the_script_not_per_call() -> None:
    # one fit of 20 epochs takes longer per call than one of the loop's, and the script less
    e = Edit("one-fit", "train.py", 3, 3, "a", "b", "loop → one fit", same_call=False)
    v = judge([_outcome(6.0, 0.1)], [_outcome(3.0, 1.0)], e, "train.py", 1e-3)
    assert v.scope == "script" and v.ok and v.ratio == 2.0, v
    per_call = Edit("predict-on-batch", "train.py", 3, 3, "a", "b", "predict")
    v = judge([_outcome(6.0, 0.1)], [_outcome(3.0, 1.0)], per_call, "train.py", 1e-3)
    assert v.scope == "per call" and not v.ok
