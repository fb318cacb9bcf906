"""Issue 15: Cloud Asset Inventory exports kept in BigQuery are audited like the files.

The connector cannot reach BigQuery here, so the tables are DataFrames built with the export's
schema as the spark-bigquery-connector types it (TIMESTAMP -> TimestampType, REPEATED ->
ArrayType, RECORD -> StructType; https://cloud.google.com/asset-inventory/docs/export-bigquery),
from the same assets as a newline-delimited export, and handed to the audit in place of
``spark.read.format("bigquery")`` (``bigquery.load_table``). The findings must be the NDJSON
export's, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.types import (
    ArrayType,
    DataType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)
from typer.testing import CliRunner

from pushguard.audit import bigquery
from pushguard.audit.bigquery import (
    BigQueryInput,
    BigQueryInputError,
    parse_input,
    per_asset_type_table,
)
from pushguard.audit.bigquery_tables import ACCESS_POLICY_TABLE, IAM_POLICY_TABLE, RESOURCE_TABLE
from pushguard.audit.schemas import NEEDED_TYPES
from pushguard.cli import app

from . import cai
from .conftest import FIXTURES, Audit, audit, write_lines

PROJECT_DATASET = "acme-audit.cai"
ACCESS_KEYS = ("access_policy", "access_level", "service_perimeter")


def _assets() -> list[dict[str, Any]]:
    """forseti's resource, IAM and access-policy exports (JSON lines only: the '#' comments are
    not assets) and a scenario that breaks several rules."""
    assets = []
    for path in sorted((FIXTURES / "forseti").glob("*.dump")):
        if "org_polic" in path.name:
            continue  # the audit does not read org policies
        for line in path.read_text().splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                assets.append(json.loads(line))
    account = "push-auth@acme-orders.iam.gserviceaccount.com"
    sub = "//pubsub.googleapis.com/projects/acme-orders/subscriptions/"
    scenario = [
        cai.folder(),
        cai.project("acme-orders", "123456789012"),
        cai.service_account("acme-orders", "123456789012", "push-auth", "111"),
        cai.subscription("acme-orders", "123456789012", "clear", "http://orders.example/push"),
        cai.subscription(
            "acme-orders", "123456789012", "token", "https://h.example/p?token=1", account=account
        ),
        cai.subscription(
            "acme-orders",
            "123456789012",
            "good",
            "https://orders-3kq2x7ab9c-ew.a.run.app/push",
            account=account,
            audience="orders",
            dead_letter="projects/acme-orders/topics/dead",
        ),
        cai.run_service(
            "acme-orders", "123456789012", "orders", "https://orders-3kq2x7ab9c-ew.a.run.app"
        ),
        cai.iam(
            cai.service_account("acme-orders", "123456789012", "push-auth", "111"),
            ("roles/iam.serviceAccountTokenCreator", ["allUsers"]),
        ),
        cai.iam(
            {"name": f"{sub}good", "asset_type": "pubsub.googleapis.com/Subscription"},
            ("roles/pubsub.subscriber", [cai.agent("123456789012")]),
            condition="expires",
        ),
        cai.perimeter("123456789012"),
    ]
    for asset in scenario:
        asset.setdefault("update_time", "2024-05-06T07:08:09.123456Z")
    return assets + scenario


def _content(asset: dict[str, Any]) -> str:
    if "resource" in asset:
        return "resource"
    if "iam_policy" in asset:
        return "iam"
    if any(key in asset for key in ACCESS_KEYS):
        return "access"
    raise AssertionError(f"no content in {asset}")


def _conform(value: Any, kind: DataType, *, data_as_text: bool = False) -> Any:
    """A JSON value as the connector gives a column of type ``kind``: fields the schema lacks
    are not in the table; REPEATED is never null; ``resource.data`` is JSON text in the
    single-table form."""
    if isinstance(kind, StructType):
        if not isinstance(value, dict):
            return None
        return Row(
            **{
                f.name: (
                    json.dumps(value[f.name])
                    if data_as_text and f.name == "data" and value.get(f.name) is not None
                    else _conform(value.get(f.name), f.dataType, data_as_text=data_as_text)
                )
                for f in kind.fields
            }
        )
    if isinstance(kind, ArrayType):
        return [_conform(v, kind.elementType) for v in value or []]
    if isinstance(kind, TimestampType):
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    return value


_SINGLE_TABLES = {
    "resource": RESOURCE_TABLE,
    "iam": IAM_POLICY_TABLE,
    "access": ACCESS_POLICY_TABLE,
}


def _single_tables(spark: SparkSession, assets: list[dict[str, Any]]) -> dict[str, DataFrame]:
    """One table per content type, as ``gcloud asset export --bigquery-table=T`` writes."""
    tables = {}
    for content, schema in _SINGLE_TABLES.items():
        rows = [_conform(a, schema, data_as_text=True) for a in assets if _content(a) == content]
        tables[f"{PROJECT_DATASET}.{content}"] = spark.createDataFrame(rows, schema)
    return tables


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _per_asset_type_tables(
    spark: SparkSession, assets: list[dict[str, Any]], prefix: str
) -> dict[str, DataFrame]:
    """``--per-asset-type`` resource tables: camelCase columns, ``resource.data`` a RECORD of
    the type's fields (here the fields the assets have, as Spark infers them)."""
    tables = {}
    by_type: dict[str, list[dict[str, Any]]] = {}
    for asset in assets:
        if _content(asset) == "resource":
            by_type.setdefault(asset["asset_type"], []).append(asset)
    for asset_type, group in by_type.items():
        datas = [json.dumps(a["resource"]["data"]) for a in group if "data" in a["resource"]]
        data_type = (
            spark.read.json(spark.sparkContext.parallelize(datas)).schema
            if datas
            else StructType([StructField("name", StringType())])
        )
        resource = StructType(
            [
                StructField(_camel(f.name), f.dataType if f.name != "data" else data_type)
                for f in RESOURCE_TABLE["resource"].dataType.fields
            ]
        )
        schema = StructType(
            [
                StructField(_camel(f.name), resource if f.name == "resource" else f.dataType)
                for f in RESOURCE_TABLE.fields
            ]
        )
        lines = [
            json.dumps(
                {
                    _camel(k): ({_camel(rk): rv for rk, rv in v.items()} if k == "resource" else v)
                    for k, v in a.items()
                }
            )
            for a in group
        ]
        frame = spark.read.schema(schema).json(spark.sparkContext.parallelize(lines))
        tables[f"{PROJECT_DATASET}.{per_asset_type_table(prefix, asset_type)}"] = frame
    return tables


