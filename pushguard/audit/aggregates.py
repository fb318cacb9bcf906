"""The small aggregates the summary and the report need, over the persisted facts and findings,
computed by one Spark query (:func:`collect_aggregates`; adaptive execution runs each of its
shuffles as a job).

Each aggregate is a frame of one named struct column (:data:`FINDING_COUNTS`,
:data:`SUBSCRIPTION_TOTALS`, :data:`PROJECT_OFFENDERS`, :data:`FOLDER_OFFENDERS`,
:data:`WORST_SUBSCRIPTIONS`, :data:`SUPERSEDED`, :data:`GOOGLE_MANAGED_COUNTS`), with named
fields; they are unioned by name
(each row carries one of the structs, the others null) so that one ``collect`` runs them all,
and come back as typed rows (:class:`Aggregates`). Each part is at most a few hundred rows. With
:data:`COVERAGE` (what the run read: :func:`coverage_counts`) there are eight, and with
:data:`SNAPSHOTS` (``summary.json``'s ``snapshots``:
:func:`~pushguard.audit.snapshots.snapshot_frame`, asked for by the run) nine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from pushguard.audit.coverage import IAM_POLICIES, SERVICE_PERIMETERS
from pushguard.rules.google_managed import GOOGLE_MANAGED

TOP = 25
"""How many projects, folders and subscriptions the report lists (the most violations first)."""

FINDING_COUNTS = "finding_counts"
SUBSCRIPTION_TOTALS = "subscription_totals"
PROJECT_OFFENDERS = "project_offenders"
FOLDER_OFFENDERS = "folder_offenders"
WORST_SUBSCRIPTIONS = "worst_subscriptions"
SUPERSEDED = "superseded"
GOOGLE_MANAGED_COUNTS = "google_managed_counts"
SNAPSHOTS = "snapshots"

COVERAGE = "coverage"


@dataclass(frozen=True)
class FindingCount:
    """Findings of one status (``violation``, ``unknown``, ``excepted``), level, rule and
    exception state (``None``, ``active``, ``expired``)."""

    status: str
    level: str
    rule_id: str
    findings: int
    exception_state: str | None = None


@dataclass(frozen=True)
class ProjectOffender:
    """Violations in one project (its ID, else its number; None when neither is known)."""

    project: str | None
    violations: int
    mandatory: int


@dataclass(frozen=True)
class FolderOffender:
    """Violations under one folder (``folders/N``, any ancestor of the subscription)."""

    folder: str
    violations: int


@dataclass(frozen=True)
class WorstSubscription:
    """One subscription's violations, and the rules it violates (sorted)."""

    asset_name: str
    violations: int
    mandatory: int
    rules: list[str]


@dataclass
class Aggregates:
    """Everything :func:`collect_aggregates` returns: the finding counts, the subscriptions
    evaluated and those that push, the top :data:`TOP` projects, folders and subscriptions by
    violations (in Spark's order; the report sorts them), and the superseded copies."""

    finding_counts: list[FindingCount] = field(default_factory=list)
    subscriptions: int = 0
    push_subscriptions: int = 0
    projects: list[ProjectOffender] = field(default_factory=list)
    folders: list[FolderOffender] = field(default_factory=list)
    worst: list[WorstSubscription] = field(default_factory=list)
    superseded: dict[str, int] = field(default_factory=dict)
    """Copies superseded by a newer copy of the same asset, per asset type."""
    google_managed: dict[str, int] = field(default_factory=dict)
    """Google-managed subscriptions (findings rows of status ``google-managed``) per product."""

    read: dict[str, int] = field(default_factory=dict)
    """IAM policies and service perimeters read (:data:`COVERAGE`), by
    :data:`~pushguard.audit.coverage.INPUTS` key."""
    organizations: list[str] = field(default_factory=list)
    """The organisations the assets read belong to (``organizations/N``), sorted."""
    snapshots: list[Row] = field(default_factory=list)
    """The rows of :func:`~pushguard.audit.snapshots.snapshot_frame` (:data:`SNAPSHOTS`), in
    Spark's order."""


def _one_row_per_violation(findings: DataFrame) -> DataFrame:
    return findings.filter(F.col("status") == "violation")


def _mandatory() -> Column:
    return F.sum(F.when(F.col("level") == "mandatory", 1).otherwise(0)).alias("mandatory")


def finding_counts(findings: DataFrame) -> DataFrame:
    """:data:`FINDING_COUNTS`: struct of ``status``, ``level``, ``rule_id``, ``findings``,
    ``exception_state``."""
    counts = findings.groupBy("status", "level", "rule_id", "exception_state").agg(
        F.count(F.lit(1)).alias("findings")
    )
    return counts.select(
        F.struct("status", "level", "rule_id", "findings", "exception_state").alias(FINDING_COUNTS)
    )


