"""A Spark executor of the audit loads the rules and the policy settings, never the policy pack:
no pulumi, pulumi_policy or grpc in the Python worker that evaluates the rules."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import SparkSession

from pushguard.audit.evaluate import findings_for, plan
from pushguard.policy import load_rule_config

HEAVY = (
    "pulumi",
    "pulumi_policy",
    "pulumi_gcp",
    "grpc",
    "pushguard.crossguard",
    "pushguard.preview",
)

ROW = {
    "asset_name": "//pubsub.googleapis.com/projects/acme-orders/subscriptions/orders",
    "project_id": "acme-orders",
    "project_number": "123456789012",
    "ancestors": ["projects/123456789012"],
    "push_endpoint": "http://orders.example.com/push",
    "push_auth_account": None,
    "audience": None,
    "exactly_once_delivery": False,
    "dead_letter_topic": None,
    "in_service_perimeter": False,
    "account_grants": None,
    "target_kind": None,
    "target_name": None,
    "target_grants": None,
    "dead_letter_grants": None,
    "subscription_grants": None,
}


def test_rules_run_on_executors_without_the_pack(spark: SparkSession) -> None:
    rules = load_rule_config(None)
    groups = plan(dict(rules.levels), dict(rules.settings))  # pickled to the workers

    def probe(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for _ in batches:
            found = findings_for(ROW, groups)
            loaded = sorted(
                name for name in sys.modules if name.split(".")[0] in HEAVY or name in HEAVY
            )
            yield pa.RecordBatch.from_pylist(
                [
                    {
                        "rules": ",".join(sorted({f.rule_id for f in found})),
                        "loaded": ",".join(loaded),
                    }
                ]
            )

    rows = (
        spark.range(2, numPartitions=2).mapInArrow(probe, "rules string, loaded string").collect()
    )
    assert rows, "the probe ran on no executor"
    for row in rows:
        assert "push-endpoint-https" in row["rules"]  # the rules really ran there
        assert row["loaded"] == "", f"an executor loaded {row['loaded']}"