@pytest.fixture(scope="module")
def assets() -> list[dict[str, Any]]:
    return _assets()


@pytest.fixture(scope="module")
def ndjson(spark: SparkSession, assets: list[dict[str, Any]], tmp_path_factory: Any) -> Audit:
    root = tmp_path_factory.mktemp("bq-ndjson")
    paths = [
        write_lines(
            root / "export" / f"{content}.json", [a for a in assets if _content(a) == content]
        )
        for content in ("resource", "iam", "access")
    ]
    return audit(spark, paths, root / "out")


@pytest.fixture
def tables(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, DataFrame]]:
    """The "BigQuery" the audit reads: ``load_table`` answers from this dict (None: no such
    table, as the connector's "not found")."""
    known: dict[str, DataFrame] = {}
    monkeypatch.setattr(bigquery, "load_table", lambda _spark, table: known.get(table))
    yield known


def _same_results(ndjson: Audit, other: Audit) -> None:
    """The same findings, subscriptions and quarantine as the newline-delimited export; the
    counts of the lines read are those of the asset types the audit reads (the others are
    filtered out in BigQuery, before they are read: ``bigquery.needed_rows``)."""
    assert (other.out / "findings.jsonl").read_bytes() == (
        ndjson.out / "findings.jsonl"
    ).read_bytes()
    for key in ("subscriptions", "findings", "quarantine_reasons"):
        assert other.summary[key] == ndjson.summary[key], key
    needed = {k: v for k, v in ndjson.summary["assets_by_type"].items() if k in NEEDED_TYPES}
    assert other.summary["assets_by_type"] == needed
    assert ndjson.summary["assets_by_type"] != needed  # the export has other types too
    assert other.summary["lines"]["read"] == sum(needed.values())


def test_the_scenario_has_findings(ndjson: Audit) -> None:
    assert ndjson.summary["subscriptions"]["push"] == 3
    assert ndjson.violations("clear") >= {"push-endpoint-https", "push-auth-oidc"}
    assert "push-no-query-token" in ndjson.violations("token")
    assert "push-sa-broad-grants" in ndjson.violations("token")
    assert ndjson.summary["lines"]["quarantined"] == 0


