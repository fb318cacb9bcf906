"""The run's counts into ``summary.json`` (:class:`~pushguard.audit.summary.AuditSummary`) and
the report's offenders, from the scan and the collected aggregates: plain Python on the driver,
no Spark job (:func:`pushguard.audit.aggregates.collect_aggregates` ran the one job).
"""

from __future__ import annotations

from typing import Any

from pushguard.audit.aggregates import Aggregates, FindingCount
from pushguard.audit.baseline_scope import settings_digests
from pushguard.audit.coverage import SUBSCRIPTIONS, missing_inputs
from pushguard.audit.options import AuditOptions
from pushguard.audit.read import Inputs
from pushguard.audit.scan import Scan
from pushguard.audit.summary import (
    AuditSettings,
    AuditSummary,
    Coverage,
    FindingCounts,
    InputCounts,
    LineCounts,
    SubscriptionCounts,
)


def _per(counts: list[FindingCount], status: str, key: str) -> dict[str, int]:
    """Findings of ``status`` summed per ``key`` (``rule_id`` or ``level``), keys sorted."""
    totals: dict[str, int] = {}
    for count in counts:
        if count.status == status:
            name = getattr(count, key)
            totals[name] = totals.get(name, 0) + count.findings
    return dict(sorted(totals.items()))


def finding_totals(
    counts: list[FindingCount], google_managed: dict[str, int] | None = None
) -> FindingCounts:
    """Violations and undecided findings (status ``unknown``), by rule and by level; excepted
    findings (status ``excepted``) by rule; violations whose exception expired; the
    Google-managed subscriptions per product (``google_managed``,
    :attr:`~pushguard.audit.aggregates.Aggregates.google_managed`)."""
    by_product = dict(sorted((google_managed or {}).items()))
    by_rule = _per(counts, "violation", "rule_id")
    undecided_by_rule = _per(counts, "unknown", "rule_id")
    excepted_by_rule = _per(counts, "excepted", "rule_id")
    return FindingCounts(
        violations=sum(by_rule.values()),
        violations_by_rule=by_rule,
        violations_by_level=_per(counts, "violation", "level"),
        undecided=sum(undecided_by_rule.values()),
        undecided_by_rule=undecided_by_rule,
        excepted=sum(excepted_by_rule.values()),
        excepted_by_rule=excepted_by_rule,
        expired_exceptions=sum(
            c.findings for c in counts if c.status == "violation" and c.exception_state == "expired"
        ),
        google_managed=sum(by_product.values()),
        google_managed_by_product=by_product,
    )


def summarise(
    *, scan: Scan, aggregates: Aggregates, inputs: Inputs, options: AuditOptions
) -> AuditSummary:
    """The summary of a run, ``timings_s`` empty (the run is not over yet)."""
    read = scan.read
    return AuditSummary(
        inputs=InputCounts(
            paths=list(options.paths),
            files=len(inputs.ndjson) + len(inputs.arrays),
            json_array_files=len(inputs.arrays),
            asset_type_folders_skipped=inputs.skipped_types,
            files_skipped=[name.removeprefix("file:") for name in inputs.skipped_files],
            files_unreadable={
                name.removeprefix("file:"): reason
                for name, reason in sorted(inputs.unreadable.items())
            },
        ),
        lines=LineCounts(
            read=read, parsed=scan.parsed, quarantined=scan.quarantined, blank=scan.blank
        ),
        quarantine_reasons=dict(sorted(scan.reasons.items())),
        assets_by_type=dict(sorted(scan.types.items())),
        superseded_by_type=aggregates.superseded,
        subscriptions=SubscriptionCounts(
            evaluated=aggregates.subscriptions, push=aggregates.push_subscriptions
        ),
        findings=finding_totals(aggregates.finding_counts, aggregates.google_managed),
        settings=AuditSettings(
            include_dry_run_perimeters=options.include_dry_run,
            max_line_bytes=options.max_line_bytes,
            levels=options.rule_levels(),
            policy_settings=settings_digests(options.settings),
        ),
        timings_s={},
        coverage=coverage(scan, aggregates, options),
    )


def coverage(scan: Scan, aggregates: Aggregates, options: AuditOptions) -> Coverage:
    """What the run could see: whether any line was read as an asset, the subscriptions, IAM
    policies and perimeters read, what the enabled rules missed
    (:func:`~pushguard.audit.coverage.missing_inputs`) and the organisations."""
    read = {SUBSCRIPTIONS: aggregates.subscriptions, **aggregates.read}
    return Coverage(
        nothing_read=scan.parsed == 0,
        read=read,
        missing=missing_inputs(
            read, options.rule_levels(), options.settings, stacks_checked=bool(options.stacks)
        ),
        organizations=list(aggregates.organizations),
    )


def _nulls_first(key: str | None) -> tuple[bool, str]:
    return (key is not None, key or "")


def offenders(aggregates: Aggregates) -> dict[str, list[dict[str, Any]]]:
    """The report's tables (:func:`pushguard.audit.report.render`): ``by_project`` (``key``,
    ``violations``, ``mandatory``), ``by_folder`` (``key``, ``violations``) and ``worst``
    (``asset_name``, ``violations``, ``mandatory``, ``rules``), the most mandatory violations
    first, then the most violations, then by key (an unknown project first)."""
    projects = sorted(
        aggregates.projects, key=lambda p: (-p.mandatory, -p.violations, _nulls_first(p.project))
    )
    folders = sorted(aggregates.folders, key=lambda f: (-f.violations, _nulls_first(f.folder)))
    worst = sorted(aggregates.worst, key=lambda w: (-w.mandatory, -w.violations, w.asset_name))
    return {
        "by_project": [
            {"key": p.project, "violations": p.violations, "mandatory": p.mandatory}
            for p in projects
        ],
        "by_folder": [{"key": f.folder, "violations": f.violations} for f in folders],
        "worst": [
            {
                "asset_name": w.asset_name,
                "violations": w.violations,
                "mandatory": w.mandatory,
                "rules": w.rules,
            }
            for w in worst
        ],
    }
