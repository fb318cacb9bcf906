"""``--stacks``: the export's subscriptions matched to the stack resources that manage them, and
the findings of ``push-unmanaged`` and ``push-state-drift``, all in Spark.

- **Live side**: every subscription of the export (its newest copy), with its push settings from
  its typed ``resource.data`` (:data:`~pushguard.audit.schemas.RESOURCE_DATA`) and its project
  and ancestors from the joined facts (:func:`~pushguard.audit.join.subscription_facts`).
- **Stack side**: the records of :mod:`pushguard.audit.stacks`, grouped by path.
- **The match**: a full outer join on the path ``projects/P/subscriptions/S``. A subscription only
  the export holds is unmanaged; one only a stack holds was deleted out of band when the export
  holds some asset of its project (:func:`projects_in_export`), else it is not checked.
- **The rules**: the two rules of :data:`STACK_RULES`, evaluated on the executors by
  :func:`pushguard.audit.evaluate.arrow_evaluator` over :func:`facts_of_row` (levels, exceptions
  and finding IDs as for every finding). A subscription only a stack holds is named by the asset
  name it would have, ``//pubsub.googleapis.com/projects/P/subscriptions/S``, so its finding
  IDs, exceptions and baselines work like any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pushguard.audit.evaluate import RuleGroup, arrow_evaluator, plan, subscription_id
from pushguard.audit.join import AssetCopies
from pushguard.audit.options import AuditOptions
from pushguard.audit.schemas import FINDINGS_DDL, PROJECT, SUBSCRIPTION, data_column
from pushguard.audit.stacks import RecordCounts
from pushguard.audit.summary import ProjectManagement, StacksCounts
from pushguard.rules import push_state_drift, push_unmanaged
from pushguard.rules.facts import SubscriptionFacts
from pushguard.rules.google_managed import GOOGLE_MANAGED
from pushguard.rules.identity import CAI_SERVICE_PREFIX
from pushguard.rules.managed import RECORDED_SETTINGS, Management, PushSettings, StackRecord

STACK_RULES = (push_unmanaged.RULE, push_state_drift.RULE)
"""The rules that need ``--stacks``."""


def _live(copies: AssetCopies, facts: DataFrame) -> DataFrame:
    """``path``, ``asset_name``, ``project_id``, ``project_number``, ``ancestors``, ``live``
    (struct of the push settings) per subscription of the export. ``path`` names the project by
    its ID, as stacks record it, also when the asset's name holds the project's number and the
    export's project assets give its ID (:func:`~pushguard.audit.join.project_ids`)."""
    resources, _ = copies.newest()
    data = F.col(data_column(SUBSCRIPTION))
    push = data["pushConfig"]
    attributes = F.map_entries(F.coalesce(push["attributes"], F.create_map()))
    pairs = F.transform(attributes, lambda e: F.concat(e["key"], F.lit("="), e["value"]))
    live = F.struct(
        F.when(push["pushEndpoint"] != "", push["pushEndpoint"]).alias("push_endpoint"),
        F.lower(F.nullif(push["oidcToken"]["serviceAccountEmail"], F.lit(""))).alias(
            "push_auth_account"
        ),
        F.nullif(push["oidcToken"]["audience"], F.lit("")).alias("audience"),
        push["noWrapper"].isNotNull().alias("no_wrapper"),
        push["noWrapper"]["writeMetadata"].alias("write_metadata"),
        F.array_sort(pairs).alias("attributes"),
    )
    subscriptions = resources.filter(F.col("asset_type") == SUBSCRIPTION).select(
        F.col("name").alias("asset_name"), live.alias("live")
    )
    path = F.regexp_extract("asset_name", r"^//pubsub\.googleapis\.com/(.*)$", 1)
    by_id = F.concat(
        F.lit("projects/"),
        "project_id",
        F.lit("/"),
        F.regexp_extract(path, r"^projects/[^/]+/(.*)$", 1),
    )
    named_by_number = path.rlike(r"^projects/[0-9]+/") & (F.coalesce("project_id", F.lit("")) != "")
    return subscriptions.join(
        facts.select("asset_name", "project_id", "project_number", "ancestors", "topic"),
        on="asset_name",
        how="inner",
    ).withColumn("path", F.when(named_by_number, by_id).otherwise(path))