def test_single_table_export_gives_the_ndjson_findings(
    spark: SparkSession,
    assets: list[dict[str, Any]],
    ndjson: Audit,
    tables: dict[str, DataFrame],
    tmp_path: Path,
) -> None:
    tables.update(_single_tables(spark, assets))
    assert isinstance(
        tables[f"{PROJECT_DATASET}.resource"].schema["update_time"].dataType, TimestampType
    )
    inputs = [f"bigquery:{name}" for name in sorted(tables)]
    result = audit(spark, inputs, tmp_path)
    _same_results(ndjson, result)
    assert result.summary["inputs"]["paths"] == inputs


def test_per_asset_type_tables_give_the_ndjson_findings(
    spark: SparkSession,
    assets: list[dict[str, Any]],
    ndjson: Audit,
    tables: dict[str, DataFrame],
    tmp_path: Path,
) -> None:
    single = _single_tables(spark, assets)
    tables.update(_per_asset_type_tables(spark, assets, "cai_"))
    tables[f"{PROJECT_DATASET}.iam"] = single[f"{PROJECT_DATASET}.iam"]
    tables[f"{PROJECT_DATASET}.access"] = single[f"{PROJECT_DATASET}.access"]
    subscriptions = tables[f"{PROJECT_DATASET}.cai_pubsub_googleapis_com_Subscription"]
    assert "assetType" in subscriptions.columns
    assert isinstance(subscriptions.schema["resource"].dataType["data"].dataType, StructType)
    result = audit(
        spark,
        [
            f"bigquery:{PROJECT_DATASET}.cai_*",
            f"bigquery:{PROJECT_DATASET}.iam",
            f"bigquery:{PROJECT_DATASET}.access",
        ],
        tmp_path,
    )
    # The per-asset-type input reads only the types the audit needs: the others (forseti's
    # buckets, instances...) are not looked up, so only the counts of lines differ.
    assert (result.out / "findings.jsonl").read_bytes() == (
        ndjson.out / "findings.jsonl"
    ).read_bytes()
    assert result.summary["findings"] == ndjson.summary["findings"]
    assert result.summary["subscriptions"] == ndjson.summary["subscriptions"]
    needed = {k: v for k, v in ndjson.summary["assets_by_type"].items() if k in NEEDED_TYPES}
    assert {k: v for k, v in result.summary["assets_by_type"].items() if k in needed} == needed


def test_a_partitioned_table_is_read_at_its_newest_export_and_bad_data_is_quarantined(
    spark: SparkSession, tables: dict[str, DataFrame], tmp_path: Path
) -> None:
    old = cai.subscription("acme-orders", "123456789012", "moved", "http://old.example/push")
    new = cai.subscription("acme-orders", "123456789012", "moved", "https://new.example/push")
    schema = StructType(
        [
            *RESOURCE_TABLE.fields,
            StructField("readTime", TimestampType()),
            StructField("requestTime", TimestampType()),
        ]
    )
    rows = []
    for asset, day in ((old, 1), (new, 2)):
        row = _conform(asset, RESOURCE_TABLE, data_as_text=True).asDict()
        rows.append(
            Row(**row, readTime=datetime(2024, 5, day), requestTime=datetime(2024, 5, day, 1))
        )
    broken = rows[-1].asDict()
    broken["name"] = broken["name"].replace("moved", "broken")
    broken["resource"] = Row(**dict(broken["resource"].asDict(), data="{not json"))
    rows.append(Row(**broken))
    # a row without a type is read and quarantined; a row of a type the audit does not read is
    # filtered out in BigQuery (bigquery.needed_rows) and not counted
    typeless = dict(rows[-1].asDict(), name=broken["name"] + "-typeless", asset_type=None)
    other = dict(rows[-1].asDict(), name="//compute.googleapis.com/x", asset_type="compute.x/Y")
    rows += [Row(**typeless), Row(**other)]
    tables[f"{PROJECT_DATASET}.daily"] = spark.createDataFrame(rows, schema)

    result = audit(spark, [f"bigquery:{PROJECT_DATASET}.daily"], tmp_path)
    assert result.summary["lines"] == {"read": 3, "parsed": 1, "quarantined": 2, "blank": 0}
    assert "push-endpoint-https" not in result.violations("moved")  # the old export is not read
    assert "push-auth-oidc" in result.violations("moved")
    entry, typeless_entry = sorted(result.quarantined, key=lambda e: e["reason"])[::-1]
    assert typeless_entry["reason"] == "no asset type (asset_type or assetType)"
    assert entry["source"] == f"bigquery:{PROJECT_DATASET}.daily"
    assert entry["reason"] == "resource.data does not fit the schema of its asset type"
    assert '"data":"{not json"' in entry["text"]
    assert "requestTime" not in entry["text"]


