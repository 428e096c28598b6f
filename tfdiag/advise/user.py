"""The detector of a finding the user defined as data (a
:class:`~tfdiag.records.catalog.finding_rules.FindingRule`)."""

from __future__ import annotations

from tfdiag.advise.evidence import functions, pct, times
from tfdiag.advise.finding import Context, Detection, Detector
from tfdiag.records.catalog.finding_rules import FindingRule


def user_finding(rule: FindingRule) -> Detector:
    """The detector of a finding the user defined as data: the heaviest function matching
    the rule's globs, by cumulative steady-state time."""

    def detect(ctx: Context) -> Detection | None:
        report, analysis = ctx.record, ctx.analysis
        if analysis.steady_s <= 0:
            return None
        matched = [
            (analysis.steady.functions[i].cum_s, i)
            for i, _ in functions(report, rule.path, rule.function)
        ]
        if not matched:
            return None
        cum_s, i = max(matched)
        share = min(analysis.of_steady(cum_s), 1.0)
        if share < rule.min_share:
            return None
        fn = report.profile.functions[i]
        return Detection(
            share,
            (
                f"`{fn.short_name}` runs {times(analysis, i)} per iteration: {pct(share)} of "
                "steady-state time (cumulative)",
            ),
        )

    return detect
