"""The preview's result model: what a run found (:class:`PreviewResult` with its
:class:`Violation` list and the pack's :class:`PolicyMeta`), the error that ends a run
(:class:`PreviewError`), and the stack resource's type and URN that reports name."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pushguard.preview.engine import STACK_TYPE, ResourceRecord
from pushguard.preview.isolation import ProgramOutput
from pushguard.preview.project import PulumiProject

LEVEL_ORDER = {"mandatory": 0, "advisory": 1}
"""Report order of enforcement levels."""


def stack_urn(project: str, stack: str) -> str:
    """The URN of the stack resource (``pulumi:pulumi:Stack`` named ``PROJECT-STACK``), the
    parent of the program's top-level resources."""
    return f"urn:pulumi:{stack}::{project}::{STACK_TYPE}::{project}-{stack}"


class PreviewError(RuntimeError):
    """The preview could not run (bad usage, missing config, the program raised or ended, the
    pack failed); the message says which and why. The CLI exits 2 and still writes the report.

    ``result`` holds what was known when it failed (project, stack, the program's output,
    findings of a ``PushSubscription`` refusal), or ``None`` before the project was read;
    ``debug`` is the program's traceback, shown with ``--debug``.
    """

    def __init__(self, message: str, result: PreviewResult | None = None, debug: str = "") -> None:
        super().__init__(message)
        self.result = result
        self.debug = debug


def sort_violations(violations: list[Violation]) -> list[Violation]:
    """Violations in report order: by level (mandatory first), policy, URN and message."""
    return sorted(
        violations, key=lambda v: (LEVEL_ORDER.get(v.level, 9), v.policy, v.urn, v.message)
    )


@dataclass(frozen=True)
class StateOrigin:
    """Where an analysed stack's state came from (``pushguard analyze``): the state file,
    the line of the stack resource in it (findings about the whole stack point there), the
    deployment schema version and the Pulumi version that wrote it."""

    path: Path
    stack_line: int = 1
    version: int = 3
    pulumi_version: str = ""


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


@dataclass(frozen=True)
class NotChecked:
    """A policy that could not check a subscription for want of configuration: ``reason`` says
    why and which policy-config setting lets it decide (the pack's ``not_applicable`` answer)."""

    policy: str
    urn: str
    reason: str


@dataclass
class PreviewResult:
    """Everything a report needs: the plan, the violations, notes and where the time went."""

    project: PulumiProject
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
    outputs: dict[str, Any] = field(default_factory=dict)
    """The stack outputs (``pulumi.export``), wire form."""
    call_stacks: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    """URN -> the program's frames when the resource was constructed (``(path, line)``,
    outermost first), for findings on resources made in a helper or a loop."""
    program_output: ProgramOutput = field(default_factory=ProgramOutput)
    """What the program printed to its stdout and stderr."""
    state: StateOrigin | None = None
    """Set when the result is of existing state (``pushguard analyze``) rather than of a
    preview: resources are the stack's as deployed, located in the state file."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds: ``program``; ``pack_start`` and ``configure`` (in the pack's thread, alongside
    the program); ``analyze`` (the wait for ``Analyze`` answers after the program);
    ``analyze_stack``; ``total``."""

    @property
    def mandatory(self) -> list[Violation]:
        """The violations that fail the preview."""
        return [v for v in self.violations if v.level == "mandatory"]

    @property
    def exit_code(self) -> int:
        """0 when nothing mandatory is violated, else 1."""
        return 1 if self.mandatory else 0

    @property
    def pack_seconds(self) -> float:
        """Time the preview waited on the policy pack: after the program finished, for its
        start, configuration and the ``Analyze`` answers still out (they run alongside the
        program), then ``AnalyzeStack``."""
        return self.timings.get("analyze", 0.0) + self.timings.get("analyze_stack", 0.0)
