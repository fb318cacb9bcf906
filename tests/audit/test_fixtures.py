"""The real third-party exports in tests/fixtures/cai/ (provenance in tests/fixtures/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from pushguard.audit.summary import AuditSummary

from .conftest import FIXTURES, Audit, audit, fixture_inputs


@pytest.fixture(scope="module")
def fixture_audit(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Audit:
    paths, times = fixture_inputs()
    return audit(
        spark, [Path(p) for p in paths], tmp_path_factory.mktemp("fixtures"), snapshot_times=times
    )


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_every_line_is_accounted_for(fixture_audit: Audit) -> None:
    lines = fixture_audit.summary["lines"]
    assert lines["read"] == lines["parsed"] + lines["quarantined"]
    ndjson = [
        p for p in FIXTURES.rglob("*") if p.is_file() and not p.read_text().lstrip().startswith("[")
    ]
    arrays = [
        p for p in FIXTURES.rglob("*") if p.is_file() and p.read_text().lstrip().startswith("[")
    ]
    expected = sum(len(_lines(p)) for p in ndjson) + sum(
        len(json.loads(p.read_text())) for p in arrays
    )
    assert lines["read"] == expected
    assert fixture_audit.summary["inputs"]["json_array_files"] == len(arrays)


def test_every_valid_line_parses_and_only_comment_lines_are_quarantined(
    fixture_audit: Audit,
) -> None:
    quarantined = fixture_audit.quarantined
    assert quarantined, "forseti's additional_cai_resources.dump has '#' comment lines"
    for entry in quarantined:
        source_line = _lines(Path(entry["source"]))[entry["line"] - 1]
        assert source_line.lstrip().startswith("#"), entry
        assert entry["reason"] == "not JSON"
        assert entry["text"] == source_line[:2048]


def test_the_real_push_subscription_is_evaluated(fixture_audit: Audit) -> None:
    summary = fixture_audit.summary
    assert summary["assets_by_type"]["pubsub.googleapis.com/Subscription"] >= 9
    assert summary["subscriptions"] == {"evaluated": 4, "push": 2}
    push = [
        f for f in fixture_audit.findings if "example-subscription-push-test" in f["asset_name"]
    ]
    assert [(f["rule_id"], f["level"], f["status"]) for f in push] == [
        ("push-auth-oidc", "mandatory", "violation")
    ]
    assert fixture_audit.result.exit_code("mandatory") == 1
    assert fixture_audit.result.exit_code("never") == 0


def test_outputs_agree_and_report_is_self_contained(fixture_audit: Audit) -> None:
    out = fixture_audit.out
    table = pq.read_table(out / "findings.parquet").to_pylist()
    assert [(r["asset_name"], r["rule_id"]) for r in table] == [
        (f["asset_name"], f["rule_id"]) for f in fixture_audit.findings
    ]
    html = (out / "report.html").read_text()
    assert "<svg" in html and "push-auth-oidc" in html
    assert "<script" not in html and 'src="http' not in html and "<link" not in html
    assert not list(out.glob("*.crc")) and not list(out.glob("*.parts"))


def test_summary_json_is_the_summary_model(fixture_audit: Audit) -> None:
    text = (fixture_audit.out / "summary.json").read_text()
    summary = fixture_audit.result.summary
    assert text == summary.to_json()
    assert AuditSummary.model_validate_json(text) == summary
    assert set(summary.timings_s) == {
        "discover",
        "parse and join",
        "evaluate and write findings",
        "quarantine",
        "summary and report",
    }


def test_perimeter_in_the_access_policy_export_is_read(spark: SparkSession, tmp_path: Path) -> None:
    summary = audit(
        spark, [FIXTURES / "forseti" / "mock_cai_access_policies.dump"], tmp_path
    ).summary
    assert summary["lines"]["quarantined"] == 0
    assert summary["assets_by_type"] == {"cloudresourcemanager.googleapis.com/Organization": 5}