def projects_in_export(copies: AssetCopies) -> DataFrame:
    """``project_id``, ``project_number``, ``project_ancestors``: the projects some asset of the
    export belongs to (by the project ID in its name, or a project asset's ``projectId``), each
    once; number and ancestors where a project asset gives them. Lazy (one aggregation)."""
    resources, policies = copies.newest()
    is_project = F.col("asset_type") == PROJECT
    assets = resources.unionByName(policies)
    named = F.regexp_extract("name", r"/projects/([^/]+)/", 1)
    project_id = F.when(is_project, F.col(data_column(PROJECT))["projectId"]).otherwise(named)
    return (
        assets.select(
            project_id.alias("project_id"),
            F.when(is_project, F.regexp_extract("name", r"/projects/([0-9]+)$", 1)).alias("number"),
            F.when(is_project, F.col("ancestors")).alias("project_ancestors"),
        )
        .filter(
            F.col("project_id").isNotNull()
            & (F.col("project_id") != "")
            & ~F.col("project_id").rlike("^[0-9]+$")
        )
        .groupBy("project_id")
        .agg(
            F.max(F.nullif("number", F.lit(""))).alias("project_number"),
            F.first("project_ancestors", ignorenulls=True).alias("project_ancestors"),
        )
    )


def _grouped(records: DataFrame) -> DataFrame:
    """``path``, ``record_project``, ``records`` (array of struct: stack, urn, file, the push
    settings, not_checked, secret) of the records with a path."""
    record = F.struct("stack", "urn", "file", *RECORDED_SETTINGS, "not_checked", "secret")
    return (
        records.filter(F.col("problem").isNull() & F.col("path").isNotNull())
        .groupBy("path")
        .agg(
            F.first("project_id").alias("record_project"),
            F.array_sort(F.collect_list(record)).alias("records"),
        )
    )


def managed_rows(records: DataFrame, facts: DataFrame, copies: AssetCopies) -> DataFrame:
    """One row per subscription of the export or of a stack: ``asset_name``, ``project_id``,
    ``project_number``, ``ancestors``, ``live`` (null: not in the export), ``topic``,
    ``records`` (empty:
    no given stack manages it), ``project_in_export``. Lazy."""
    matched = _live(copies, facts).join(_grouped(records), on="path", how="full")
    projects = F.broadcast(projects_in_export(copies)).alias("p")
    rows = matched.join(
        projects.select(
            F.col("project_id").alias("known_project"),
            F.col("project_number").alias("known_number"),
            "project_ancestors",
        ),
        F.coalesce(F.col("project_id"), F.col("record_project")) == F.col("known_project"),
        "left",
    )
    in_export = F.col("live").isNotNull()
    return rows.select(
        F.coalesce("asset_name", F.concat(F.lit(CAI_SERVICE_PREFIX), "path")).alias("asset_name"),
        F.coalesce("project_id", "record_project").alias("project_id"),
        F.when(in_export, F.col("project_number"))
        .otherwise(F.col("known_number"))
        .alias("project_number"),
        F.coalesce(F.when(in_export, F.col("ancestors")), "project_ancestors", F.array()).alias(
            "ancestors"
        ),
        "live",
        "topic",
        F.coalesce("records", F.array()).alias("records"),
        (in_export | F.col("known_project").isNotNull()).alias("project_in_export"),
    )


def _settings(values: Mapping[str, Any]) -> PushSettings:
    return PushSettings(
        push_endpoint=values["push_endpoint"] or None,
        push_auth_account=values["push_auth_account"] or None,
        audience=values["audience"] or None,
        no_wrapper=bool(values["no_wrapper"]),
        write_metadata=values["write_metadata"],
        attributes=tuple(values["attributes"] or ()),
    )


def facts_of_row(row: Mapping[str, Any]) -> SubscriptionFacts:
    """One row of :func:`managed_rows` -> the facts the two rules read, and what tells a
    Google-managed subscription (its ID, topic and live push settings), which neither rule
    judges."""
    live = row["live"]
    return SubscriptionFacts(
        resource=row["asset_name"],
        project_id=row["project_id"] or None,
        project_number=row["project_number"] or None,
        subscription_id=subscription_id(row["asset_name"]),
        topic=row.get("topic"),
        push_endpoint=live["push_endpoint"] if live is not None else None,
        push_auth_account=live["push_auth_account"] if live is not None else None,
        management=Management(
            records=tuple(
                StackRecord(
                    stack=r["stack"],
                    urn=r["urn"],
                    file=r["file"] or "",
                    recorded=_settings(r),
                    not_checked=tuple(r["not_checked"] or ()),
                    secret=tuple(r["secret"] or ()),
                )
                for r in row["records"]
            ),
            live=_settings(live) if live is not None else None,
            project_in_export=bool(row["project_in_export"]),
        ),
    )


