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


def test_loading_and_explaining_a_report_does_not_import_libcst(tmp_path: Path) -> None:
    """libcst is for ``patches()`` and ``tfdiag fix`` (tfdiag/fix/): a saved report loads,
    gives its findings and is explained, in both views, without it."""
    prof = tmp_path / "seed.prof"
    prof.write_bytes(tf20_predict_stats().to_prof_bytes())
    code = (
        "import contextlib, io, sys, tfdiag\n"
        "from tfdiag.frontends.cli import main\n"
        f"r = tfdiag.load_report({str(prof)!r})\n"
        "assert r.findings\n"
        f"saved = r.save({str(tmp_path / 'saved')!r})[0]\n"
        "assert tfdiag.load_report(saved).findings\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    for args in ([], ['--format', 'json']):\n"
        "        assert main(['explain', str(saved), *args]) == 0\n"
        "assert 'libcst' not in sys.modules\n"
        "r.patches()\n"
        "assert 'libcst' in sys.modules  # the check above can fail\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)


def test_the_documented_module_paths_resolve() -> None:
    """``tfdiag.compare`` is the function; the methods table and the percent helper live in
    ``tfdiag.measure`` (docs/compare.md)."""
    import tfdiag
    import tfdiag.measure
    from tfdiag.measure import METHODS, signed_percent

    assert callable(tfdiag.compare) and tfdiag.compare is tfdiag.measure.compare
    assert {m.name for m in METHODS} >= {"predict", "predict_on_batch", "tf.function"}
    assert signed_percent(1.0, 2.0) == 100.0


def test_import_loads_no_module_until_a_name_is_used() -> None:
    """``import tfdiag`` is the package root and its version (≤ 40 ms over a bare
    interpreter: benchmarks/scale.py prints it); each public name loads its module on first
    use, and is then the object its home module defines."""
    code = (
        "import sys, tfdiag\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('tfdiag'))\n"
        "assert loaded == ['tfdiag', 'tfdiag.records', 'tfdiag.records.version'], loaded\n"
        "tfdiag.InputError\n"
        "assert 'tfdiag.render.console' not in sys.modules\n"
        "assert 'tfdiag.results.merge' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_every_public_name_resolves_to_its_home_modules_object() -> None:
    import importlib

    import tfdiag

    for name in tfdiag.__all__:
        value = getattr(tfdiag, name)
        where = tfdiag._WHERE.get(name)
        if where is not None:
            home = importlib.import_module(where)
            assert value is (home if where == f"tfdiag.{name}" else getattr(home, name)), name
    assert set(tfdiag.__all__) <= set(dir(tfdiag))
    assert set(tfdiag._WHERE) | {"__version__", "load_ipython_extension"} == set(tfdiag.__all__)
    try:
        tfdiag.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_a_reports_view_loads_no_other_kinds_writer(tmp_path: Path) -> None:
    """The format table names its writers and imports each when it first writes (REVIEW
    §7.7): a report's console view and JSON load neither the other kinds' views nor the
    HTML page."""
    prof = tmp_path / "seed.prof"
    prof.write_bytes(tf20_predict_stats().to_prof_bytes())
    code = (
        "import sys, tfdiag\n"
        f"r = tfdiag.load_report({str(prof)!r})\n"
        "r.render('text'); r.render('json')\n"
        "others = [m for m in ('compare_console', 'bench_console', 'job_console', "
        "'script_console', 'diff_console', 'html', 'plot', 'bench_files', 'compare_json') "
        "if 'tfdiag.render.' + m in sys.modules]\n"
        "assert not others, others\n"
        "assert 'tfdiag.render.console' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_every_writer_the_format_table_names_resolves() -> None:
    from tfdiag.render.formats import BRIEF_VIEWS, DOCUMENTS, VIEWS, writer

    for table in (VIEWS, BRIEF_VIEWS, DOCUMENTS):
        for kind, ref in table.items():
            assert callable(writer(ref)), (kind, ref)


def test_profile_without_verify_loads_no_verification_module() -> None:
    """Verification (and compare's engine under it) loads only when ``verify=True`` asks."""
    code = (
        "import sys, tfdiag\n"
        "def work():\n"
        "    return sum(i * i for i in range(2000))\n"
        "tfdiag.profile(work, iterations=3, tf_profiler=False)\n"
        "loaded = [m for m in sys.modules if m.startswith('tfdiag.measure.verify')]\n"
        "assert not loaded, loaded\n"
        "assert 'tfdiag.measure.budget' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)
