"""`import tfdiag` never imports TensorFlow, and `explain` runs where TensorFlow is absent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT, run_cli_without_tensorflow
from tf20_fixture import tf20_predict_stats


def test_import_does_not_import_tensorflow_or_numpy() -> None:
    code = (
        "import sys, tfdiag\n"
        "heavy = [m for m in ('tensorflow', 'keras', 'tf_keras', 'numpy', 'rich') "
        "if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_explain_works_when_tensorflow_cannot_be_imported(tmp_path: Path) -> None:
    prof = tmp_path / "seed.prof"
    prof.write_bytes(tf20_predict_stats().to_prof_bytes())
    proc = run_cli_without_tensorflow("explain", str(prof), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"per-call-input-pipeline"' in proc.stdout


def test_the_documented_module_paths_resolve() -> None:
    """``tfdiag.compare`` is the function; the methods table and the percent helper live in
    ``tfdiag.measure`` (docs/compare.md)."""
    import tfdiag
    import tfdiag.measure
    from tfdiag.measure import METHODS, signed_percent

    assert callable(tfdiag.compare) and tfdiag.compare is tfdiag.measure.compare
    assert {m.name for m in METHODS} >= {"predict", "predict_on_batch", "tf.function"}
    assert signed_percent(1.0, 2.0) == 100.0
