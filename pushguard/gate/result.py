"""The result model of a gate run over one stack, whoever produced the resources (a program
under the mock runtime, ``pushguard preview``; a state file, ``pushguard analyze``):

- :class:`ResourceRecord`: one resource in wire form, as the engine registered it or the state
  holds it;
- :class:`StackResult`: the resources, the pack's :class:`Violation` list and
  :class:`PolicyMeta`, what was :class:`NotChecked`, notes and timings, and the stack's
  :class:`Origin` (which tells reports where a finding belongs);
- :class:`RunError`: a run that could not finish (exit 2), with what was known when it stopped.

:class:`~pushguard.crossguard.not_checked.NotChecked` is the pack's own type, decoded from its
``not_applicable`` answers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pushguard.crossguard.google_managed_note import GoogleManagedEntry
from pushguard.crossguard.not_checked import NotChecked
from pushguard.gate.unknowns import UnknownOffline
from pushguard.policy.exceptions import Excepted

LEVEL_ORDER = {"mandatory": 0, "advisory": 1}
"""Report order of enforcement levels."""

Source = tuple[str, int]
"""A constructor call's file path and line."""


@dataclass(frozen=True)
class ResourceRecord:
    """One resource as the engine registered it (preview) or the state holds it (analyze).

    ``inputs`` and ``outputs`` are the wire form (camelCase keys, unknown values as Pulumi's
    unknown sentinel, secrets as ``{"4dabf18193072939515e22adb298388d":
    "1b47061264138c4ac30d75fd1eb44270", ...}`` envelopes); ``dependencies`` are URNs;
    ``provider`` is the provider reference ``PROVIDER_URN::PROVIDER_ID`` (``""`` for a
    component); ``source`` is the file path and line of the constructor call when the SDK sent
    one, or of the resource in the state file.
    """

    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    provider: str
    inputs: Mapping[str, Any]
    dependencies: tuple[str, ...]
    property_dependencies: Mapping[str, tuple[str, ...]]
    replace_on_changes: tuple[str, ...] = ()
    delete_before_replace: bool = False
    protect: bool = False
    ignore_changes: tuple[str, ...] = ()
    version: str = ""
    """The provider package version the SDK asked for (``RegisterResourceRequest.version``; it
    names the default provider of a resource without ``provider``), ``""`` when not sent."""
    outputs: Mapping[str, Any] = field(default_factory=dict)
    source: Source | None = None
    import_id: str = ""
    """The ID of the existing cloud resource the engine imports (``RegisterResourceRequest.
    importId``, the ``import`` resource option), ``""`` when the resource is not imported."""

    @property
    def imported(self) -> bool:
        """Whether the engine imports this resource: a custom resource with an import ID
        (``step_generator.go``: ``goal.Custom && goal.ID != ""`` with nothing in the state)."""
        return self.custom and bool(self.import_id)


@dataclass(frozen=True)
class ProgramOutput:
    """What the program wrote to its stdout and stderr (UTF-8, undecodable bytes replaced;
    ``truncated`` when either went past the preview's output limit). Empty for analyze."""

    stdout: str = ""
    stderr: str = ""
    truncated: bool = False


class Origin(ABC):
    """Where a stack's resources were read from. Reports ask it where a finding about the whole
    stack belongs, which source lines count as the team's code, and how to word the run.

    Implemented by the preview (a program and its stack config) and by analyze (a state file);
    the reports know no more than this interface."""

    tool: ClassVar[str]
    """The reporting tool's name (SARIF's automation category starts with it)."""
    operation: ClassVar[str]
    """The resources' operation as Pulumi names it: ``create`` (preview) or ``same`` (state)."""
    run_name: ClassVar[str]
    """``Preview`` or ``Analysis``, for the summary line."""

    @abstractmethod
    def project_file(self, relative: str) -> Path:
        """The file a project-relative path (``path`` of a ``path:line`` place) names."""

    @abstractmethod
    def code_folder(self) -> Path | None:
        """The folder whose constructor calls are the team's code (``None``: none are)."""

    @abstractmethod
    def stack_location(self) -> tuple[Path, int]:
        """Where findings about the whole stack point: a file and a 1-based line."""

    @abstractmethod
    def heading(self, stack: str, pack: str) -> str:
        """The text report's first line (rich markup; ``stack`` and ``pack`` already escaped)."""

    @abstractmethod
    def resources_phrase(self, count: int) -> str:
        """``count`` resources in the summary line's words (``3 to create``)."""

    def report_fields(self, relative: Callable[[Path], str]) -> dict[str, Any]:
        """Extra top-level fields of the JSON report; ``relative`` maps a path to the report's
        form of it. None by default."""
        return {}


class RunError(RuntimeError):
    """A gate run could not finish (bad usage, missing config, a failed program or pack); the
    message says which and why. The CLI exits 2 and still writes the report.

    ``result`` holds what was known when it failed (``None`` before the stack was read);
    ``debug`` is a traceback, shown with ``--debug``.
    """

    def __init__(self, message: str, result: StackResult | None = None, debug: str = "") -> None:
        super().__init__(message)
        self.result = result
        self.debug = debug