def stack_groups(options: AuditOptions) -> list[RuleGroup]:
    """The audit's rule groups (:func:`~pushguard.audit.evaluate.plan`) with only
    :data:`STACK_RULES` in them."""
    ids = {rule.id for rule in STACK_RULES}
    groups = []
    for group in plan(options.rule_levels(), options.settings):
        rules = tuple(rule for rule in group.rules if rule.id in ids)
        if rules:
            groups.append(RuleGroup(group.settings, rules, group.levels))
    return groups


def stack_findings(rows: DataFrame, options: AuditOptions) -> DataFrame:
    """The findings (:data:`~pushguard.audit.schemas.FINDINGS_DDL`) of :data:`STACK_RULES` over
    :func:`managed_rows`, evaluated on the executors: none for a Google-managed subscription
    (:mod:`pushguard.rules.google_managed`; the rules' pass reports it). Lazy."""
    evaluator = arrow_evaluator(
        stack_groups(options), options.run_time, facts_of=facts_of_row, report_google_managed=False
    )
    return rows.mapInArrow(evaluator, FINDINGS_DDL)


def stacks_counts(rows: DataFrame, findings: DataFrame, counts: RecordCounts) -> StacksCounts:
    """``summary.json``'s ``stacks``: per project the managed and unmanaged push subscriptions
    of the export (not the Google-managed ones, which are Google's to manage), per stack the
    subscriptions that drifted or were deleted (violations of ``push-state-drift``), the
    subscriptions several stacks manage, and the stacks given by several state files
    (``counts.choice``). One Spark job (the aggregates unioned, as
    :mod:`pushguard.audit.aggregates` does); sorted on the driver."""
    is_push = F.col("live").isNotNull() & F.col("live")["push_endpoint"].isNotNull()
    managed = F.size("records") > 0
    google = findings.filter(F.col("status") == GOOGLE_MANAGED).select("asset_name")
    per_project = (
        rows.filter(is_push)
        .join(google, on="asset_name", how="left_anti")  # Google's: neither managed nor not
        .groupBy(F.coalesce("project_id", F.lit("")).alias("key"))
        .agg(
            F.count(F.when(managed, 1)).alias("first"),
            F.count(F.when(~managed, 1)).alias("second"),
        )
        .withColumn("part", F.lit("project"))
    )
    deleted = F.col("evidence")["fields"] == "deleted"
    drift = (F.col("rule_id") == push_state_drift.RULE.id) & (F.col("status") == "violation")
    per_stack = (
        findings.filter(drift & F.col("evidence")["stack"].isNotNull())
        .groupBy(F.col("evidence")["stack"].alias("key"))
        .agg(
            F.count(F.when(~deleted, 1)).alias("first"),
            F.count(F.when(deleted, 1)).alias("second"),
        )
        .withColumn("part", F.lit("stack"))
    )
    claimed = (
        rows.filter(F.size(F.array_distinct(F.transform("records", lambda r: r["stack"]))) > 1)
        .agg(F.lit("").alias("key"), F.count(F.lit(1)).alias("first"), F.lit(0).alias("second"))
        .withColumn("part", F.lit("claimed"))
    )
    parts = per_project.unionByName(per_stack).unionByName(claimed)
    collected = sorted(parts.collect(), key=lambda r: r["key"])
    projects = [r for r in collected if r["part"] == "project"]
    stacks = [r for r in collected if r["part"] == "stack"]
    several = sum(r["first"] for r in collected if r["part"] == "claimed")
    return StacksCounts(
        checked=True,
        states=counts.states,
        files_skipped=counts.skipped,
        subscriptions_recorded=counts.records,
        recorded_without_path=counts.without_path,
        managed=sum(r["first"] for r in projects),
        unmanaged=sum(r["second"] for r in projects),
        by_project={
            r["key"]: ProjectManagement(managed=r["first"], unmanaged=r["second"]) for r in projects
        },
        drifted_by_stack={r["key"]: r["first"] for r in stacks if r["first"]},
        deleted_by_stack={r["key"]: r["second"] for r in stacks if r["second"]},
        claimed_by_several_stacks=several,
        snapshots=counts.choice.snapshots,
    )


__all__ = [
    "STACK_RULES",
    "facts_of_row",
    "managed_rows",
    "projects_in_export",
    "stack_findings",
    "stacks_counts",
]
