"""The audit's contracts: subscription_facts returns exactly JOINED_SCHEMA, whose grant structs
are IamGrant field for field, and every joined row becomes SubscriptionFacts; the findings'
Arrow schema is derived from their one DDL; target kinds are the rules' TargetKind, each asset
type mapped explicitly; the summary's aggregates are named."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import DataType, StructType

from pushguard.audit.aggregates import (
    COVERAGE,
    FINDING_COUNTS,
    FOLDER_OFFENDERS,
    GOOGLE_MANAGED_COUNTS,
    PROJECT_OFFENDERS,
    SUBSCRIPTION_TOTALS,
    SUPERSEDED,
    WORST_SUBSCRIPTIONS,
    aggregates_frame,
    collect_aggregates,
)
from pushguard.audit.arrow import arrow_schema
from pushguard.audit.evaluate import ARROW_FINDINGS, arrow_evaluator, facts_from_row, plan
from pushguard.audit.join import asset_copies, subscription_facts
from pushguard.audit.parse import DEFAULT_MAX_LINE_BYTES, parse_assets
from pushguard.audit.read import discover, read_lines
from pushguard.audit.schemas import (
    FINDINGS_COLUMNS,
    FINDINGS_DDL,
    FUNCTION_V1,
    FUNCTION_V2,
    GRANT,
    GRANT_FACTS,
    JOINED_COLUMNS,
    JOINED_SCHEMA,
    RUN_SERVICE,
    ddl_columns,
)
from pushguard.audit.targets import TARGET_KINDS
from pushguard.rules.facts import IamGrant, TargetKind

from .conftest import FIXTURES, write_lines
from .test_scenarios import build_export


def _joined(spark: SparkSession, path: Path, include_dry_run: bool = False) -> DataFrame:
    """The joined facts of the export at ``path``, its parsed lines and asset copies kept as
    the job keeps them (checkpoints), so each is computed once."""
    lines = read_lines(spark, discover(spark, [str(path)]))
    assets = parse_assets(lines, DEFAULT_MAX_LINE_BYTES).localCheckpoint()
    copies = asset_copies(assets, lambda frame: frame.localCheckpoint())
    return subscription_facts(copies, include_dry_run)


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


def test_findings_arrow_schema_is_derived_from_the_ddl(spark: SparkSession) -> None:
    """One definition: Spark reads the Arrow schema the rules' batches carry back as exactly the
    findings DDL it is derived from (names, order, types, nullability)."""
    ddl = DataType.fromDDL(FINDINGS_DDL)
    assert isinstance(ddl, StructType)
    assert from_arrow_schema(ARROW_FINDINGS) == ddl
    assert from_arrow_schema(to_arrow_schema(ddl)) == ddl  # pyspark's own conversion agrees
    assert tuple(ARROW_FINDINGS.names) == FINDINGS_COLUMNS == tuple(ddl.fieldNames())


def test_arrow_schema_maps_exactly_or_refuses() -> None:
    assert ddl_columns("a string, b map<string, string>, c array<string>") == [
        ("a", "string"),
        ("b", "map<string, string>"),
        ("c", "array<string>"),
    ]
    assert arrow_schema("b map<string, string>").field("b").type == pa.map_(
        pa.string(), pa.string()
    )
    with pytest.raises(ValueError, match="no Arrow type for the Spark type 'bigint'"):
        arrow_schema("a string, n bigint")
    with pytest.raises(ValueError, match="unbalanced"):
        ddl_columns("a map<string,string")


def test_every_target_type_has_an_explicit_kind(spark: SparkSession, scenario_export: Path) -> None:
    assert set(TARGET_KINDS) == {RUN_SERVICE, FUNCTION_V1, FUNCTION_V2}
    assert all(isinstance(kind, TargetKind) for kind in TARGET_KINDS.values())
    kinds = {row["target_kind"] for row in _joined(spark, scenario_export).collect()}
    assert TargetKind.CLOUD_RUN.value in kinds
    assert kinds <= {None, *(kind.value for kind in TargetKind)}


def test_aggregates_are_named_and_one_collect(spark: SparkSession, scenario_export: Path) -> None:
    # kept as the job keeps them (checkpoints): each aggregate would otherwise plan and run the
    # whole parse and join again
    facts = _joined(spark, scenario_export).localCheckpoint()
    findings = facts.mapInArrow(arrow_evaluator(plan({}, {})), FINDINGS_DDL).localCheckpoint()
    assert aggregates_frame(facts, findings).columns == [
        FINDING_COUNTS,
        SUBSCRIPTION_TOTALS,
        PROJECT_OFFENDERS,
        FOLDER_OFFENDERS,
        WORST_SUBSCRIPTIONS,
        SUPERSEDED,
        GOOGLE_MANAGED_COUNTS,
        COVERAGE,
    ]
    aggregates = collect_aggregates(facts, findings)
    assert aggregates.subscriptions == 12
    assert 0 < aggregates.push_subscriptions <= 12
    assert sum(c.findings for c in aggregates.finding_counts) == findings.count()
    assert all(w.rules == sorted(w.rules) for w in aggregates.worst)
