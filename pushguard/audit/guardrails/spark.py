"""The guardrails' pass, where the audit's data is: one ``mapInArrow`` over the subscriptions on
the executors, ``guardrails.jsonl`` written from its rows, and counts from one small collect.

The frame evaluated is the newest copy of each subscription (its typed ``resource.data``),
joined with its place from the joined facts (``project_id``, ``project_number``, ``ancestors``,
derived when the export has none): :func:`subscriptions`. Each executor task yields a row per
(constraint, subscription) it lists (:data:`~pushguard.audit.guardrails.verdict.STATUSES`) and,
at its end, one row per (constraint, status, mode) with the number of the subscriptions it only
counts (allowed, out of scope): what comes back to the driver is the counts, never the
subscriptions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pushguard.audit.guardrails.counts import GuardrailsSummary, summarise
from pushguard.audit.guardrails.model import Guardrails
from pushguard.audit.guardrails.verdict import STATUSES, rows_of
from pushguard.audit.join import AssetCopies
from pushguard.audit.outputs import OutputFolder
from pushguard.audit.schemas import SUBSCRIPTION, data_column

OUTPUT = "guardrails.jsonl"
"""The listed rows, one per (constraint, subscription), sorted by constraint then asset."""

COLUMNS = (
    "constraint",
    "asset_name",
    "project_id",
    "project_number",
    "status",
    "mode",
    "policy",
    "action",
    "methods",
    "google_managed",
    "reason",
    "error",
)
"""The columns of :data:`OUTPUT`, in order."""

GUARDRAILS_DDL = (
    "constraint string, asset_name string, project_id string, project_number string, "
    "status string, mode string, policy string, action string, methods array<string>, "
    "google_managed string, reason string, error string, count bigint"
)
"""The rows the pass yields: :data:`COLUMNS` and ``count`` (1 for a listed row; for a count
row, ``asset_name`` null, the subscriptions it counts)."""

ARROW_ROWS = pa.schema(
    [
        *(pa.field(c, pa.list_(pa.string()) if c == "methods" else pa.string()) for c in COLUMNS),
        pa.field("count", pa.int64()),
    ]
)


def subscriptions(copies: AssetCopies, facts: DataFrame) -> DataFrame:
    """``asset_name``, ``project_id``, ``project_number``, ``ancestors``, ``data`` (the typed
    ``resource.data``) of every subscription the rules evaluated (lazy)."""
    resources, _ = copies.newest()
    data = resources.filter(F.col("asset_type") == SUBSCRIPTION).select(
        F.col("name").alias("asset_name"), F.col(data_column(SUBSCRIPTION)).alias("data")
    )
    place = facts.select("asset_name", "project_id", "project_number", "ancestors")
    return place.join(data, on="asset_name", how="inner")


def evaluator(
    guardrails: Guardrails,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function for ``mapInArrow(f, GUARDRAILS_DDL)`` over :func:`subscriptions`."""

    def evaluate(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        counted: dict[tuple[str, str, str], int] = {}
        for batch in batches:
            listed: list[dict[str, Any]] = []
            for row in batch.to_pylist():
                for verdict in rows_of(row, guardrails):
                    if verdict["status"] in STATUSES:
                        listed.append({**verdict, "count": 1})
                    else:
                        key = (verdict["constraint"], verdict["status"], verdict["mode"])
                        counted[key] = counted.get(key, 0) + 1
            yield pa.RecordBatch.from_pylist(listed, schema=ARROW_ROWS)
        totals = [
            {"constraint": c, "status": s, "mode": m, "count": n, "methods": []}
            for (c, s, m), n in sorted(counted.items())
        ]
        yield pa.RecordBatch.from_pylist(totals, schema=ARROW_ROWS)

    return evaluate


def write_guardrails(
    guardrails: Guardrails,
    copies: AssetCopies,
    facts: DataFrame,
    out: OutputFolder,
    keep: Callable[[DataFrame], DataFrame],
) -> GuardrailsSummary:
    """Evaluate ``guardrails`` over the export's subscriptions (rows kept with ``keep``: read
    twice), write :data:`OUTPUT` and return the counts for ``summary.json``."""
    rows = keep(subscriptions(copies, facts).mapInArrow(evaluator(guardrails), GUARDRAILS_DDL))
    listed = (
        rows.filter(F.col("asset_name").isNotNull())
        .repartition(1)
        .sortWithinPartitions("constraint", "asset_name")
        .select(*COLUMNS)
    )
    out.single_file(listed, "json", OUTPUT)
    counts = (
        rows.groupBy(
            "constraint", "status", "mode", F.col("google_managed").isNotNull().alias("managed")
        )
        .agg(F.sum("count").alias("count"))
        .collect()
    )
    return summarise(guardrails, [row.asDict() for row in counts])
