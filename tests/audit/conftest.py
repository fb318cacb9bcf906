"""A local Spark session for the audit tests, and audits run once per module."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from pushguard.audit.job import run_audit
from pushguard.audit.options import AuditOptions, AuditResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cai"


os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only, also for spark-submit


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = (
        SparkSession.builder.master("local[2]")
        .appName("pushguard-tests")
        .config("spark.sql.shuffle.partitions", "4")
        # One session serves every audit test: 4 GiB of heap (Spark's default is 1) and the
        # cache cleared after each test, so what one audit persisted cannot starve the next.
        .config("spark.driver.memory", "4g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _release_cached_data(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "spark" in request.fixturenames:
        request.getfixturevalue("spark").catalog.clearCache()


@dataclass
class Audit:
    """An audit's outputs, read back."""

    out: Path
    result: AuditResult

    @property
    def summary(self) -> dict[str, Any]:
        return json.loads((self.out / "summary.json").read_text())

    @property
    def findings(self) -> list[dict[str, Any]]:
        text = (self.out / "findings.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines()]

    @property
    def quarantined(self) -> list[dict[str, Any]]:
        text = (self.out / "quarantine" / "quarantined.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines()]

    def violations(self, subscription: str) -> set[str]:
        return {
            f["rule_id"]
            for f in self.findings
            if f["asset_name"].endswith(f"/subscriptions/{subscription}")
            and f["status"] == "violation"
        }


def fixture_inputs(root: Path = FIXTURES) -> tuple[list[str], dict[str, datetime]]:
    """The third-party fixtures under ``root`` as an audit takes them: forseti's and the
    scorecard's folders as they are (their copies of one asset agree), and each tfplan2cai file,
    the assets one Terraform plan would create, as a snapshot of its own: several list the same
    Cloud Run service and IAM policy differently and none says when, so only read times tell
    which is current (:mod:`pushguard.audit.snapshots`). The times are the test's choice."""
    plans = sorted((root / "tfplan2cai").glob("*.json"))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    times = {str(plan): start + timedelta(hours=n) for n, plan in enumerate(plans)}
    return [str(root / "forseti"), str(root / "cft-scorecard"), *times], times


def audit(spark: SparkSession, paths: list[Path], out: Path, **options: Any) -> Audit:
    result = run_audit(spark, AuditOptions([str(p) for p in paths], str(out), **options))
    return Audit(out, result)


def write_lines(path: Path, assets: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(a, separators=(",", ":")) + "\n" for a in assets))
    return path