def sort_violations(violations: list[Violation]) -> list[Violation]:
    """Violations in report order: by level (mandatory first), policy, URN and message."""
    return sorted(
        violations, key=lambda v: (LEVEL_ORDER.get(v.level, 9), v.policy, v.urn, v.message)
    )


@dataclass(frozen=True)
class PolicyMeta:
    """What the pack says about one policy (``GetAnalyzerInfo``)."""

    name: str
    display_name: str
    description: str
    level: str
    severity: str
    remediation: str
    url: str


@dataclass(frozen=True)
class Violation:
    """One diagnostic from the pack. ``level`` is ``mandatory`` or ``advisory`` (a stack
    policy's ``remediate`` counts as mandatory, as in the CLI); ``urn`` is ``""`` for a
    diagnostic about the whole stack."""

    policy: str
    level: str
    urn: str
    message: str
    remediation: str = ""
    where: str | None = None
    """``path:line`` (relative to the project folder) when the finding has no registered
    resource to point at: a ``PushSubscription`` that refused its inputs."""
    finding_id: str = ""
    """The finding's stable ID (:func:`pushguard.rules.identity.finding_id`) as the pack wrote
    it (:mod:`pushguard.crossguard.finding_note`); ``""`` for a pack that writes none."""
    excepted: Excepted | None = None
    """The policy config's exception for this finding: ``active`` (reported, not counted) or
    ``expired`` (counted again); ``None`` when none names the resource."""
    change: str = ""
    """Against a baseline (``analyze --baseline``): ``new`` or ``existing``; ``""`` without one."""

    @property
    def counts(self) -> bool:
        """False while an active exception holds: the finding does not count for the exit
        code."""
        return not (self.excepted is not None and self.excepted.active)


@dataclass
class StackResult:
    """Everything a report needs about one stack: the resources, the violations, what was not
    checked, notes and where the time went."""

    origin: Origin
    project: str
    stack: str
    resources: list[ResourceRecord]
    violations: list[Violation]
    pack_name: str = ""
    pack_version: str = ""
    policies: dict[str, PolicyMeta] = field(default_factory=dict)
    logs: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    not_checked: list[NotChecked] = field(default_factory=list)
    """What was not checked and how to enable it, by policy and URN."""
    google_managed: list[GoogleManagedEntry] = field(default_factory=list)
    """The subscriptions Google creates and configures for its own products, which no policy
    judged (:mod:`pushguard.rules.google_managed`), each once, by URN."""
    outputs: dict[str, Any] = field(default_factory=dict)
    """The stack outputs (``pulumi.export``), wire form."""
    call_stacks: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    """URN -> the program's frames when the resource was constructed (``(path, line)``,
    outermost first), for findings on resources made in a helper or a loop."""
    program_output: ProgramOutput = field(default_factory=ProgramOutput)
    """What the program printed to its stdout and stderr."""
    organization: str = ""
    """The Pulumi organisation the stack belongs to, when its origin says (a backend checkpoint's
    ``organization/project/stack``); part of SARIF run IDs and finding fingerprints, so one
    project and stack name in two organisations are two stacks."""
    unjudged: list[Violation] = field(default_factory=list)
    """Findings (among :attr:`violations`) that say a policy could not decide a value which
    nothing decides later, where the policy config asked for that to fail
    (``unknownAtPreview: enforce``): ``pushguard analyze`` of a state whose value is encrypted.
    They make the run incomplete: exit 2, naming each (:attr:`exit_code`)."""
    unknown_offline: list[UnknownOffline] = field(default_factory=list)
    """What the real ``pulumi preview`` would know and this run did not (a stack reference's
    outputs, a data source's result, an ESC environment's values), in report order
    (:mod:`pushguard.gate.unknowns`)."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds: ``program``; ``pack_start`` and ``configure`` (in the pack's thread, alongside
    the program); ``analyze`` (the wait for ``Analyze`` answers after the program);
    ``analyze_stack``; ``total``."""

    @property
    def mandatory(self) -> list[Violation]:
        """The violations that fail the run (mandatory, not under an active exception)."""
        return [v for v in self.violations if v.level == "mandatory" and v.counts]

    @property
    def exit_code(self) -> int:
        """2 when a policy could not judge what it was asked to (:attr:`unjudged`), else 1
        when something mandatory is violated, else 0."""
        if self.unjudged:
            return 2
        return 1 if self.mandatory else 0

    @property
    def pack_seconds(self) -> float:
        """Time the run waited on the policy pack: after the program finished, for its start,
        configuration and the ``Analyze`` answers still out (they run alongside the program),
        then ``AnalyzeStack``."""
        return self.timings.get("analyze", 0.0) + self.timings.get("analyze_stack", 0.0)
