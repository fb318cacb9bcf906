"""What ``--guardrails DIR`` holds, once read and checked: plain frozen data (picklable, so the
Spark executors get it with the evaluation function).

The shapes are those of the files ``gcloud`` takes: a custom constraint
(``gcloud org-policies set-custom-constraint``; the ``CustomConstraint`` resource,
https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/organizations.customConstraints)
and a policy (``gcloud org-policies set-policy``; the ``Policy`` resource with ``spec`` and
``dryRunSpec``, each a ``PolicySpec`` of ``rules``, ``reset`` and ``inheritFromParent``,
https://cloud.google.com/policy-intelligence/docs/reference/policysimulator/rest/Shared.Types/Policy).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SUBSCRIPTION = "pubsub.googleapis.com/Subscription"
"""The resource type whose constraints the audit evaluates."""

ENFORCED = "enforced"
DRY_RUN = "dry-run"
MODES = (ENFORCED, DRY_RUN)
"""A policy's two specs: ``spec`` (enforced: the request is refused) and ``dryRunSpec``
(violations are audit-logged, nothing is refused:
https://cloud.google.com/resource-manager/docs/organization-policy/dry-run-policy)."""


@dataclass(frozen=True)
class Rule:
    """A boolean policy rule: ``enforce``, and the tag ``condition`` (a CEL expression of
    ``resource.matchTag`` and its kin) under which it applies, ``None`` for the unconditional
    rule."""

    enforce: bool
    condition: str | None = None


@dataclass(frozen=True)
class Spec:
    """A ``PolicySpec`` of a boolean (custom) constraint: ``reset`` (back to the constraint's
    default: not enforced) or its ``rules`` (exactly one unconditional)."""

    reset: bool = False
    rules: tuple[Rule, ...] = ()

    @property
    def unconditional(self) -> bool:
        """The unconditional rule's ``enforce`` (``False`` under ``reset``)."""
        return next((r.enforce for r in self.rules if r.condition is None), False)

    @property
    def tag_conditions(self) -> tuple[str, ...]:
        """The conditions of the conditional rules (their ``enforce`` is the opposite of the
        unconditional rule's)."""
        return tuple(r.condition for r in self.rules if r.condition is not None)


@dataclass(frozen=True)
class Policy:
    """One policy file: its ``name`` (``projects/P|folders/F|organizations/O/policies/custom.X``),
    the ``node`` it is attached to (``projects/P``, ``folders/F``, ``organizations/O``), the
    ``constraint`` it configures (``custom.X``) and its two specs (``None`` when not set)."""

    name: str
    file: str
    node: str
    constraint: str
    spec: Spec | None = None
    dry_run: Spec | None = None

    def spec_of(self, mode: str) -> Spec | None:
        """``spec`` for :data:`ENFORCED`, ``dry_run`` for :data:`DRY_RUN`."""
        return self.spec if mode == ENFORCED else self.dry_run


@dataclass(frozen=True)
class Constraint:
    """One custom constraint file. ``short`` is ``custom.X``, ``organization``
    ``organizations/O`` (a custom constraint applies in its organisation only)."""

    name: str
    short: str
    organization: str
    file: str
    resource_types: tuple[str, ...]
    methods: tuple[str, ...]
    condition: str
    action: str
    display_name: str = ""
    description: str = ""


@dataclass(frozen=True)
class NotEvaluated:
    """A constraint the audit does not evaluate, and why (no policy uses it, it is not about
    subscriptions, its condition reads a field the audit does not read)."""

    constraint: Constraint
    reason: str


@dataclass(frozen=True)
class Guardrails:
    """``DIR`` as read: the ``constraints`` evaluated (sorted by ``short``), those
    ``not_evaluated`` with why, every ``policy`` (sorted by name) and the SCC module files
    found (``scc_files``; not evaluated)."""

    folder: str
    constraints: tuple[Constraint, ...] = ()
    not_evaluated: tuple[NotEvaluated, ...] = ()
    policies: tuple[Policy, ...] = ()
    scc_files: tuple[str, ...] = field(default_factory=tuple)

    def policies_of(self, short: str) -> tuple[Policy, ...]:
        """The policies that configure the constraint ``short``."""
        return tuple(p for p in self.policies if p.constraint == short)
