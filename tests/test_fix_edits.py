"""The edit kinds of ``tfdiag fix`` on source strings: libcst trees, no TensorFlow."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfdiag.fix.apply import write
from tfdiag.fix.edits import Edit, Files, NoEdit, Target, kind_for
from tfdiag.fix.patch import unified_diff


def _edit(tmp_path: Path, code: str, target: Target) -> Edit | NoEdit:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    t = Target(**{**target.__dict__, "file": str(path) if target.line else ""})
    kind = kind_for(t.remedy)
    assert kind is not None, t.remedy
    return kind.edit(Files(tmp_path, (path,)), t)


def _changed(e: Edit | NoEdit) -> list[str]:
    assert isinstance(e, Edit), e
    diff = unified_diff(e.before, e.after, "train.py").splitlines()
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


PREDICT = """\
for i in range(0, 256, 8):
    y = model.predict(x[i : i + 8], verbose=0)  # per batch
    total += y.sum()
"""


def test_predict_per_batch_becomes_predict_on_batch_keeping_the_comment(tmp_path: Path) -> None:
    e = _edit(tmp_path, PREDICT, Target("per-call-input-pipeline", "keras-loop:predict", line=2))
    assert _changed(e) == [
        "-    y = model.predict(x[i : i + 8], verbose=0)  # per batch",
        "+    y = model.predict_on_batch(x[i : i + 8])  # per batch",
    ]


def test_predict_with_callbacks_is_not_changed(tmp_path: Path) -> None:
    code = "y = model.predict(x, callbacks=[cb])\n"
    e = _edit(tmp_path, code, Target("per-call-input-pipeline", "keras-loop:predict", line=1))
    assert isinstance(e, NoEdit) and "`callbacks=`" in e.reason


HOIST_FN = """\
import keras

VOCAB = ["a", "b"]


def encode(batch):
    # the vocabulary never changes
    lookup = keras.layers.StringLookup(
        vocabulary=VOCAB,
    )
    return lookup(batch)
