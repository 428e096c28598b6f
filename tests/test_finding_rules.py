"""Findings a user adds as data: checked, run after the built-in ones, saved and re-run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli_without_tensorflow
from synth import Node, make_report

import tfdiag
from tfdiag.advise import FINDINGS, check_finding_rules
from tfdiag.results.load import load_report

USER = "/home/me/project/"


def _loader_report() -> tfdiag.Report:
    load = Node(USER + "io.py", "load_batch", 0.3, 10)
    work = Node(USER + "model.py", "forward", 0.7, 10)
    root = Node(USER + "train.py", "step", 0.001, 10, children=[load, work])
    return make_report([root], 10, cold=[], method="step")


RULE = tfdiag.FindingRule(
    id="slow-loader",
    title="My loader re-reads the files every step",
    path="/home/me/project/io.py",
    function="load_*",
    min_share=0.2,
    fix="Cache the decoded arrays once per epoch.",
)


def test_a_finding_rule_fires_above_its_share_with_its_own_fix() -> None:
    report = replace(_loader_report(), finding_rules=(RULE,))
    found = {f.id: f for f in report.findings}
    assert found["slow-loader"].fix == "Cache the decoded arrays once per epoch."
    assert found["slow-loader"].impact == pytest.approx(0.3, abs=1e-3)
    assert (
        "`io.py:load_batch` runs 1× per iteration: 30 % of steady-state time"
        in (found["slow-loader"].evidence[0])
    )
    below = replace(RULE, min_share=0.5)
    assert "slow-loader" not in {f.id for f in replace(report, finding_rules=(below,)).findings}


def test_finding_rules_are_checked() -> None:
    with pytest.raises(tfdiag.InputError, match="min_share"):
        replace(RULE, min_share=1.5)
    with pytest.raises(tfdiag.InputError, match="'fix'"):
        replace(RULE, fix="")
    with pytest.raises(tfdiag.InputError, match="built-in finding"):
        check_finding_rules([replace(RULE, id=FINDINGS[0].id)])
    with pytest.raises(tfdiag.InputError, match="same id"):
        check_finding_rules([RULE, RULE])
    with pytest.raises(tfdiag.InputError, match="FindingRule objects"):
        tfdiag.profile(len, [1], iterations=3, findings=["slow-loader"])


def test_finding_rules_are_saved_and_re_run_by_explain(tmp_path: Path) -> None:
    saved = replace(_loader_report(), finding_rules=(RULE,)).save(tmp_path / "run")[0]
    assert "slow-loader" in {f.id for f in load_report(saved).findings}
    plain = _loader_report().save(tmp_path / "plain")[0]
    rules = tmp_path / "findings.json"
    rules.write_text(json.dumps([RULE.to_json()]))
    proc = run_cli_without_tensorflow("explain", str(plain), "--findings", str(rules))
    assert proc.returncode == 0, proc.stderr
    assert "slow-loader" in proc.stdout and "Cache the decoded arrays" in proc.stdout
    rules.write_text(json.dumps([{**RULE.to_json(), "min_share": "lots"}]))
    proc = run_cli_without_tensorflow("explain", str(plain), "--findings", str(rules))
    assert proc.returncode == 2 and "min_share" in proc.stderr and "Traceback" not in proc.stderr
