"""``tfdiag merge`` on synthetic worker reports (no TensorFlow): the split of each step,
stragglers and what they are slow on, communication-bound, de-duplicated worker findings,
and the bad inputs that must stop it with one line."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT
from synth import Node, make_report, tf_record

import tfdiag
from tfdiag.advise.job_table import job_findings
from tfdiag.analysis.job import split_of, waits
from tfdiag.records.distributed import Distribution
from tfdiag.records.errors import InputError
from tfdiag.records.job import JobRecord, WorkerFinding, WorkerRecord
from tfdiag.results.job import JobResult

CLUSTER = (("worker", ("127.0.0.1:20001", "127.0.0.1:20002")),)
THREE = (("worker", ("127.0.0.1:20001", "127.0.0.1:20002", "127.0.0.1:20003")),)
MS = 1e-3


def worker(
    index: int,
    *,
    cycle_ms: float,
    fn_ms: float,
    n: int = 20,
    cluster: tuple[tuple[str, tuple[str, ...]], ...] = CLUSTER,
    collective_ms: float | None = None,
    input_ms: float = 0.0,
    compute_ms: float = 1.0,
    strategy: str = "MultiWorkerMirroredStrategy",
) -> tfdiag.Report:
    """A worker's report: ``n`` batch cycles of ``cycle_ms``, ``fn_ms`` of them in the step
    function; with ``collective_ms``, a TF profiler record of the traced steps."""
    tf = None
    if collective_ms is not None:
        tf = tf_record(
            wall_s=fn_ms * MS,
            op_s=(compute_ms + collective_ms) * MS,
            input_wait_s=input_ms * MS,
            collective_op_s=collective_ms * MS,
        )
        tf = replace(tf, collective_ops=(("CollectiveReduceV2", 3, collective_ms * MS * 3),))
    report = make_report(
        [Node("/home/me/train.py", "step", 0.01 * n, calls=n)],
        n,
        method="fit",
        iteration_s=(fn_ms * MS,) * n,
        tf_profile=tf,
    )
    dist = Distribution(
        strategy=strategy,
        task_type="worker",
        task_index=index,
        cluster=cluster,
        num_replicas=sum(len(a) for _, a in cluster),
        cycle_s=(cycle_ms * MS,) * n,
        step_fn_s=(fn_ms * MS,) * n,
    )
    return replace(report, distribution=dist)


def by_id(result: JobResult) -> dict[str, tfdiag.advise.Finding]:
    return {f.id: f for f in result.findings}


def test_a_slow_callback_names_its_worker_without_the_tf_profiler() -> None:
    # workers 0 and 2 wait inside their step function (60 ms) for worker 1, whose own step
    # is 8 ms and whose callback sleeps 54 ms outside it: every cycle is 62 ms
    result = tfdiag.merge(
        [
            worker(0, cycle_ms=62, fn_ms=60, cluster=THREE),
            worker(1, cycle_ms=62, fn_ms=8, cluster=THREE),
            worker(2, cycle_ms=62, fn_ms=60, cluster=THREE),
        ]
    )
    found = by_id(result)
    assert "straggler" in found and "communication-bound" not in found
    data = dict(found["straggler"].data)
    assert data["slow_workers"] == [1]
    assert data["slow_on"] == "callback"
    assert "callback" in found["straggler"].fix
    assert found["straggler"].impact == pytest.approx(52 / 62, abs=0.01)
    w8 = waits(result)
    assert not w8[0].measured
    assert w8[0].wait_s == pytest.approx(52 * MS) and w8[1].wait_s == pytest.approx(0.0)
    assert split_of(result.worker(1)).callbacks_s == pytest.approx(54 * MS)


def test_balanced_workers_have_no_straggler() -> None:
    result = tfdiag.merge([worker(0, cycle_ms=10, fn_ms=9), worker(1, cycle_ms=10.4, fn_ms=9.2)])
    assert "straggler" not in by_id(result)


def test_an_input_straggler_is_told_apart_with_the_tf_profiler() -> None:
    # every step function is 50 ms; worker 1 waits 40 ms for input and 3 ms in the
    # all-reduce; worker 0 computes 5 ms and waits 42 ms in the all-reduce
    result = tfdiag.merge(
        [
            worker(0, cycle_ms=51, fn_ms=50, collective_ms=42, compute_ms=5),
            worker(1, cycle_ms=51, fn_ms=50, collective_ms=3, compute_ms=5, input_ms=40),
        ]
    )
    f = by_id(result)["straggler"]
    assert dict(f.data) == {"slow_workers": [1], "slow_on": "input"}
    assert "input pipeline" in f.fix
    assert any("collective ops (TF profiler)" in e for e in f.evidence)
    assert "communication-bound" not in by_id(result)


def test_a_compute_straggler() -> None:
    result = tfdiag.merge(
        [
            worker(0, cycle_ms=51, fn_ms=50, collective_ms=40, compute_ms=6),
            worker(1, cycle_ms=51, fn_ms=50, collective_ms=2, compute_ms=45),
        ]
    )
    assert dict(by_id(result)["straggler"].data)["slow_on"] == "compute"


def test_communication_bound_when_even_the_last_to_arrive_waits() -> None:
    result = tfdiag.merge(
        [
            worker(0, cycle_ms=10, fn_ms=9.5, collective_ms=6, compute_ms=2),
            worker(1, cycle_ms=10, fn_ms=9.5, collective_ms=5.5, compute_ms=2.5),
        ]
    )
    found = by_id(result)
    assert "straggler" not in found
    f = found["communication-bound"]
    assert f.impact == pytest.approx(0.55, abs=0.01)
    assert "worker 1, the last to arrive" in f.evidence[0]
    assert "bytes_per_pack" in f.fix


def test_no_communication_bound_without_the_tf_profiler() -> None:
    result = tfdiag.merge([worker(0, cycle_ms=10, fn_ms=9), worker(1, cycle_ms=10, fn_ms=9)])
    assert "communication-bound" not in by_id(result)


def _w(index: int, findings: tuple[WorkerFinding, ...]) -> WorkerRecord:
    return WorkerRecord(
        index=index,
        task=f"worker:{index}",
        strategy="MultiWorkerMirroredStrategy",
        cluster=THREE,
        num_replicas=3,
        source=f"w{index}.tfdiag.json",
        flavour="tf_keras",
        step_s=0.01,
        step_fn_s=0.009,
        steps=5,
        findings=findings,
    )


def test_worker_findings_are_listed_once_with_their_workers() -> None:
    low = WorkerFinding("callback-overhead", "Callbacks", "low", 0.06, ("6 %",), "fix it")
    high = WorkerFinding("callback-overhead", "Callbacks", "high", 0.4, ("40 %",), "fix it")
    other = WorkerFinding("per-step-overhead", "Tiny steps", "medium", 0.2, ("x",), "batch")
    found = job_findings(JobRecord((_w(0, (low, other)), _w(1, (high,)), _w(2, ()))))
    assert [f.id for f in found] == ["callback-overhead", "per-step-overhead"]
    assert dict(found[0].data)["workers"] == [0, 1]
    assert found[0].evidence == ("worker 1: 40 %",) and found[0].impact == 0.4
    assert dict(found[1].data)["workers"] == [0]


def test_json_has_workers_with_index_and_findings(tmp_path: Path) -> None:
    result = tfdiag.merge(
        [worker(1, cycle_ms=62, fn_ms=8), worker(0, cycle_ms=62, fn_ms=60)]  # any order
    )
    doc = result.to_json()
    assert doc["kind"] == "job"
    assert [w["index"] for w in doc["workers"]] == [0, 1]
    assert doc["workers"][1]["split"]["callbacks_s"] == pytest.approx(54 * MS)
    assert doc["findings"][0]["id"] == "straggler"
    assert doc["findings"][0]["slow_workers"] == [1]
    saved = result.save(tmp_path / "job")
    assert saved.name == "job.tfdiag.json"
    again = tfdiag.load_result(saved)
    assert isinstance(again, JobResult)
    assert again.to_json()["findings"] == doc["findings"]
    assert again.to_json()["workers"] == doc["workers"]


def test_strings_from_the_reports_are_shown_as_text() -> None:
    w = replace(_w(0, ()), source="[bold red]x\x1b[2J.tfdiag.json")
    text = JobResult((w, _w(1, ()))).render("text", width=200)
    assert isinstance(text, str)
    assert "[bold red]x" in text and "\x1b" not in text


def test_reports_without_strategy_information_are_refused() -> None:
    plain = replace(worker(0, cycle_ms=10, fn_ms=9), distribution=None)
    with pytest.raises(InputError, match="report 2: no tf.distribute strategy"):
        tfdiag.merge([worker(1, cycle_ms=10, fn_ms=9), plain])


def test_reports_of_one_worker_twice_are_refused() -> None:
    with pytest.raises(InputError, match="same worker .worker:1, index 1"):
        tfdiag.merge([worker(1, cycle_ms=10, fn_ms=9), worker(1, cycle_ms=10, fn_ms=9)])


def test_reports_of_different_jobs_are_refused() -> None:
    other = (("worker", ("127.0.0.1:30001", "127.0.0.1:30002")),)
    with pytest.raises(InputError, match="different jobs"):
        tfdiag.merge(
            [worker(0, cycle_ms=10, fn_ms=9), worker(1, cycle_ms=10, fn_ms=9, cluster=other)]
        )


def test_a_worker_without_its_report_is_refused_or_named() -> None:
    # worker 1 of the 2-task cluster has no report: worker 0's wait would read 0 ms, with
    # no straggler named (#20.6)
    only = [worker(0, cycle_ms=62, fn_ms=60)]
    with pytest.raises(InputError, match=r"no report from worker:1 of the 2-task cluster"):
        tfdiag.merge(only)
    three = [worker(i, cycle_ms=62, fn_ms=60, cluster=THREE) for i in (0, 2)]
    with pytest.raises(InputError, match=r"no report from worker:1 of the 3-task cluster"):
        tfdiag.merge(three)
    result = tfdiag.merge(three, partial=True)
    assert [w.index for w in result.workers] == [0, 2]
    (note,) = [n for n in result.notes if n.startswith("partial merge")]
    assert "no report from worker:1 (1 of 3 tasks)" in note
    assert "partial merge" in result.render("text", width=200)
    chief = (("chief", ("h0:1",)), ("worker", ("h1:1",)), ("ps", ("h2:1",)))
    r = worker(0, cycle_ms=10, fn_ms=9, cluster=chief)
    assert r.distribution is not None
    chief_report = replace(r, distribution=replace(r.distribution, task_type="chief"))
    with pytest.raises(InputError, match=r"no report from worker:0 of the 3-task"):
        tfdiag.merge([chief_report])  # a parameter server runs no steps: it is not asked for


def test_a_task_outside_its_cluster_is_refused() -> None:
    # a report claiming task 5 of a 2-task cluster was merged as #5 (#20.6)
    with pytest.raises(InputError, match=r"task worker:5 \(index 5\) is not in its cluster of 2"):
        tfdiag.merge([worker(0, cycle_ms=10, fn_ms=9), worker(5, cycle_ms=10, fn_ms=9)])
    evaluator = (("worker", ("h1:1", "h2:1")),)
    r = worker(0, cycle_ms=10, fn_ms=9, cluster=evaluator)
    assert r.distribution is not None
    other = replace(r, distribution=replace(r.distribution, task_type="evaluator"))
    with pytest.raises(InputError, match="task evaluator:0 .* is not in its cluster"):
        tfdiag.merge([worker(1, cycle_ms=10, fn_ms=9, cluster=evaluator), other])


def test_reports_with_other_replica_counts_are_refused() -> None:
    # num_replicas 2 and 64 were merged as one job (#20.6)
    w1 = worker(1, cycle_ms=10, fn_ms=9)
    assert w1.distribution is not None
    w1 = replace(w1, distribution=replace(w1.distribution, num_replicas=64))
    with pytest.raises(InputError, match=r"different jobs \(2 vs 64 replicas in sync\)"):
        tfdiag.merge([worker(0, cycle_ms=10, fn_ms=9), w1])


def test_a_worker_with_no_timed_steps_is_refused() -> None:
    r = worker(0, cycle_ms=10, fn_ms=9)
    assert r.distribution is not None
    r = replace(r, distribution=replace(r.distribution, cycle_s=(), step_fn_s=()))
    with pytest.raises(InputError, match="no steps were timed"):
        tfdiag.merge([r])


def test_the_worker_index_counts_a_chief_first() -> None:
    cluster = (("chief", ("h0:1",)), ("worker", ("h1:1", "h2:1")))
    assert Distribution("X", "chief", 0, cluster).rank == 0
    assert Distribution("X", "worker", 0, cluster).rank == 1
    assert Distribution("X", "worker", 1, cluster).rank == 2
    assert Distribution("MirroredStrategy").rank == 0


def test_the_distribution_travels_with_a_saved_report(tmp_path: Path) -> None:
    r = worker(2, cycle_ms=12, fn_ms=10, collective_ms=4)
    json_path = r.save(tmp_path / "w2")[0]
    again = tfdiag.load_report(json_path)
    assert again.distribution == r.distribution
    assert again.probes is not None and again.probes.tf_profile is not None
    assert again.probes.tf_profile.collective_ops == (("CollectiveReduceV2", 3, 0.012),)
    doc = json.loads(json_path.read_text())
    doc["distribution"]["task_index"] = "1"
    bad = tmp_path / "bad.tfdiag.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="distribution.task_index must be a whole number"):
        tfdiag.load_report(bad)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfdiag", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_cli_merge_and_its_bad_inputs(tmp_path: Path) -> None:
    worker(0, cycle_ms=62, fn_ms=60).save(tmp_path / "w0")
    worker(1, cycle_ms=62, fn_ms=8).save(tmp_path / "w1")
    replace(worker(1, cycle_ms=10, fn_ms=9), distribution=None).save(tmp_path / "plain")
    worker(5, cycle_ms=62, fn_ms=8).save(tmp_path / "w5")
    ok = _cli("merge", "w0.tfdiag.json", "w1.tfdiag.json", "--format", "json", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["findings"][0]["slow_workers"] == [1]
    text = _cli("merge", "w0.tfdiag.json", "w1.tfdiag.json", "--width", "160", cwd=tmp_path)
    assert "straggler" in text.stdout and "w1.tfdiag.json" in text.stdout
    before = sorted(p.name for p in tmp_path.iterdir())
    for args, message in (
        (("w0.tfdiag.json", "plain.tfdiag.json"), "plain.tfdiag.json: no tf.distribute"),
        (("w1.tfdiag.json", "w1.tfdiag.json"), "the same worker"),
        (("w0.tfdiag.json", "missing.tfdiag.json"), "missing.tfdiag.json"),
        (("w0.tfdiag.json",), "no report from worker:1 of the 2-task cluster"),
        (("w0.tfdiag.json", "w5.tfdiag.json"), "task worker:5 (index 5) is not in its cluster"),
    ):
        bad = _cli("merge", *args, "--save", "job", cwd=tmp_path)
        assert bad.returncode == 2
        assert bad.stdout == ""
        lines = bad.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], bad.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing half-written
    alone = _cli("merge", "w0.tfdiag.json", "--partial", "--width", "200", cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    assert "partial merge: no report from worker:1 (1 of 2 tasks)" in alone.stdout
    saved = _cli("merge", "w0.tfdiag.json", "w1.tfdiag.json", "--save", "job", cwd=tmp_path)
    assert saved.returncode == 0 and (tmp_path / "job.tfdiag.json").is_file()
    again = _cli("explain", "job.tfdiag.json", "--format", "json", cwd=tmp_path)
    assert json.loads(again.stdout)["findings"][0]["slow_workers"] == [1]


def test_the_merge_view_at_80_columns_cuts_no_header_and_breaks_no_name() -> None:
    # #18: the table was cut to "call…", "compu…", "grpc:/" at 80 columns.
    reports = [
        worker(0, cycle_ms=62, fn_ms=60, collective_ms=5.0, cluster=THREE),
        worker(1, cycle_ms=62, fn_ms=8, collective_ms=5.0, cluster=THREE),
        worker(2, cycle_ms=62, fn_ms=60, collective_ms=5.0, cluster=THREE),
    ]
    text = tfdiag.merge(reports).render("text", width=80)
    assert isinstance(text, str)
    table = text[text.index("Each worker's step") : text.index("Findings")]
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in table
    for header in ("callbacks", "compute", "comms", "other", "wait"):
        assert header in table