"""


def test_a_constructor_in_a_function_moves_above_it_with_its_comment(tmp_path: Path) -> None:
    e = _edit(tmp_path, HOIST_FN, Target("model-rebuilt-per-call", "construct", line=8))
    assert isinstance(e, Edit)
    assert e.after == (
        'import keras\n\nVOCAB = ["a", "b"]\n# the vocabulary never changes\n'
        "lookup = keras.layers.StringLookup(\n    vocabulary=VOCAB,\n)\n\n\n"
        "def encode(batch):\n    return lookup(batch)\n"
    )
    assert e.new_line == 5
    compile(e.after, "train.py", "exec")


def test_a_setup_call_in_a_loop_moves_before_the_loop(tmp_path: Path) -> None:
    code = """\
    for epoch in range(3):
        model.compile("adam", "mse")
        model.fit(x, y, verbose=0)
    """
    e = _edit(tmp_path, code, Target("model-rebuilt-per-call", "setup:compile", line=2))
    assert isinstance(e, Edit)
    assert e.after.splitlines()[:2] == ['model.compile("adam", "mse")', "for epoch in range(3):"]


def test_a_call_that_reads_the_loop_variable_is_not_moved_and_says_why(tmp_path: Path) -> None:
    """Hoisting would build every iteration's layer with the first iteration's size."""
    code = """\
    for units in (4, 8, 16):
        layer = keras.layers.Dense(units)
        print(layer(x).shape)
    """
    e = _edit(tmp_path, code, Target("model-rebuilt-per-call", "construct", line=2))
    assert isinstance(e, NoEdit)
    assert "it reads `units`, which the loop at line 1 changes" in e.reason


def test_a_call_whose_data_the_loop_changes_in_place_is_not_moved(tmp_path: Path) -> None:
    code = """\
    for batch in stream:
        seen.append(batch)
        lookup.adapt(seen)
    """
    e = _edit(tmp_path, code, Target("model-rebuilt-per-call", "setup:adapt", line=3))
    assert isinstance(e, NoEdit) and "changes `seen` in place" in e.reason


def test_a_call_that_reads_a_parameter_stays_in_its_function(tmp_path: Path) -> None:
    code = """\
    def encode(batch, vocab):
        lookup = keras.layers.StringLookup(vocabulary=vocab)
        return lookup(batch)
    """
    e = _edit(tmp_path, code, Target("model-rebuilt-per-call", "construct", line=2))
    assert isinstance(e, NoEdit) and "`vocab`, a parameter of `encode`" in e.reason


def test_a_call_under_an_if_is_not_moved(tmp_path: Path) -> None:
    code = """\
    for step in range(10):
        if step == 5:
            opt = keras.optimizers.Adam(1e-3)
    """
    e = _edit(tmp_path, code, Target("model-rebuilt-per-call", "construct:optimizer", line=3))
    assert isinstance(e, NoEdit) and "under the `if`" in e.reason


def test_run_eagerly_is_removed_where_the_record_names_no_line(tmp_path: Path) -> None:
    code = """\
    model.compile(
        "sgd",
        "mse",
        run_eagerly=True,
    )
    """
    e = _edit(tmp_path, code, Target("eager-execution", "debug-switch:run-eagerly"))
    assert isinstance(e, Edit) and e.line == 1
    assert e.after == 'model.compile(\n    "sgd",\n    "mse",\n    )\n'
    compile(e.after, "train.py", "exec")


def test_run_eagerly_as_the_last_keyword_leaves_no_dangling_comma(tmp_path: Path) -> None:
    code = 'model.compile("sgd", "mse", run_eagerly=True)  # debugging\n'
    e = _edit(tmp_path, code, Target("eager-execution", "debug-switch:run-eagerly"))
    assert isinstance(e, Edit) and e.after == 'model.compile("sgd", "mse")  # debugging\n'


def test_a_global_debug_mode_statement_is_removed_and_its_block_keeps_a_body(
    tmp_path: Path,
) -> None:
    code = """\
    import tensorflow as tf

    if DEBUG:
        tf.data.experimental.enable_debug_mode()
    x = 1
    """
    e = _edit(tmp_path, code, Target("slow-map", "debug-switch:tf-data-debug"))
    assert isinstance(e, Edit)
    assert e.after == "import tensorflow as tf\n\nif DEBUG:\n    pass\nx = 1\n"


def test_a_switch_set_nowhere_gets_no_patch(tmp_path: Path) -> None:
    e = _edit(tmp_path, "x = 1\n", Target("eager-execution", "debug-switch:run-eagerly"))
    assert isinstance(e, NoEdit) and "set nowhere" in e.reason


STEP = """\
import tensorflow as tf


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""


def test_an_eager_step_gets_tf_function(tmp_path: Path) -> None:
    t = Target("eager-execution", "eager:tf-function-step", line=7, function="train_step")
    assert _changed(_edit(tmp_path, STEP, t)) == ["+@tf.function"]


def test_a_step_that_prints_is_not_compiled(tmp_path: Path) -> None:
    code = STEP.replace("    return loss", "    print(float(loss))\n    return loss")
    t = Target("eager-execution", "eager:tf-function-step", line=7, function="train_step")
    e = _edit(tmp_path, code, t)
    assert isinstance(e, NoEdit) and "`print`" in e.reason


def test_a_decorated_step_run_eagerly_loses_the_switch_instead(tmp_path: Path) -> None:
    code = "import tensorflow as tf\n\ntf.config.run_functions_eagerly(True)\n\n\n@tf.function\n"
    code += "def step(x):\n    return x * 2\n"
    t = Target("eager-execution", "eager:tf-function", line=8, function="step")
    assert _changed(_edit(tmp_path, code, t)) == ["-", "-tf.config.run_functions_eagerly(True)"]


RETRACE = """\
import tensorflow as tf


@tf.function
def step(x, scale):
    return tf.reduce_sum(x * scale)


for i in range(40):
    total = step(x, i / 10)  # a new Python float every call
"""
#: The evidence line the retracing finding carries (tfdiag.advise.tracing).
TRACED = (
    "`step` (train.py:4) was traced 10× in the steady calls; argument `scale` is a Python "
    "value that changes: 0.1, 0.2, 0.3, 0.4, … — each new value is traced into a new graph"
)


def _retrace(line: int = 10) -> Target:
    return Target(
        "per-iteration-tracing",
        "per-iteration-tracing:python-value@line",
        line=line,
        evidence=("graph building self time: 44 %", TRACED),
    )


