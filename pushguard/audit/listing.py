"""The findings ``report.html`` lists: the violations, excepted findings and undecided results
(status ``unknown``), and the Google-managed subscriptions (no rule judged them; they are listed
so that a reader sees what was set aside), in the order a reader acts on them, at most
:data:`REPORT_LIMIT` of them (all are in ``findings.jsonl``).

With ``--baseline`` new findings and those raised to a higher level come first
(:mod:`pushguard.audit.baseline`); then mandatory before advisory (Google-managed rows have no
level: last), violations before excepted findings before undecided results and Google-managed
rows, then by subscription, rule and message.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pushguard.rules.google_managed import GOOGLE_MANAGED

REPORT_LIMIT = 500
"""Rows listed in ``report.html`` at most (an organisation's audit has many more findings)."""

LISTED = ("violation", "excepted", "unknown", GOOGLE_MANAGED)
"""The statuses the report lists."""

_COLUMNS = (
    "asset_name",
    "rule_id",
    "level",
    "status",
    "message",
    "exception_state",
    "exception_reason",
    "exception_expires",
)


def report_rows(findings: DataFrame, *, limit: int = REPORT_LIMIT) -> list[dict[str, Any]]:
    """The first ``limit`` listed findings of ``findings`` (rows of
    :data:`~pushguard.audit.schemas.FINDINGS_DDL`, with ``change`` when compared with a
    baseline), as dicts of :data:`_COLUMNS` (and ``change``), in the module's order. One small
    Spark job (a top-``limit`` sort)."""
    has_change = "change" in findings.columns
    order = []
    if has_change:
        order.append(F.when(F.col("change").isin("new", "level-raised"), 0).otherwise(1))
    order += [
        F.when(F.col("level") == "mandatory", 0).when(F.col("level") == "advisory", 1).otherwise(2),
        F.when(F.col("status") == "violation", 0)
        .when(F.col("status") == "excepted", 1)
        .otherwise(2),
        F.col("asset_name"),
        F.col("rule_id"),
        F.col("message"),
    ]
    columns = [*_COLUMNS, "change"] if has_change else list(_COLUMNS)
    rows = (
        findings.filter(F.col("status").isin(*LISTED))
        .orderBy(*order)
        .select(*columns)
        .limit(limit)
        .collect()
    )
    return [row.asDict() for row in rows]