def test_a_table_partitioned_by_read_time_is_read_at_its_newest_export(
    spark: SparkSession, tables: dict[str, DataFrame], tmp_path: Path
) -> None:
    """`--partition-key=read-time` adds only `readTime`: the older export's subscription,
    deleted since, was read with the newer one (the table was read whole)."""
    kept = cai.subscription("acme-orders", "123456789012", "kept", "https://new.example/push")
    gone = cai.subscription("acme-orders", "123456789012", "gone", "http://old.example/push")
    schema = StructType([*RESOURCE_TABLE.fields, StructField("readTime", TimestampType())])
    rows = [
        Row(**_conform(asset, RESOURCE_TABLE, data_as_text=True).asDict(), readTime=read)
        for asset, read in (
            (kept, datetime(2026, 10, 1)),
            (gone, datetime(2026, 10, 1)),
            (kept, datetime(2026, 11, 1)),
        )
    ]
    tables[f"{PROJECT_DATASET}.by_read_time"] = spark.createDataFrame(rows, schema)
    result = audit(spark, [f"bigquery:{PROJECT_DATASET}.by_read_time"], tmp_path)
    assert result.summary["subscriptions"]["evaluated"] == 1
    assert result.violations("gone") == set()
    [export] = result.summary["snapshots"]["exports"]
    assert export["export"] == f"bigquery:{PROJECT_DATASET}.by_read_time"
    newest = datetime(2026, 11, 1).astimezone(UTC)  # Spark reads a naive time as local
    assert export["read_time"] == newest.isoformat().replace("+00:00", "Z")


def test_a_named_table_that_does_not_exist_exits_2(
    spark: SparkSession, tables: dict[str, DataFrame], tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        app, ["audit", "--input", "bigquery:acme-audit.cai.missing", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert "bigquery:acme-audit.cai.missing: the table does not exist" in result.output


def test_without_the_connector_exits_2_naming_it(spark: SparkSession, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["audit", "--input", "bigquery:acme-audit.cai.resource", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2, result.output
    (error,) = [line for line in result.output.splitlines() if "pushguard audit: error:" in line]
    assert error.startswith(
        "pushguard audit: error: reading BigQuery needs the spark-bigquery-connector"
    )
    assert "--packages com.google.cloud.spark:spark-4.0-bigquery:" in error
    assert "Traceback" not in result.output
    assert not (tmp_path / "o" / "findings.jsonl").exists()


@pytest.mark.parametrize(
    "value",
    [
        "bq:acme-audit.cai.resource",
        "bigquery:acme-audit.cai",
        "bigquery:",
        "bigquery:Acme.cai.resource",
        "bigquery:acme-audit.cai.res.ource",
        "bigquery:acme-audit.cai.*",
        "gs://bucket/cai/",
    ],
)
def test_a_bad_input_exits_2_naming_the_option_and_what_is_allowed(
    value: str, tmp_path: Path
) -> None:
    result = CliRunner().invoke(app, ["audit", "--input", value, "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert f"pushguard audit: error: --input {value!r}: not a BigQuery table" in result.output
    assert "bigquery:PROJECT.DATASET.TABLE" in result.output
    assert "bigquery:PROJECT.DATASET.PREFIX*" in result.output


def test_no_export_path_and_no_input_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["audit", "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "nothing to audit: give an EXPORT_PATH or --input" in result.output


def test_inputs_are_parsed_into_tables() -> None:
    assert parse_input("bigquery:acme-audit.cai.resource") == BigQueryInput(
        "acme-audit", "cai", "resource"
    )
    prefix = parse_input("bigquery:example.com:acme-audit.cai_2024.cai_*")
    assert prefix == BigQueryInput(
        "example.com:acme-audit", "cai_2024", "cai_", per_asset_type=True
    )
    assert prefix.spec == "bigquery:example.com:acme-audit.cai_2024.cai_*"
    assert prefix.tables(["pubsub.googleapis.com/Subscription", "k8s.io/Pod"]) == [
        "example.com:acme-audit.cai_2024.cai_k8s_io_Pod",
        "example.com:acme-audit.cai_2024.cai_pubsub_googleapis_com_Subscription",
    ]
    with pytest.raises(BigQueryInputError, match="--input 'x'"):
        parse_input("x")