def test_a_python_scalar_is_passed_as_a_tensor_keeping_the_comment(tmp_path: Path) -> None:
    assert _changed(_edit(tmp_path, RETRACE, _retrace())) == [
        "-    total = step(x, i / 10)  # a new Python float every call",
        "+    total = step(x, tf.constant(i / 10))  # a new Python float every call",
    ]


def test_the_call_is_found_from_the_definition_when_the_line_is_inside_it(
    tmp_path: Path,
) -> None:
    """The finding's line can be inside the traced function (autograph's copy of it): the
    call of the function the record names is edited, here by keyword."""
    code = RETRACE.replace("step(x, i / 10)", "step(x,\n        scale=i / 10)")
    e = _edit(tmp_path, code, _retrace(line=6))
    assert _changed(e) == [
        "-        scale=i / 10)  # a new Python float every call",
        "+        scale=tf.constant(i / 10))  # a new Python float every call",
    ]
    assert isinstance(e, Edit) and e.line == 10


def test_a_function_of_the_same_name_in_a_file_beside_it_is_another_function(
    tmp_path: Path,
) -> None:
    """A ``fixed.py`` beside ``train.py`` with its own ``step``: its call was counted as a
    second caller of train.py's, and no patch was made ("gets `scale` from 2 calls"). A
    file's calls count only where it defines the function or imports it."""
    code = RETRACE.replace("step(x, i / 10)", "step(x,\n        scale=i / 10)")
    (tmp_path / "fixed.py").write_text(
        "import tensorflow as tf\n\n\ndef step(x, scale):\n    return x * scale\n\n\n"
        "for i in range(40):\n    step(1.0, i / 10)\n"
    )
    (tmp_path / "runner.py").write_text("from train import step\n\nstep(1.0, 0.5 + 1)\n")
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    files = Files(tmp_path, (path, tmp_path / "fixed.py"))
    t = Target(**{**_retrace(line=6).__dict__, "file": str(path)})
    e = kind_for(t.remedy).edit(files, t)  # type: ignore[union-attr]
    assert isinstance(e, Edit) and e.file == str(path), e
    # a file that imports it calls the same function: two callers, which one is not known
    files = Files(tmp_path, (path, tmp_path / "runner.py"))
    (tmp_path / "runner.py").write_text("from train import step\n\nstep(1.0, scale=v)\n")
    e = kind_for(t.remedy).edit(files, t)  # type: ignore[union-attr]
    assert isinstance(e, NoEdit) and "from 2 calls" in e.reason, e


def test_a_parameter_used_as_a_python_value_is_not_made_a_tensor(tmp_path: Path) -> None:
    """``range(n)`` of a tensor is a graph loop: not the program the user wrote."""
    code = RETRACE.replace(
        "return tf.reduce_sum(x * scale)", "for _ in range(scale):\n        x = x * 2\n    return x"
    )
    e = _edit(tmp_path, code, _retrace())
    assert isinstance(e, NoEdit) and "uses `scale` as a Python value (`range(...)`)" in e.reason


def test_two_calls_passing_the_value_are_not_guessed_between(tmp_path: Path) -> None:
    code = RETRACE + "    step(x, i * 2)\n"
    e = _edit(tmp_path, code, _retrace(line=6))
    assert isinstance(e, NoEdit) and "from 2 calls (train.py:10, train.py:11)" in e.reason


def test_an_argument_passed_a_literal_or_a_tensor_already_is_not_wrapped(tmp_path: Path) -> None:
    e = _edit(tmp_path, RETRACE.replace("i / 10", "0.5"), _retrace())
    assert isinstance(e, NoEdit) and "passes `scale` a changing value" in e.reason
    e = _edit(tmp_path, RETRACE.replace("i / 10", "tf.constant(i / 10)"), _retrace())
    assert isinstance(e, NoEdit) and "a tensor already" in e.reason


PIPELINE = """\
import tensorflow as tf

ds = tf.data.Dataset.from_tensor_slices((x, y))  # rows
ds = ds.map(augment).batch(64)
ds = ds.map(
    normalize,
)
model.fit(ds, epochs=4, verbose=0)
"""


def _input_bound(line: int = 8, variant: str = "map-before-batch") -> Target:
    return Target("input-bound", f"input-bound:{variant}", line=line)


