"""The one pass over the input: what is kept of each parsed line, and the counts of the pass.

:func:`stored_lines` narrows every :func:`~pushguard.audit.parse.parse_lines` row to its place
and type, plus the payload only for the assets the audit uses and the text only for quarantined
lines; :meth:`Scan.of` counts lines per split, asset type and quarantine reason in the job that
also fills the cache of the stored lines. The few lines whose string fields look like other JSON
types are checked exactly afterwards, on their own (:func:`type_changes`), and
:func:`assets_and_quarantine` splits the stored lines after those changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pushguard.audit.parse import with_type_errors
from pushguard.audit.schemas import NEEDED_TYPES, RESOURCE_DATA, data_column

LINE_PLACE = ("source", "block", "position")
"""What identifies a line: its file (or table), its split and its position in the split."""

PAYLOAD = (
    "name",
    "ancestors",
    "update_time",
    "parent",
    "has_resource",
    *(data_column(kind) for kind in RESOURCE_DATA),
    "iam",
    "perimeter",
)
"""The payload columns kept for an asset the audit uses (the ``asset`` struct of
:func:`stored_lines`)."""

QUARANTINE_COLUMNS = (*LINE_PLACE, "reason", "text")
"""A quarantined line: its place, its reason and the start of its text."""


def stored_lines(parsed: DataFrame) -> DataFrame:
    """What is kept of each line (:func:`~pushguard.audit.parse.parse_lines` rows): ``source``,
    ``block``, ``position``, ``asset_type``; ``q`` (struct of ``reason``, ``text``) when
    quarantined; ``asset`` (struct of the :data:`PAYLOAD` columns) when it is an asset the audit
    uses; ``blank`` (white space only); ``value`` when an exact check must look at it again;
    ``length`` (its bytes). Most lines keep only their place, type and length: three null
    columns. Lazy."""
    reason = F.col("reason")
    used = reason.isNull() & (
        F.col("asset_type").isin(*NEEDED_TYPES) | F.col("perimeter").isNotNull()
    )
    return parsed.select(
        *LINE_PLACE,
        "asset_type",
        F.when(reason.isNotNull(), F.struct("reason", "text")).alias("q"),
        F.when(used, F.struct(*PAYLOAD)).alias("asset"),
        "blank",
        "value",
        "length",
    )


LeaveOut = Callable[[Mapping[str, int], set[str]], set[str]]
"""Given the bytes of the lines read per source (a separator each included) and the sources
with a line longer than ``--max-line-bytes``, the sources to leave out of the audit
(:func:`pushguard.audit.long_lines.left_out`)."""


@dataclass
class Scan:
    """The counts of the pass over the input (small: one row per split, asset type and reason).

    ``blocks`` maps (source, block) to (lines in it, its first position); ``types`` counts the
    parsed lines per asset type; ``reasons`` the quarantined lines per reason; ``blank`` the
    lines of white space only (neither parsed nor quarantined); ``suspect`` the
    lines a wrong-type check must look at again; ``without_ancestors`` whether an asset the
    audit uses has no ``ancestors`` (then the hierarchy is derived from ``parent`` links);
    ``left_out`` the sources left out of the audit (none of the counts include them).
    """

    blocks: dict[tuple[str, int], tuple[int, int]]
    types: dict[str, int]
    reasons: dict[str, int]
    suspect: int
    without_ancestors: bool
    blank: int = 0
    left_out: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, stored: DataFrame, leave_out: LeaveOut | None = None) -> Scan:
        """Run the pass over :func:`stored_lines`: one Spark job, which also fills the cache of
        ``stored``; the sources ``leave_out`` names are not counted."""
        rows = (
            stored.groupBy(
                "source",
                "block",
                "asset_type",
                F.col("q.reason").alias("reason"),
                (F.col("asset").isNotNull() & F.col("asset.ancestors").isNull()).alias(
                    "without_ancestors"
                ),
                F.col("value").isNotNull().alias("suspect"),
                "blank",
            )
            .agg(
                F.count(F.lit(1)).alias("lines"),
                F.min("position").alias("first_position"),
                F.sum(F.col("length") + 1).alias("bytes"),
            )
            .collect()
        )
        read_bytes: dict[str, int] = {}
        too_long: set[str] = set()
        for row in rows:
            read_bytes[row["source"]] = read_bytes.get(row["source"], 0) + (row["bytes"] or 0)
            if (row["reason"] or "").startswith("line longer than "):
                too_long.add(row["source"])
        scan = cls({}, {}, {}, 0, False)
        scan.left_out = leave_out(read_bytes, too_long) if leave_out else set()
        for row in rows:
            if row["source"] in scan.left_out:
                continue
            key = (row["source"], row["block"])
            lines, first = scan.blocks.get(key, (0, row["first_position"]))
            scan.blocks[key] = (lines + row["lines"], min(first, row["first_position"]))
            scan.suspect += row["lines"] if row["suspect"] else 0
            scan.without_ancestors |= bool(row["without_ancestors"])
            if row["blank"]:
                scan.blank += row["lines"]
            else:
                scan._count(row["asset_type"], row["reason"], row["lines"])
        return scan

    def _count(self, asset_type: str | None, reason: str | None, lines: int) -> None:
        if reason is None:
            self.types[asset_type or ""] = self.types.get(asset_type or "", 0) + lines
        else:
            self.reasons[reason] = self.reasons.get(reason, 0) + lines

    def apply(self, changes: DataFrame) -> None:
        """Move the lines whose reason the wrong-type check changed (:func:`type_changes`) to
        their new reason."""
        rows = (
            changes.groupBy("asset_type", "old_reason", "reason")
            .agg(F.count(F.lit(1)).alias("lines"))
            .collect()
        )
        for row in rows:
            self._count(row["asset_type"], row["old_reason"], -row["lines"])
            self._count(row["asset_type"], row["reason"], row["lines"])
        self.types = {k: v for k, v in self.types.items() if v}
        self.reasons = {k: v for k, v in self.reasons.items() if v}

    @property
    def read(self) -> int:
        """Lines read."""
        return sum(lines for lines, _ in self.blocks.values())

    @property
    def parsed(self) -> int:
        """Lines parsed: neither quarantined nor blank."""
        return self.read - self.quarantined - self.blank

    @property
    def quarantined(self) -> int:
        """Lines quarantined."""
        return sum(self.reasons.values())


def type_changes(stored: DataFrame) -> DataFrame:
    """The suspect lines of :func:`stored_lines` whose reason the exact wrong-type check
    (:func:`~pushguard.audit.parse.with_type_errors`) changes: ``source``, ``block``,
    ``position``, ``asset_type``, ``old_reason``, ``reason`` (null: the line parses after all),
    ``text``. A few rows, computed on the suspect lines alone; lazy (the job persists them: they
    are read three times)."""
    suspects = stored.filter(F.col("value").isNotNull()).select(
        *LINE_PLACE,
        "asset_type",
        F.col("q.reason").alias("reason"),
        F.col("q.text").alias("text"),
        F.col("q.reason").alias("old_reason"),
        F.lit(True).alias("suspect"),
        "value",
    )
    checked = with_type_errors(suspects)
    changed = checked.filter(~checked["reason"].eqNullSafe(checked["old_reason"]))
    return changed.select(*LINE_PLACE, "asset_type", "old_reason", "reason", "text")


def assets_and_quarantine(
    stored: DataFrame, changes: DataFrame | None
) -> tuple[DataFrame, DataFrame]:
    """The parsed assets the audit uses (``source``, ``block``, ``position``, ``asset_type``,
    the :data:`PAYLOAD` columns and a null ``reason``, as
    :func:`~pushguard.audit.parse.parse_assets` gives them) and the quarantined lines
    (:data:`QUARANTINE_COLUMNS`), after the wrong-type ``changes`` (:func:`type_changes`, None
    when no line was suspect)."""
    assets = stored.filter(F.col("asset").isNotNull())
    quarantined = stored.filter(F.col("q").isNotNull()).select(*LINE_PLACE, "q.reason", "q.text")
    if changes is not None:
        changed = F.broadcast(changes.select(*LINE_PLACE))
        assets = assets.join(changed, on=list(LINE_PLACE), how="left_anti")
        quarantined = quarantined.join(changed, on=list(LINE_PLACE), how="left_anti")
        quarantined = quarantined.unionByName(
            changes.filter(F.col("reason").isNotNull()).select(*QUARANTINE_COLUMNS)
        )
    assets = assets.select(
        *LINE_PLACE,
        "asset_type",
        *(F.col(f"asset.{name}").alias(name) for name in PAYLOAD),
        F.lit(None).cast("string").alias("reason"),
    )
    return assets, quarantined.select(*QUARANTINE_COLUMNS)
