"""``summary.json``: the audit's counts, as a typed model.

:func:`pushguard.audit.job.run_audit` builds one :class:`AuditSummary` from small aggregates
(nothing in it grows with the input but the paths given and the keys seen); ``report.html``, the
command's summary line and the exit code read it by attribute, and :meth:`AuditSummary.to_json`
writes the file. All counts are exact (no sampling).
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from pushguard.audit.guardrails.counts import GuardrailsSummary
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
    """Findings (rows of ``findings.parquet``) by status, and the Google-managed
    subscriptions."""

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
    google_managed: int = 0
    """Subscriptions Google creates and configures for its own products, which no rule judges
    (:mod:`pushguard.rules.google_managed`): one row of status ``google-managed`` each, never a
    violation."""
    google_managed_by_product: dict[str, int] = {}
    """Google-managed subscriptions per product (``Cloud Build``, ``Cloud Functions (1st
    gen)``; absent when none)."""


class UnusedException(_Part):
    """An exception of the policy config that matched no finding in this run."""

    policy: str
    """The policy (rule ID) it is under."""
    resource: str
    """The resource it names, normalised (:mod:`pushguard.policy.resources`)."""
    expires: str
    """Its last day (``YYYY-MM-DD``)."""
    why: str
    """Why it matched nothing: the policy is disabled, its rule needs ``--stacks``, the audit
    does not match URNs or trigger paths, the subscription is Google-managed, it is not in the
    export, or it has no finding of the policy (the risk may be gone)."""


class ExceptionUse(_Part):
    """The policy config's exceptions against this run's findings."""

    given: int = 0
    """Exceptions in the policy config (every policy's)."""
    matched: int = 0
    """Of ``given``, those that name a finding of this run (active or expired)."""
    unused: list[UnusedException] = []
    """The others, each with why (sorted by policy and resource)."""


class AuditSettings(_Part):
    """The options the audit ran with."""

    include_dry_run_perimeters: bool
    """Dry-run (``spec``) service perimeters counted as well as enforced (``status``) ones."""
    max_line_bytes: int
    """Longer lines (in bytes) were quarantined."""
    levels: dict[str, EnforcementLevel]
    """The enforcement level per rule ID, after the policy config (written as its value:
    ``mandatory``, ``advisory``, ``disabled``)."""
    policy_settings: dict[str, dict[str, str]] = {}
    """Per rule ID, a digest of each setting of the policy config that changes what the rule
    finds in the same export (:func:`pushguard.audit.baseline_scope.settings_digests`; rules
    and settings left at their defaults are absent): a ``--baseline`` computed with other
    settings is refused."""


class BaselineCounts(_Part):
    """This run against ``--baseline`` (violations and excepted findings)."""

    path: str
    """The baseline folder as given."""
    new: int
    """Findings whose ``finding_id`` the baseline does not have."""
    existing: int
    """Findings the baseline has too."""
    resolved: int
    """The baseline's findings that are gone and whose asset and rule this run evaluated
    (listed in ``resolved.jsonl``)."""
    level_raised: int = 0
    """Findings the baseline has at a lower enforcement level (``change`` ``level-raised``: an
    advisory finding now mandatory); not counted in ``existing``."""
    level_lowered: int = 0
    """Findings the baseline has at a higher level (``change`` ``level-lowered``)."""
    not_rechecked: int = 0
    """The baseline's findings that are gone but were not rechecked: their rule or asset was not
    evaluated in this run (listed in ``not_rechecked.jsonl`` with their ``reason``); never
    counted as resolved."""
    not_rechecked_by_reason: dict[str, int] = {}
    """``not_rechecked`` per reason (:data:`pushguard.audit.baseline.REASONS`)."""
    mismatch_accepted: list[str] = []
    """What differs between the baseline and this run (organisations, policy settings), compared
    anyway because ``--accept-baseline-mismatch`` was given; empty otherwise."""
    unverified: list[str] = []
    """What the baseline does not record (written by an older pushguard), so it could not be
    compared: ``organizations``, ``policy settings``."""


class Coverage(_Part):
    """What the run could see (:mod:`pushguard.audit.coverage`)."""

    nothing_read: bool = False
    """No line of the export could be read as an asset (every line quarantined or blank): the
    run saw nothing, and exits 2 unless ``--fail-on-blind never``."""
    read: dict[str, int] = {}
    """Per part of the export (:data:`pushguard.audit.coverage.INPUTS`): subscriptions, IAM
    policies and service perimeters read (the newest copy of each)."""
    missing: dict[str, list[str]] = {}
    """Per part the run read none of, the enabled rules that needed it (absent when none): those
    rules could not fire, whatever their findings say."""
    organizations: list[str] = []
    """The organisations (``organizations/N``) the assets read belong to, sorted: the export's
    scope, compared with a ``--baseline``'s."""


class ProjectManagement(_Part):
    """One project's push subscriptions in the export, by whether a given stack manages them."""

    managed: int
    unmanaged: int


class StackSnapshot(_Part):
    """A stack given by more than one state file (:mod:`pushguard.audit.stack_snapshots`): the
    file used and those ignored."""

    stack: str
    """The stack, as findings name it (``NAME (LOCATION)`` when another stack has its name)."""
    used: str
    """The state file used: the latest ``manifest.time``."""
    manifest_time: str | None = None
    """That file's ``manifest.time`` (UTC); null when it has none."""
    ignored: list[str] = []
    """Its older snapshots and the copies of its states, not read for the rules."""


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
    claimed_by_several_stacks: int = 0
    """Subscriptions that more than one given stack manages (each a ``push-state-drift``
    finding with ``fields`` ``claimed``): every deployment of one resets the others' settings."""
    snapshots: list[StackSnapshot] = []
    """The stacks given by more than one state file: which was used, which ignored."""


class ExportRead(_Part):
    """One export read (:mod:`pushguard.audit.snapshots`): a file, the folder of a
    per-asset-type export, or a BigQuery table."""

    export: str
    """The export (``file:`` left out)."""
    read_time: str | None = None
    """Its read time (UTC, RFC 3339), from ``--snapshot`` or a partitioned table; null when not
    given: it cannot be ordered against another export of the same assets."""
    scopes: dict[str, str | None] = {}
    """Per content it holds (``resource``, ``iam``, ``perimeter``), its scope: the deepest
    ancestor of all its assets of that content (the parent it was exported from); null when
    one has no ``ancestors``: it then covers only the assets it lists."""


class SnapshotCounts(_Part):
    """Which exports were read, and what the newer ones say of the older ones' assets."""

    exports: list[ExportRead] = []
    """Every export read, by name."""
    not_in_newest_export_by_type: dict[str, int] = {}
    """Per asset type, the assets an older export lists and the newest export covering them
    does not (deleted since, an IAM policy removed, a perimeter deleted): not evaluated (absent
    when none)."""


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
    """Per asset type the audit reads, the copies of an asset (a resource, an IAM policy, a
    service perimeter) not evaluated because another copy of the same asset is: the copy of the
    newest snapshot that covers it (:mod:`pushguard.audit.snapshots`), one of several identical
    copies (a file given twice); absent when none."""
    snapshots: SnapshotCounts = SnapshotCounts()
    """The exports read, each with its read time and scope, and the assets gone from the newest
    export that covers them."""
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
    coverage: Coverage = Coverage()
    """What the run could see: the parts of the export read, those a rule needed and the run did
    not read, and the organisations."""
    exceptions: ExceptionUse = ExceptionUse()
    """The policy config's exceptions: how many, how many matched a finding, and the unused
    ones with why."""
    guardrails: GuardrailsSummary | None = None
    """With ``--guardrails DIR``: per custom constraint, the subscriptions it would deny
    (:mod:`pushguard.audit.guardrails`); absent without it."""

    def to_json(self) -> str:
        """The text of ``summary.json``: keys sorted, indented by 2, ending in a newline."""
        data = self.model_dump(mode="json")
        for optional in ("baseline", "guardrails"):
            if data.get(optional) is None:
                data.pop(optional, None)
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