def test_a_dataset_chain_gets_parallel_maps_and_a_prefetch_keeping_its_layout(
    tmp_path: Path,
) -> None:
    e = _edit(tmp_path, PIPELINE, _input_bound())
    assert isinstance(e, Edit)
    assert e.after == PIPELINE.replace(
        "ds.map(augment)", "ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE)"
    ).replace(
        "    normalize,\n)",
        "    normalize,\n    num_parallel_calls=tf.data.AUTOTUNE,\n).prefetch(tf.data.AUTOTUNE)",
    )
    assert (e.line, e.new_line) == (8, 9)  # the fit call, a line further down
    compile(e.after, "train.py", "exec")


def test_a_one_line_chain_anchored_at_its_construction(tmp_path: Path) -> None:
    code = "import tensorflow as tf\n\nds = tf.data.Dataset.range(9).map(f).prefetch(2)  # x\n"
    e = _edit(tmp_path, code, _input_bound(line=3, variant="other"))
    assert _changed(e) == [
        "-ds = tf.data.Dataset.range(9).map(f).prefetch(2)  # x",
        "+ds = tf.data.Dataset.range(9).map(f, num_parallel_calls=tf.data.AUTOTUNE)"
        ".prefetch(2)  # x",
    ]


def test_a_parenthesised_chain_gets_its_prefetch_on_its_own_line(tmp_path: Path) -> None:
    code = (
        "import tensorflow as tf\n\nds = (\n    tf.data.Dataset.range(9)\n"
        "    .map(f, num_parallel_calls=4)\n    .batch(3)\n)\nfor b in ds:\n    pass\n"
    )
    e = _edit(tmp_path, code, _input_bound(line=8))
    assert _changed(e) == ["+    .prefetch(tf.data.AUTOTUNE)"]


def test_a_dataset_not_built_from_tf_data_here_is_not_edited(tmp_path: Path) -> None:
    """A dataset from a loader (or a parameter) has its chain elsewhere: not this file's."""
    code = "import tensorflow as tf\n\nds = load_data(path).map(f)\nmodel.fit(ds)\n"
    e = _edit(tmp_path, code, _input_bound(line=4))
    assert isinstance(e, NoEdit) and "made by `load_data(path).map(f)`" in e.reason
    code = "import tensorflow as tf\n\nds = tf.data.Dataset.range(3).map(f, num_parallel_calls=2)"
    e = _edit(tmp_path, code + ".prefetch(1)\n", _input_bound(line=3))
    assert isinstance(e, NoEdit) and "prefetches already" in e.reason


def test_a_remedy_no_kind_answers_has_no_edit_kind() -> None:
    assert kind_for("summary") is None and kind_for(None) is None


def test_the_diff_is_git_compatible() -> None:
    diff = unified_diff("a = 1\nb = 2\n", "a = 1\nb = 3\n", "sub/train.py")
    assert diff.splitlines()[:3] == [
        "diff --git a/sub/train.py b/sub/train.py",
        "--- a/sub/train.py",
        "+++ b/sub/train.py",
    ]


def _one_edit(tmp_path: Path) -> Edit:
    e = _edit(tmp_path, PREDICT, Target("per-call-input-pipeline", "keras-loop:predict", line=2))
    assert isinstance(e, Edit)
    return e


def test_apply_writes_atomically_with_a_backup(tmp_path: Path) -> None:
    e = _one_edit(tmp_path)
    done = write(e, tmp_path)
    assert done.path.read_text() == e.after and done.backup.read_text() == e.before
    assert done.backup.name == "train.py.orig"


def test_apply_refuses_a_file_changed_since_the_run(tmp_path: Path) -> None:
    import pytest

    from tfdiag.records.errors import InputError

    e = _one_edit(tmp_path)
    (tmp_path / "train.py").write_text(e.before + "# edited\n")
    with pytest.raises(InputError, match="changed since it was run"):
        write(e, tmp_path)
    assert not (tmp_path / "train.py.orig").exists()


