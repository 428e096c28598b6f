"""Docs that are generated from the code must match it."""

from __future__ import annotations

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