def subscription_totals(facts: DataFrame) -> DataFrame:
    """:data:`SUBSCRIPTION_TOTALS`, one row: struct of ``subscriptions`` (evaluated) and
    ``push_subscriptions`` (with a non-empty push endpoint)."""
    is_push = F.col("push_endpoint").isNotNull() & (F.col("push_endpoint") != "")
    totals = facts.agg(
        F.count(F.lit(1)).alias("subscriptions"),
        F.count(F.when(is_push, 1)).alias("push_subscriptions"),
    )
    return totals.select(F.struct("subscriptions", "push_subscriptions").alias(SUBSCRIPTION_TOTALS))


def project_offenders(findings: DataFrame) -> DataFrame:
    """:data:`PROJECT_OFFENDERS`, the top :data:`TOP`: struct of ``project``, ``violations``,
    ``mandatory``."""
    projects = (
        _one_row_per_violation(findings)
        .groupBy(F.coalesce("project_id", "project_number").alias("project"))
        .agg(F.count(F.lit(1)).alias("violations"), _mandatory())
        .orderBy(F.desc("mandatory"), F.desc("violations"), "project")
        .limit(TOP)
    )
    return projects.select(F.struct("project", "violations", "mandatory").alias(PROJECT_OFFENDERS))


def folder_offenders(findings: DataFrame) -> DataFrame:
    """:data:`FOLDER_OFFENDERS`, the top :data:`TOP`: struct of ``folder``, ``violations``
    (a violation counts under each of its folders)."""
    folders = (
        _one_row_per_violation(findings)
        .select(
            F.explode(F.filter("ancestors", lambda a: a.startswith("folders/"))).alias("folder")
        )
        .groupBy("folder")
        .agg(F.count(F.lit(1)).alias("violations"))
        .orderBy(F.desc("violations"), "folder")
        .limit(TOP)
    )
    return folders.select(F.struct("folder", "violations").alias(FOLDER_OFFENDERS))


def worst_subscriptions(findings: DataFrame) -> DataFrame:
    """:data:`WORST_SUBSCRIPTIONS`, the top :data:`TOP`: struct of ``asset_name``,
    ``violations``, ``mandatory``, ``rules``."""
    worst = (
        _one_row_per_violation(findings)
        .groupBy("asset_name")
        .agg(
            F.count(F.lit(1)).alias("violations"),
            _mandatory(),
            F.array_sort(F.collect_set("rule_id")).alias("rules"),
        )
        .orderBy(F.desc("mandatory"), F.desc("violations"), "asset_name")
        .limit(TOP)
    )
    return worst.select(
        F.struct("asset_name", "violations", "mandatory", "rules").alias(WORST_SUBSCRIPTIONS)
    )


def google_managed_counts(findings: DataFrame) -> DataFrame:
    """:data:`GOOGLE_MANAGED_COUNTS`: struct of ``product``, ``subscriptions``: the rows of
    status ``google-managed`` (one per subscription) per ``evidence.product``."""
    counts = (
        findings.filter(F.col("status") == GOOGLE_MANAGED)
        .groupBy(F.col("evidence")["product"].alias("product"))
        .agg(F.count(F.lit(1)).alias("subscriptions"))
    )
    return counts.select(F.struct("product", "subscriptions").alias(GOOGLE_MANAGED_COUNTS))


def superseded_copies(superseded: DataFrame) -> DataFrame:
    """:data:`SUPERSEDED`: struct of ``asset_type``, ``copies``, from
    :meth:`~pushguard.audit.join.AssetCopies.superseded`."""
    return superseded.select(F.struct("asset_type", "copies").alias(SUPERSEDED))


def _organization(ancestors: Column) -> Column:
    """The last of ``ancestors`` when it is an organisation (``organizations/N``), else null."""
    top = F.try_element_at(ancestors, F.lit(-1))  # null when empty (ANSI mode raises)
    return F.when(top.startswith("organizations/"), top)


def coverage_counts(
    resources: DataFrame, policies: DataFrame, perimeters: DataFrame, facts: DataFrame
) -> DataFrame:
    """:data:`COVERAGE`: struct of ``input``, ``count``, ``organization``: one row counting the
    IAM ``policies`` (``input`` ``iam-policies``), one the ``perimeters``
    (``service-perimeters``), and one per organisation (``input`` ``organization``) the
    ``resources``, ``policies``, ``perimeters`` (parsed assets, newest copies) or the joined
    subscription ``facts`` (their derived ``ancestors``) belong to, or that is itself an asset
    read. Lazy."""
    counted = [
        frame.agg(F.count(F.lit(1)).alias("count")).select(
            F.lit(key).alias("input"), "count", F.lit(None).cast("string").alias("organization")
        )
        for key, frame in ((IAM_POLICIES, policies), (SERVICE_PERIMETERS, perimeters))
    ]
    named = F.regexp_extract(
        "name", r"^//cloudresourcemanager\.googleapis\.com/(organizations/[0-9]+)$", 1
    )
    organizations = (
        resources.select(_organization(F.col("ancestors")).alias("organization"))
        .unionByName(policies.select(_organization(F.col("ancestors")).alias("organization")))
        .unionByName(perimeters.select(_organization(F.col("ancestors")).alias("organization")))
        .unionByName(facts.select(_organization(F.col("ancestors")).alias("organization")))
        .unionByName(resources.select(F.when(named != "", named).alias("organization")))
        .filter(F.col("organization").isNotNull())
        .distinct()
        .select(
            F.lit("organization").alias("input"),
            F.lit(None).cast("long").alias("count"),
            "organization",
        )
    )
    rows = counted[0].unionByName(counted[1]).unionByName(organizations)
    return rows.select(F.struct("input", "count", "organization").alias(COVERAGE))