def test_apply_refuses_a_path_outside_the_tree_and_a_patch_that_does_not_compile(
    tmp_path: Path,
) -> None:
    import dataclasses

    import pytest

    from tfdiag.records.errors import InputError

    e = _one_edit(tmp_path)
    with pytest.raises(InputError, match="outside the script's folder"):
        write(e, tmp_path / "elsewhere")
    broken = dataclasses.replace(e, after=e.after + "def (:\n")
    with pytest.raises(InputError, match="does not compile"):
        write(broken, tmp_path)
    assert (tmp_path / "train.py").read_text() == e.before


def test_a_report_loads_libcst_only_when_it_proposes() -> None:
    """``tfdiag.results`` holds proposals; the syntax-tree library is the proposer's."""
    import subprocess
    import sys

    code = (
        "import sys, tfdiag.results.report, tfdiag.results.script, tfdiag.fix.patch\n"
        "print(sorted(m for m in ('libcst', 'tensorflow', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_outputs_agree_on_numbers_within_tolerance_and_on_nan() -> None:
    from tfdiag.fix.verify_patch import same_output

    assert same_output("loss 0.12345\n", "loss 0.12346\n", 1e-3)
    assert same_output("loss nan\n", "loss nan\n", 1e-3)
    assert not same_output("loss nan\n", "loss 0.1\n", 1e-3)
    assert not same_output("loss 0.12\n", "loss 0.13\n", 1e-3)


def _edit_bytes(tmp_path: Path, raw: bytes, line: int = 2) -> Edit:
    path = tmp_path / "train.py"
    path.write_bytes(raw)
    t = Target("per-call-input-pipeline", "keras-loop:predict", file=str(path), line=line)
    kind = kind_for(t.remedy)
    assert kind is not None
    e = kind.edit(Files(tmp_path, (path,)), t)
    assert isinstance(e, Edit), e
    return e


def test_apply_keeps_crlf_and_the_backup_is_the_file_byte_for_byte(tmp_path: Path) -> None:
    """A CRLF file read with universal newlines was written back with LF: every line of
    the patched file changed, and the backup was not the original."""
    raw = PREDICT.replace("\n", "\r\n").encode()
    done = write(_edit_bytes(tmp_path, raw), tmp_path)
    assert done.backup.read_bytes() == raw
    old_call, new_call = b"predict(x[i : i + 8], verbose=0)", b"predict_on_batch(x[i : i + 8])"
    assert done.path.read_bytes() == raw.replace(old_call, new_call)


def test_apply_keeps_a_bom_and_a_declared_encoding(tmp_path: Path) -> None:
    """A BOM was dropped (libcst strips it from a str); a PEP 263 latin-1 file was
    refused as "does not parse" though Python runs it."""
    bom = b"\xef\xbb\xbf" + PREDICT.encode()
    (tmp_path / "bom").mkdir()
    done = write(_edit_bytes(tmp_path / "bom", bom), tmp_path / "bom")
    assert done.backup.read_bytes() == bom
    assert done.path.read_bytes().startswith(b"\xef\xbb\xbffor i in")
    latin = b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + PREDICT.encode()
    (tmp_path / "latin").mkdir()
    e = _edit_bytes(tmp_path / "latin", latin, line=4)
    done = write(e, tmp_path / "latin")
    assert done.backup.read_bytes() == latin
    assert done.path.read_bytes().startswith(b"# -*- coding: latin-1 -*-\n# caf\xe9\n")
    assert b"predict_on_batch" in done.path.read_bytes()


def test_apply_refuses_a_file_whose_bytes_changed_in_any_way(tmp_path: Path) -> None:
    """Non-UTF-8 bytes raised UnicodeDecodeError (a traceback); a change of line endings
    alone was not seen (the hash was of the text read with universal newlines)."""
    import pytest

    from tfdiag.records.errors import InputError

    e = _one_edit(tmp_path)
    for now in (b"\xff\xfe not text", PREDICT.replace("\n", "\r\n").encode()):
        (tmp_path / "train.py").write_bytes(now)
        with pytest.raises(InputError, match="changed since it was run"):
            write(e, tmp_path)
        assert (tmp_path / "train.py").read_bytes() == now
    assert not (tmp_path / "train.py.orig").exists()


def test_apply_never_writes_its_backup_through_a_link(tmp_path: Path) -> None:
    """A dangling link at ``train.py.orig`` passed ``exists()`` and was followed: the backup
    was written where the link pointed, outside the script's folder."""
    import os

    import pytest

    from tfdiag.records.errors import InputError

    (tmp_path / "proj").mkdir()
    e = _one_edit(tmp_path / "proj")
    victim = tmp_path / "victim.txt"
    os.symlink(victim, tmp_path / "proj" / "train.py.orig")
    with pytest.raises(InputError, match="exists"):
        write(e, tmp_path / "proj")
    assert not victim.exists()
    assert (tmp_path / "proj" / "train.py").read_text() == e.before


def test_apply_refuses_a_read_only_file(tmp_path: Path) -> None:
    import os

    import pytest

    from tfdiag.records.errors import InputError

    e = _one_edit(tmp_path)
    os.chmod(tmp_path / "train.py", 0o444)
    try:
        with pytest.raises(InputError, match="read-only"):
            write(e, tmp_path)
        assert (tmp_path / "train.py").read_text() == e.before
        assert not (tmp_path / "train.py.orig").exists()
    finally:
        os.chmod(tmp_path / "train.py", 0o644)


def test_the_measured_copy_holds_the_folders_data_so_a_run_cannot_change_it(
    tmp_path: Path,
) -> None:
    """Data files were linked into the copy: a measured run that appended to an existing
    file of its folder (a log, a model it saves each run) wrote into the user's own file.
    A folder that is a link was left out of the copy (os.walk does not follow it), so a
    script reading its data from it failed in the copy and nothing could be verified."""
    import os

    from tfdiag.fix.verify_patch import Linked, copy_tree

    root, into = tmp_path / "proj", tmp_path / "copy"
    (root / "sub").mkdir(parents=True)
    (root / "train.py").write_text("print(1)\n")
    (root / "log.txt").write_text("mine\n")
    (root / "sub" / "data.csv").write_text("1,2\n")
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "big.bin").write_bytes(b"x" * 10)
    os.symlink(tmp_path / "datasets", root / "data")
    linked = copy_tree(root, into)
    with open(into / "log.txt", "a") as f:
        f.write("a measured run\n")
    (into / "sub" / "data.csv").write_text("changed\n")
    assert (root / "log.txt").read_text() == "mine\n"
    assert (root / "sub" / "data.csv").read_text() == "1,2\n"
    assert (into / "data" / "big.bin").read_bytes() == b"x" * 10
    assert isinstance(linked, Linked) and linked.changed() == []


