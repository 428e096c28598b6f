"""A merged job as JSON: each worker's raw entry (what ``explain`` reads back) with its
derived split, the spread of step times, and the findings (cross-worker first)."""

from __future__ import annotations

from typing import Any

from tfdiag.advise.job_table import job_findings
from tfdiag.analysis.job import split_of, spread_of, waits
from tfdiag.records.job import JobRecord
from tfdiag.render.document import finding_to_json, header


def job_to_json(record: JobRecord) -> dict[str, Any]:
    spread = spread_of(record)
    w8 = waits(record)
    workers = []
    for w in record.workers:
        s = split_of(w)
        workers.append(
            {
                **w.to_json(),
                "split": {
                    "step_s": s.step_s,
                    "callbacks_s": s.callbacks_s,
                    "input_s": s.input_s,
                    "compute_s": s.compute_s,
                    "collective_s": s.collective_s,
                    "other_s": s.other_s,
                },
                "wait_s": w8[w.index].wait_s,
                "wait_measured": w8[w.index].measured,
                "own_s": w8[w.index].own_s,
            }
        )
    return {
        **header(record),
        "notes": list(record.notes),
        "spread": {
            "fastest_s": spread.fastest_s,
            "median_s": spread.median_s,
            "slowest_s": spread.slowest_s,
            "spread": spread.spread,
        },
        "workers": workers,
        "findings": [finding_to_json(f) for f in job_findings(record)],
    }
