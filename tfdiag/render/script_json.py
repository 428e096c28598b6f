"""A ``tfdiag run`` result as JSON: the sites, and the profile report of each costly one."""

from __future__ import annotations

from typing import Any

from tfdiag.advise.diagnosis import diagnosis_of
from tfdiag.advise.finding import Finding
from tfdiag.advise.patches import patch_of
from tfdiag.advise.script import script_findings
from tfdiag.analysis.lines import script_lines
from tfdiag.records.patches import FixRecord
from tfdiag.records.script import CallSite, ScriptRecord
from tfdiag.render.document import finding_to_json, header
from tfdiag.render.json import report_to_json


def script_to_json(result: ScriptRecord) -> dict[str, Any]:
    return {
        **header(result),
        "script": result.script,
        "argv": list(result.argv),
        "wall_s": result.wall_s,
        "overhead_s": result.overhead_s,
        "status": result.status,
        "iterations": result.iterations,
        "keras_s": result.keras_s,
        "environment": result.environment.to_json(),
        "notes": list(result.notes),
        "findings": [
            {
                "site": sf.site.location if sf.site else None,
                "share": sf.share,
                **finding_to_json(sf.finding),
                **_patch_json(result.fix, sf.finding),
            }
            for sf in script_findings(result)
        ],
        "your_lines": [line.to_json() for line in script_lines(result.lines)],
        "sites": [_site_json(result, s) for s in result.sites],
        "lines": None if result.lines is None else result.lines.to_json(),
        "jit_compiles": [c.to_json() for c in result.jit_compiles],
        "fix": None if result.fix is None else result.fix.to_json(),
    }


def _patch_json(fix: FixRecord | None, f: Finding) -> dict[str, Any]:
    """A finding's patch: ``patch`` (the unified diff, or null), ``patch_reason`` (why
    none, when none) and ``verified`` (both versions' figures, or null when not measured);
    all null in a report no ``tfdiag fix`` wrote."""
    p = patch_of(fix, f)
    if p is None:
        reason = None if fix is None else "tfdiag fix recorded nothing for this finding"
        return {"patch": None, "patch_reason": reason, "verified": None}
    return {
        "patch": p.patch or None,
        "patch_reason": None if p.patch else (p.reason or "none proposed"),
        "verified": p.verified.to_json() if p.verified else None,
    }


def _site_json(result: ScriptRecord, s: CallSite) -> dict[str, Any]:
    d = diagnosis_of(s.report) if s.report else None
    return {
        "file": s.file,
        "line": s.line,
        "location": s.location,
        "method": s.method,
        "owner": s.owner,
        "flavour": s.flavour,
        "code": s.code,
        "calls": s.calls,
        "errors": s.errors,
        "total_s": s.total_s,
        "share": result.share(s),
        "per_call_s": s.per_call_s,
        "unprofiled_median_s": s.unprofiled_median_s,
        "profiled_calls": s.profiled_calls,
        "call_s": list(s.call_s),
        "findings": [f.id for f in d.findings] if d else [],
        "report": report_to_json(d) if d else None,
    }