def test_a_write_into_a_file_too_large_to_copy_is_seen(tmp_path: Path, monkeypatch) -> None:
    import tfdiag.fix.verify_patch as vp

    monkeypatch.setattr(vp, "COPY_MAX_FILE", 4)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "model.bin").write_bytes(b"0123456789")
    linked = vp.copy_tree(root, tmp_path / "copy")
    assert (tmp_path / "copy" / "model.bin").is_symlink()
    (tmp_path / "copy" / "model.bin").write_bytes(b"new model, written through the link")
    assert linked.changed() == ["model.bin"]


def test_measured_runs_read_no_stdin(tmp_path: Path, monkeypatch) -> None:
    """Each measured run inherited tfdiag's stdin: the first version read a piped input,
    the second got nothing, and the patch was refused as 'outputs differ'."""
    import subprocess

    import tfdiag.fix.verify_patch as vp

    seen: dict[str, object] = {}

    def fake_run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        seen.update(kwargs)
        return subprocess.CompletedProcess(cmd, 1, "", "")

    monkeypatch.setattr(vp.subprocess, "run", fake_run)
    (tmp_path / "v").mkdir()
    vp.run_once(tmp_path / "v", "train.py", [], tmp_path, 10.0)
    assert seen.get("stdin") is subprocess.DEVNULL


def _timed_runs(monkeypatch, walls: dict[str, list[float]]) -> list[str]:
    """``run_once`` replaced: each version's runs take the next of its ``walls``."""
    import tfdiag.fix.verify_patch as vp

    order: list[str] = []

    def fake(folder: Path, script: str, argv: object, cwd: Path, timeout_s: float) -> object:
        order.append(folder.name)
        return vp.Outcome(0, "ok", "45\n", walls[folder.name].pop(0))

    monkeypatch.setattr(vp, "run_once", fake)
    return order


