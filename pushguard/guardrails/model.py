"""What the guardrails compiler produces: plain, frozen, typed values (no YAML, no files).

:func:`pushguard.guardrails.compile_guardrails` returns a :class:`Guardrails`; the command writes
it with :mod:`pushguard.guardrails.files`, and the ``OrgGuardrails`` component can register the
same values as resources (``gcp.orgpolicy.CustomConstraint``, ``gcp.orgpolicy.Policy``,
``gcp.securitycenter.ManagementOrganizationSecurityHealthAnalyticsCustomModule``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

Target = Literal["constraint", "sha"]
"""The two targets: an Organization Policy custom constraint, a Security Health Analytics custom
module."""

TARGETS: tuple[Target, ...] = ("constraint", "sha")


class Status(StrEnum):
    """How much of a rule a target's expression decides (issue 38, "Coverage, stated never
    presumed")."""

    COMPILED = "compiled"
    """The expression decides exactly what the rule decides from the subscription resource."""
    PARTIAL = "partial"
    """The expression decides part of it; what is left out, and why, is in the reason. It never
    flags what the rule allows."""
    NOT_COMPILED = "not-compiled"
    """No expression: the reason says why (IAM bindings, another resource, a disabled rule...)."""


class GuardrailError(ValueError):
    """The input cannot be compiled: ``field`` names what is wrong (a policy-config path, an
    option, a generated field) and the message says what is allowed. The command exits 2 with it
    before any file is written."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True)
class Coverage:
    """One rule on one target: its :class:`Status` and why (empty only for ``compiled``)."""

    rule_id: str
    target: Target
    status: Status
    reason: str = ""


@dataclass(frozen=True)
class Constraint:
    """An Organization Policy custom constraint (the ``gcloud org-policies
    set-custom-constraint`` file's fields). ``name`` is the full resource name
    (``organizations/ORG/customConstraints/custom.X``); ``constraint_id`` is ``custom.X``."""

    rule_id: str
    name: str
    constraint_id: str
    resource_types: tuple[str, ...]
    method_types: tuple[str, ...]
    condition: str
    action_type: str
    display_name: str
    description: str


@dataclass(frozen=True)
class PolicyFile:
    """One organization policy that attaches a constraint (``gcloud org-policies set-policy``).

    ``name``: ``organizations/ORG/policies/custom.X`` or ``projects/P/policies/custom.X``;
    ``enforced``: a ``spec`` (the constraint denies) instead of a ``dryRunSpec`` (violations are
    only logged); ``tag_condition``: the rule's condition on a tag (``resource.matchTag(...)``),
    ``None`` for an unconditional rule; ``file_stem``: the file's name without ``.yaml``."""

    rule_id: str
    name: str
    constraint_id: str
    enforced: bool
    tag_condition: str | None
    file_stem: str


@dataclass(frozen=True)
class ShaModule:
    """A Security Health Analytics custom module's custom config (the file ``gcloud scc
    custom-modules sha create --custom-config-from-file`` takes) and its display name."""

    rule_id: str
    display_name: str
    expression: str
    resource_types: tuple[str, ...]
    severity: str
    description: str
    recommendation: str


@dataclass(frozen=True)
class Guardrails:
    """Everything compiled from one policy config for one organisation: the constraints, the
    policies that attach them, the SHA modules, and the coverage of every rule on every target
    (in ``RULES`` order, constraint before sha)."""

    organization: str
    constraints: tuple[Constraint, ...]
    policies: tuple[PolicyFile, ...]
    modules: tuple[ShaModule, ...]
    coverage: tuple[Coverage, ...]