def aggregates_frame(
    facts: DataFrame,
    findings: DataFrame,
    superseded: DataFrame | None = None,
    coverage: DataFrame | None = None,
    snapshots: DataFrame | None = None,
) -> DataFrame:
    """The aggregates in one frame, unioned by name: one column per aggregate (the names
    above, in that order), each row non-null in exactly one of them. ``facts`` are joined rows
    (:data:`~pushguard.audit.schemas.JOINED_SCHEMA`), ``findings`` rows of
    :data:`~pushguard.audit.schemas.FINDINGS_DDL`, ``superseded`` the counts of
    :meth:`~pushguard.audit.join.AssetCopies.superseded` (None: none), ``coverage`` the rows of
    :func:`coverage_counts` (None: not counted), ``snapshots`` the rows of
    :func:`~pushguard.audit.snapshots.snapshot_frame` (None: not asked for), as a struct
    column :data:`SNAPSHOTS` last. Lazy."""
    parts = [
        finding_counts(findings),
        subscription_totals(facts),
        project_offenders(findings),
        folder_offenders(findings),
        worst_subscriptions(findings),
        google_managed_counts(findings),
    ]
    if superseded is not None:
        parts.append(superseded_copies(superseded))
    if coverage is not None:
        parts.append(coverage)
    if snapshots is not None:
        parts.append(snapshots.select(F.struct(*snapshots.columns).alias(SNAPSHOTS)))
    frame = parts[0]
    for part in parts[1:]:
        frame = frame.unionByName(part, allowMissingColumns=True)
    return frame.select(
        FINDING_COUNTS,
        SUBSCRIPTION_TOTALS,
        PROJECT_OFFENDERS,
        FOLDER_OFFENDERS,
        WORST_SUBSCRIPTIONS,
        F.col(SUPERSEDED) if superseded is not None else F.lit(None).alias(SUPERSEDED),
        GOOGLE_MANAGED_COUNTS,
        F.col(COVERAGE) if coverage is not None else F.lit(None).alias(COVERAGE),
        *([SNAPSHOTS] if snapshots is not None else []),
    )


def collect_aggregates(
    facts: DataFrame,
    findings: DataFrame,
    superseded: DataFrame | None = None,
    coverage: DataFrame | None = None,
    snapshots: DataFrame | None = None,
) -> Aggregates:
    """Run :func:`aggregates_frame` (one ``collect``) and type its rows."""
    result = Aggregates()
    for row in aggregates_frame(facts, findings, superseded, coverage, snapshots).collect():
        if snapshots is not None and row[SNAPSHOTS] is not None:
            result.snapshots.append(row[SNAPSHOTS])
            continue
        _add(result, row)
    result.superseded = dict(sorted(result.superseded.items()))
    result.google_managed = dict(sorted(result.google_managed.items()))

    result.organizations.sort()
    return result


def _add(result: Aggregates, row: Row) -> None:
    if row[FINDING_COUNTS] is not None:
        result.finding_counts.append(FindingCount(**row[FINDING_COUNTS].asDict()))
    elif row[SUBSCRIPTION_TOTALS] is not None:
        result.subscriptions = row[SUBSCRIPTION_TOTALS]["subscriptions"]
        result.push_subscriptions = row[SUBSCRIPTION_TOTALS]["push_subscriptions"]
    elif row[PROJECT_OFFENDERS] is not None:
        result.projects.append(ProjectOffender(**row[PROJECT_OFFENDERS].asDict()))
    elif row[FOLDER_OFFENDERS] is not None:
        result.folders.append(FolderOffender(**row[FOLDER_OFFENDERS].asDict()))
    elif row[WORST_SUBSCRIPTIONS] is not None:
        worst = row[WORST_SUBSCRIPTIONS].asDict()
        result.worst.append(WorstSubscription(**{**worst, "rules": list(worst["rules"])}))
    elif row[SUPERSEDED] is not None:
        result.superseded[row[SUPERSEDED]["asset_type"]] = row[SUPERSEDED]["copies"]
    elif row[GOOGLE_MANAGED_COUNTS] is not None:
        counted = row[GOOGLE_MANAGED_COUNTS]
        result.google_managed[counted["product"]] = counted["subscriptions"]

    elif row[COVERAGE] is not None:
        part = row[COVERAGE]
        if part["input"] == "organization":
            result.organizations.append(part["organization"])
        else:
            result.read[part["input"]] = part["count"]
