"""Issue 15: envelope fields with the wrong JSON type (a number for ``name``, an array for
``asset_type``) are quarantined, not read as their JSON text."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from . import cai
from .conftest import audit, write_lines
from .test_inputs import GOOD

SUBSCRIPTION = "pubsub.googleapis.com/Subscription"


def test_non_string_identity_fields_are_quarantined(spark: SparkSession, tmp_path: Path) -> None:
    other = cai.subscription("acme-orders", "123456789012", "other", "https://o.example.com/push")
    export = write_lines(
        tmp_path / "export.json",
        [
            GOOD,
            dict(other, name=5, asset_type=[SUBSCRIPTION]),
            dict(other, asset_type=[SUBSCRIPTION]),
            dict(other, name={"n": 1}),
            dict(other, name=True),
        ],
    )
    result = audit(spark, [export], tmp_path / "out")
    reasons = [q["reason"] for q in result.quarantined]
    assert len(reasons) == 4, reasons
    assert sum("asset_type" in r for r in reasons) == 2
    assert sum("name" in r and "asset_type" not in r for r in reasons) == 2
    summary = result.summary
    assert summary["lines"] == {"read": 5, "parsed": 1, "quarantined": 4} or (
        summary["lines"]["parsed"] == 1 and summary["lines"]["quarantined"] == 4
    )
    assert all(not t.startswith("[") for t in summary["assets_by_type"])
    assert summary["subscriptions"]["evaluated"] == 1
