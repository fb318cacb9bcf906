"""``summary.json``: the audit's counts, as a typed model.

:func:`pushguard.audit.job.run_audit` builds one :class:`AuditSummary` from small aggregates
(nothing in it grows with the input but the paths given and the keys seen); ``report.html``, the
command's summary line and the exit code read it by attribute, and :meth:`AuditSummary.to_json`
writes the file. All counts are exact (no sampling).
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from pushguard.rules import EnforcementLevel


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class InputCounts(_Part):
    """What was read."""

    paths: list[str]
    """The export paths as given (files or folders; local, ``file:`` or ``gs://``)."""
    files: int
    """Files read (newline-delimited JSON and JSON arrays)."""
    json_array_files: int
    """Of ``files``, those that hold one JSON document: an array of assets (``gcloud asset
    list --format=json`` output) or one pretty-printed asset; compressed or not."""
    asset_type_folders_skipped: list[str]
    """Asset types (``service.googleapis.com/Kind``) whose folders in a per-asset-type export
    layout were not read, because no rule needs them."""
    files_skipped: list[str]
    """Hidden and marker files under the paths (names starting with ``.`` or ``_``, such as
    ``_SUCCESS`` or ``.crc``), not read, as Hadoop and Spark skip them (sorted)."""
    files_unreadable: dict[str, str] = {}
    """Files under the paths that were not audited, each with the reason: a compressed file cut
    short or corrupt, a file that cannot be opened, a file with a line longer than
    ``--max-line-bytes`` (not counted in ``files`` nor in ``lines``)."""


class LineCounts(_Part):
    """Input lines (JSON-array elements count as lines);
    ``read == parsed + quarantined + blank``."""

    read: int
    """Lines read from the export files."""
    parsed: int
    """Lines that parsed as Cloud Asset Inventory assets."""
    quarantined: int
    """Lines written to ``quarantine/`` with their reason instead of being audited."""
    blank: int
    """Lines of white space only (empty, spaces, tabs): neither parsed nor quarantined."""


class SubscriptionCounts(_Part):
    """Pub/Sub subscriptions in the export."""

    evaluated: int
    """Subscriptions the rules ran on (each once, even when listed in several files)."""
    push: int
    """Of ``evaluated``, those with a push endpoint."""


class FindingCounts(_Part):
    """Findings (rows of ``findings.parquet``) by status."""

    violations: int
    """Findings with status ``violation``."""
    violations_by_rule: dict[str, int]
    """Violations per rule ID (rules without violations are absent)."""
    violations_by_level: dict[str, int]
    """Violations per enforcement level (``mandatory``, ``advisory``; absent when none)."""
    undecided: int
    """Findings with status ``unknown``: a rule could not decide from the export (for example a
    grant it needs is on an asset the export does not hold)."""
    undecided_by_rule: dict[str, int]
    """Undecided findings per rule ID (absent when none)."""
    excepted: int = 0
    """Findings with status ``excepted``: a violation under an active exception of the policy
    config (not counted in ``violations`` nor for the exit code)."""
    excepted_by_rule: dict[str, int] = {}
    """Excepted findings per rule ID (absent when none)."""
    expired_exceptions: int = 0
    """Violations whose exception expired (counted in ``violations`` again)."""


class AuditSettings(_Part):
    """The options the audit ran with."""

    include_dry_run_perimeters: bool
    """Dry-run (``spec``) service perimeters counted as well as enforced (``status``) ones."""
    max_line_bytes: int
    """Longer lines (in bytes) were quarantined."""
    levels: dict[str, EnforcementLevel]
    """The enforcement level per rule ID, after the policy config (written as its value:
    ``mandatory``, ``advisory``, ``disabled``)."""


class BaselineCounts(_Part):
    """This run against ``--baseline`` (violations and excepted findings)."""

    path: str
    """The baseline folder as given."""
    new: int
    """Findings whose ``finding_id`` the baseline does not have."""
    existing: int
    """Findings the baseline has too."""
    resolved: int
    """The baseline's findings that are gone (listed in ``resolved.jsonl``)."""


class ProjectManagement(_Part):
    """One project's push subscriptions in the export, by whether a given stack manages them."""

    managed: int
    unmanaged: int


STACKS_NOT_CHECKED = "not checked: no --stacks given (push-unmanaged and push-state-drift)"


class StacksCounts(_Part):
    """``--stacks``: the export's push subscriptions against the given stacks' state."""

    checked: bool = False
    """Whether stack states were given; without them neither rule is checked."""
    note: str = ""
    """Without ``--stacks``: :data:`STACKS_NOT_CHECKED`."""
    states: int = 0
    """State files read."""
    files_skipped: int = 0
    """JSON files found in the given folders that are not Pulumi state (a ``package.json``), and
    files of a backend's ``history``, ``backups`` and ``locks`` folders."""
    subscriptions_recorded: int = 0
    """Subscription resources the states manage."""
    recorded_without_path: int = 0
    """Of those, the ones whose state does not say their path (never matched)."""
    managed: int = 0
    """Push subscriptions of the export that a given stack manages."""
    unmanaged: int = 0
    """Push subscriptions of the export that no given stack manages (``push-unmanaged``)."""
    by_project: dict[str, ProjectManagement] = {}
    """``managed`` and ``unmanaged`` per project ID."""
    drifted_by_stack: dict[str, int] = {}
    """Per stack (fully qualified), the subscriptions whose live push settings differ from its
    state (``push-state-drift``)."""
    deleted_by_stack: dict[str, int] = {}
    """Per stack, the subscriptions it holds that were deleted out of band."""


class AuditSummary(_Part):
    """The content of ``summary.json``."""

    inputs: InputCounts
    """What was read."""
    lines: LineCounts
    """Input lines and what became of them."""
    quarantine_reasons: dict[str, int]
    """Quarantined lines per reason (absent when none)."""
    assets_by_type: dict[str, int]
    """Parsed lines per asset type (every type read, whether or not a rule uses it)."""
    superseded_by_type: dict[str, int]
    """Per asset type the audit reads, the copies of an asset (a resource or an IAM policy)
    that a newer copy of the same asset superseded: an asset listed more than once is evaluated
    once, in the copy with the greatest ``update_time`` (ties: the first by file and line);
    absent when none."""
    subscriptions: SubscriptionCounts
    """Subscriptions evaluated."""
    findings: FindingCounts
    """Violations and undecided findings."""
    settings: AuditSettings
    """The options the audit ran with."""
    timings_s: dict[str, float]
    """Wall time per phase of the run, in seconds (3 decimals); empty until the run ends."""
    baseline: BaselineCounts | None = None
    """With ``--baseline``: new, existing and resolved findings (absent without one)."""
    stacks: StacksCounts = StacksCounts(note=STACKS_NOT_CHECKED)
    """``--stacks``: managed, unmanaged and drifted push subscriptions; without it, says that
    neither rule was checked."""

    def to_json(self) -> str:
        """The text of ``summary.json``: keys sorted, indented by 2, ending in a newline."""
        data = self.model_dump(mode="json")
        if data.get("baseline") is None:
            data.pop("baseline", None)
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
