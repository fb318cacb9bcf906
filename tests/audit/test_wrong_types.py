"""Issue 15: envelope fields with the wrong JSON type (a number for ``name``, an array for
``asset_type``) are quarantined, not read as their JSON text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    assert summary["lines"] == {"read": 5, "parsed": 1, "quarantined": 4, "blank": 0} or (
        summary["lines"]["parsed"] == 1 and summary["lines"]["quarantined"] == 4
    )
    assert all(not t.startswith("[") for t in summary["assets_by_type"])
    assert summary["subscriptions"]["evaluated"] == 1


def _with(asset: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``asset`` with the field at ``path`` (dots) set to ``value``."""
    copy = json.loads(json.dumps(asset))
    *parents, last = path.split(".")
    node = copy
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return copy


def test_wrong_types_in_the_fields_the_audit_reads_are_quarantined(
    spark: SparkSession, tmp_path: Path
) -> None:
    base = cai.subscription(
        "acme-orders", "123456789012", "typed", "https://o.example.com/push", "p@x.com", "aud"
    )
    iam = cai.iam(base, ("roles/pubsub.subscriber", ["user:a@example.com"]))
    lines = [
        _with(base, "ancestors", ["projects/123456789012", 5]),
        _with(base, "update_time", 5),
        _with(base, "resource.parent", 7),
        _with(base, "resource.data.pushConfig.pushEndpoint", 5),
        _with(base, "resource.data.pushConfig.oidcToken.serviceAccountEmail", {"a": 1}),
        _with(base, "resource.data.deadLetterPolicy.deadLetterTopic", ["t"]),
        _with(iam, "iam_policy.bindings", [{"role": True, "members": ["user:a@example.com"]}]),
        _with(iam, "iam_policy.bindings", [{"role": "roles/owner", "members": ["user:a", 1]}]),
        # strings that look like other JSON types are strings: parsed, not quarantined
        _with(base, "resource.data.pushConfig.oidcToken.audience", "123"),
        _with(_with(base, "update_time", "true"), "name", base["name"] + "2"),
        cai.perimeter("123456789012"),
    ]
    lines.append(
        _with(
            lines[-1], "service_perimeter.status.restricted_services", ["pubsub.googleapis.com", 1]
        )
    )
    export = write_lines(tmp_path / "export.json", lines)
    result = audit(spark, [export], tmp_path / "out")
    reasons = {q["line"]: q["reason"] for q in result.quarantined}
    assert reasons == {
        1: "ancestors[] is not a JSON string",
        2: "update_time is not a JSON string",
        3: "resource.parent is not a JSON string",
        4: "resource.data.pushConfig.pushEndpoint is not a JSON string",
        5: "resource.data.pushConfig.oidcToken.serviceAccountEmail is not a JSON string",
        6: "resource.data.deadLetterPolicy.deadLetterTopic is not a JSON string",
        7: "iam_policy.bindings[].role is not a JSON string",
        8: "iam_policy.bindings[].members[] is not a JSON string",
        12: "service_perimeter.status.restricted_services[] is not a JSON string",
    }
    summary = result.summary
    assert summary["lines"] == {"read": 12, "parsed": 3, "quarantined": 9, "blank": 0}
    assert sum(summary["quarantine_reasons"].values()) == 9
    assert summary["subscriptions"]["evaluated"] == 2
