"""The preview's result model: what a run found (:class:`PreviewResult` with its
:class:`Violation` list and the pack's :class:`PolicyMeta`), the error that ends a run
(:class:`PreviewError`), and the stack resource's type and URN that reports name."""

from __future__ import annotations

from dataclasses import dataclass, field

from pushguard.preview.engine import ResourceRecord
from pushguard.preview.project import PulumiProject

STACK_TYPE = "pulumi:pulumi:Stack"


def stack_urn(project: str, stack: str) -> str:
    """The URN of the stack resource (``pulumi:pulumi:Stack`` named ``PROJECT-STACK``), the
    parent of the program's top-level resources."""
    return f"urn:pulumi:{stack}::{project}::{STACK_TYPE}::{project}-{stack}"


class PreviewError(RuntimeError):
    """The preview could not run (bad usage, missing config, the program raised, the pack
    failed); the message says which and why. The CLI exits 2."""


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
