"""The join -> evaluate contract: subscription_facts returns exactly JOINED_SCHEMA, whose grant
structs are IamGrant field for field, and every joined row becomes SubscriptionFacts."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

from pushguard.audit.evaluate import facts_from_row
from pushguard.audit.join import subscription_facts
from pushguard.audit.parse import DEFAULT_MAX_LINE_BYTES, parse_assets
from pushguard.audit.read import discover, read_lines
from pushguard.audit.schemas import GRANT, GRANT_FACTS, JOINED_COLUMNS, JOINED_SCHEMA
from pushguard.rules.facts import IamGrant

from .conftest import FIXTURES, write_lines
from .test_scenarios import build_export


def _joined(spark: SparkSession, path: Path, include_dry_run: bool = False) -> DataFrame:
    lines = read_lines(spark, discover(spark, [str(path)]))
    return subscription_facts(parse_assets(lines, DEFAULT_MAX_LINE_BYTES), include_dry_run)


@pytest.fixture(scope="module")
def scenario_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_lines(tmp_path_factory.mktemp("contract") / "export.json", build_export())


def test_grant_struct_is_iam_grant() -> None:
    assert GRANT.fieldNames() == list(IamGrant.model_fields)
    assert all(name in JOINED_COLUMNS for name in GRANT_FACTS)
    assert tuple(JOINED_SCHEMA.fieldNames()) == JOINED_COLUMNS


@pytest.mark.parametrize("include_dry_run", [False, True])
def test_joined_schema_on_the_scenarios(
    spark: SparkSession, scenario_export: Path, include_dry_run: bool
) -> None:
    joined = _joined(spark, scenario_export, include_dry_run)
    assert joined.schema == JOINED_SCHEMA
    assert tuple(joined.columns) == JOINED_COLUMNS


def test_joined_schema_on_the_real_exports(spark: SparkSession) -> None:
    joined = _joined(spark, FIXTURES)
    assert joined.schema == JOINED_SCHEMA
    assert joined.count() == 4


def test_joined_schema_without_subscriptions(spark: SparkSession) -> None:
    joined = _joined(spark, FIXTURES / "forseti" / "mock_cai_access_policies.dump")
    assert joined.schema == JOINED_SCHEMA
    assert joined.count() == 0


def test_every_joined_row_becomes_facts(spark: SparkSession, scenario_export: Path) -> None:
    rows = [row.asDict(recursive=True) for row in _joined(spark, scenario_export).collect()]
    facts = {row["asset_name"]: facts_from_row(row) for row in rows}
    assert len(facts) == 12
    inherited = facts[
        "//pubsub.googleapis.com/projects/acme-billing/subscriptions/token-creator-inherited"
    ]
    assert inherited.push_auth_account_grants
    assert any(g.resource == "folders/444555" for g in inherited.push_auth_account_grants)
    assert inherited.invoker_target is not None and inherited.invoker_target.grants