def test_a_patch_that_looks_faster_is_measured_again_before_it_is_offered(
    tmp_path: Path, monkeypatch
) -> None:
    """A comment-only patch was "verified 1.8×" on a 1 ms script: a few runs can land below
    the original by chance. A first look that says faster gets as many runs again, and the
    verdict is on all of them."""
    import tfdiag.fix.verify_patch as vp

    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print(45)\n")
    edit = Edit("hoist", "train.py", 1, 1, "print(45)\n", "print(45)  # no-op\n", "a comment")
    # by chance: the first two pairs say 2× faster, the next two the same
    order = _timed_runs(monkeypatch, {"original": [2.0, 2.0, 1.0, 1.0], "patched": [1.0] * 4})
    v = vp.verify(edit, tmp_path / "train.py", [], relpath="train.py", runs=2)
    assert not v.ok and v.runs == 4 and "not faster beyond the noise" in v.reason
    assert order == ["original", "patched", "patched", "original"] * 2
    # a patch faster in every run is offered, on all four
    _timed_runs(monkeypatch, {"original": [2.0] * 4, "patched": [1.0] * 4})
    v = vp.verify(edit, tmp_path / "train.py", [], relpath="train.py", runs=2)
    assert v.ok and v.runs == 4 and v.ratio == 2.0
    # a first look that says slower costs no second one
    order = _timed_runs(monkeypatch, {"original": [1.0] * 2, "patched": [1.0] * 2})
    assert not vp.verify(edit, tmp_path / "train.py", [], relpath="train.py", runs=2).ok
    assert len(order) == 4


def test_a_measured_run_works_in_the_copy_of_the_folder_it_is_typed_in(
    tmp_path: Path, monkeypatch
) -> None:
    """Typed in a project root for ``scripts/train.py``, the measured runs worked in the real
    project root: the script's relative files (a log, a saved model) landed among the
    user's. The copy is of the folder the command is typed in when that holds the script,
    the runs work in the copy, and the patched file is the copy's ``scripts/train.py``."""
    import tfdiag.fix.verify_patch as vp

    proj = tmp_path / "proj"
    (proj / "scripts").mkdir(parents=True)
    (proj / "data").mkdir()
    (proj / "data" / "x.csv").write_text("1\n")
    (proj / "scripts" / "train.py").write_text("print(45)\n")
    monkeypatch.chdir(proj)
    seen: list[tuple[str, str, bool, bytes]] = []

    def fake(folder: Path, script: str, argv: object, cwd: Path, timeout_s: float) -> object:
        patched = (folder / "scripts" / "train.py").read_bytes()
        seen.append((folder.name, script, cwd == folder, patched))
        assert (cwd / "data" / "x.csv").is_file()  # the script's relative reads still work
        return vp.Outcome(0, "ok", "45\n", 2.0 if folder.name == "original" else 1.0)

    monkeypatch.setattr(vp, "run_once", fake)
    edit = Edit("hoist", "scripts/train.py", 1, 1, "print(45)\n", "print(46)\n", "a change")
    v = vp.verify(edit, proj / "scripts" / "train.py", [], relpath="train.py", runs=1)
    assert v.ok, v
    assert {(n, s, c) for n, s, c, _ in seen} == {
        ("original", "scripts/train.py", True),
        ("patched", "scripts/train.py", True),
    }
    assert {n: b for n, _, _, b in seen} == {"original": b"print(45)\n", "patched": b"print(46)\n"}
    # typed below the script's folder: the copy is the script's folder, run where typed
    monkeypatch.chdir(proj / "data")
    assert vp.copy_root(proj / "scripts", proj / "scripts" / "sub") == (
        proj / "scripts",
        Path(),
        Path("sub"),
    )


def test_fix_typed_beside_the_scripts_folder_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    """From a sibling folder no copy can hold both the script and the folder it works in:
    refused as bad input, before the script's diagnosis run (nothing written anywhere)."""
    import subprocess
    import sys

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "train.py").write_text("open('ran.txt', 'w').write('x')\n")
    proc = subprocess.run(
        [sys.executable, "-m", "tfdiag", "fix", "../a/train.py"],
        cwd=tmp_path / "b",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"tfdiag: error: run tfdiag fix from {tmp_path / 'a'} or a folder above it: a measured "
        "run works in a copy of the folder it is typed in, so that the script's relative "
        "files land in the copy"
    ]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b", "train.py"]
