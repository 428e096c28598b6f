"""`import tfdiag` never imports TensorFlow, and `explain` runs where TensorFlow is absent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from tf20_fixture import tf20_predict_stats


def test_import_does_not_import_tensorflow() -> None:
    code = (
        "import sys, tfdiag\n"
        "heavy = [m for m in ('tensorflow', 'keras', 'tf_keras') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_explain_works_when_tensorflow_cannot_be_imported(tmp_path: Path) -> None:
    prof = tmp_path / "seed.prof"
    prof.write_bytes(tf20_predict_stats().to_prof_bytes())
    # A meta-path hook makes `import tensorflow` (and keras) fail, as on a machine without it.
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('tensorflow', 'keras', 'tf_keras'):\n"
        "            raise ImportError('no tensorflow here')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from tfdiag.cli import main\n"
        f"raise SystemExit(main(['explain', {str(prof)!r}, '--format', 'json']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert '"per-call-input-pipeline"' in proc.stdout
