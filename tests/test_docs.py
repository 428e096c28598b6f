"""Docs that are generated from the code must match it."""

from __future__ import annotations

import pytest
from conftest import ROOT

from tfdiag.render.catalog_doc import catalog_markdown


def test_catalog_reference_is_current() -> None:
    doc = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    generated = catalog_markdown()
    assert doc.endswith(generated), "regenerate: python -m tfdiag catalog (see docs/catalog.md)"


def test_readme_links_exist() -> None:
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\((docs/[^)]+)\)", readme):
        assert (ROOT / target).exists(), target


def test_every_test_named_in_the_hardening_table_exists() -> None:
    import re

    doc = (ROOT / "docs" / "hardening.md").read_text(encoding="utf-8")
    refs = re.findall(r"`(test_\w+\.py)(?:::(\w+))?", doc)
    assert len(refs) > 20
    last_file = None
    for file, name in refs:
        source = (ROOT / "tests" / file).read_text(encoding="utf-8")
        if name:
            assert f"def {name}(" in source, f"{file}::{name}"
        last_file = file
    # `::name` shorthand after a file refers to that file
    for name in re.findall(r"`::(\w+)`", doc):
        assert any(f"def {name}(" in p.read_text() for p in (ROOT / "tests").glob("test_*.py")), (
            name
        )
    assert last_file is not None


@pytest.mark.tf
def test_quickstart_code_runs(tmp_path, monkeypatch, capsys) -> None:
    """The quickstart's Python blocks, run in order as a user would paste them."""
    import re

    doc = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    assert len(blocks) == 4
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "quickstart.md", "exec"), namespace)
    # the causes the quickstart names; a timing pattern (spikes, drift) is the machine's
    # and a busy CI runner shows one now and then, ranked by its own severity
    timing = {"spikes", "drift"}
    ids = [f.id for f in namespace["report"].findings if f.id not in timing]  # type: ignore[attr-defined]
    assert set(ids[:2]) == {"per-call-input-pipeline", "per-iteration-tracing"}
    assert "faster than predict" in capsys.readouterr().out
    assert (tmp_path / "predict.tfdiag.json").exists() and (tmp_path / "predict.prof").exists()


def test_cli_reference_lists_every_output_format() -> None:
    from tfdiag.render.formats import FORMATS

    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Output formats") :]
    section = section[: section.index("\n## ", 1)]
    rows = {line.split("|")[1].strip(): line for line in section.splitlines() if "| `" in line}
    for f in FORMATS:
        assert f"`{f.name}`" in rows, f.name
        row = rows[f"`{f.name}`"]
        assert f.kind in row, (f.name, f.kind)
        for suffix in f.suffixes:
            assert f"`{suffix}`" in row, (f.name, suffix)


def test_install_instructions_name_what_exists() -> None:
    """tfdiag is on no index: no doc, docstring or error message tells a user to install it
    from one, and the README says where `make demo` put the CLI."""
    import re

    index = re.compile(r"pip install (?:tfdiag\b|['\"]tfdiag\[)")
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "tfdiag").rglob("*.py")]
    said = [str(p.relative_to(ROOT)) for p in files if index.search(p.read_text("utf-8"))]
    assert said == []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/python -m tfdiag" in readme and "source .venv/bin/activate" in readme
