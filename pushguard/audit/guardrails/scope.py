"""Which policy decides whether a constraint applies to a subscription, as Organization Policy
evaluates the hierarchy.

From "Understanding hierarchy evaluation"
(https://cloud.google.com/resource-manager/docs/organization-policy/understanding-hierarchy):
a resource without a policy of its own "inherit[s] from the lowest ancestor with a set policy";
"if no policy is set in the ancestor hierarchy, the constraint's default behavior is
enforced", which for a custom constraint is to enforce nothing ("Creating a custom constraint
itself does NOT apply any policy enforcement":
https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/organizations.customConstraints).
A boolean policy replaces what is above it (no merging: ``inheritFromParent`` is for list
constraints); ``reset`` "restores the constraint_default enforcement behavior" at that node; of
its rules, one applies unconditionally and "policy rules with conditions that are true for a
target resource take precedence" (``PolicySpec.rules``). A subscription's nodes are its
project, folders and organisation (CAI's ``ancestors``, nearest first); a policy names a
project by its number or ID (``Policy.name``).

``spec`` and ``dryRunSpec`` are resolved each on its own, the nearest policy that sets that
spec deciding: the pages read do not spell out how a dry-run spec inherits, and this is the
reading the audit takes (docs/audit.md says so).

Tags: a rule's condition tests tags, which the export does not hold; "conditional organization
policies can't evaluate tags on a resource as it is created, only on tags that are inherited
from parent resources" (https://cloud.google.com/resource-manager/docs/organization-policy/tags-organization-policy).
Whether a conditional rule applies is therefore :data:`TAG` (undecided), never presumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pushguard.audit.guardrails.model import Constraint, Guardrails, Policy

ON = "on"
OFF = "off"
TAG = "tag"
HIERARCHY = "hierarchy"
"""Whether a spec enforces the constraint on a subscription: :data:`ON`, :data:`OFF`,
:data:`TAG` (it depends on tags the export does not hold), :data:`HIERARCHY` (it depends on
folders or an organisation the export does not name for the subscription)."""


@dataclass(frozen=True)
class Scope:
    """Whether one spec (enforced or dry run) of a constraint applies to a subscription:
    ``state`` (:data:`ON`...), the ``policy`` that decides (``None``: none does), and for
    :data:`TAG` the tag conditions of its rules and whether they turn enforcement on
    (``exempt`` false: enforced only where a tag condition holds) or off (``exempt`` true:
    enforced except there)."""

    state: str
    policy: str | None = None
    tags: tuple[str, ...] = ()
    exempt: bool = False


@dataclass(frozen=True)
class Place:
    """Where a subscription sits: its project's ID and number (either may be unknown) and its
    ``ancestors`` (``projects/N``, ``folders/F``..., ``organizations/O``; empty when unknown)."""

    project_id: str | None
    project_number: str | None
    ancestors: Sequence[str]

    def nodes(self) -> list[set[str]]:
        """The nodes a policy can be attached to, nearest first, each as the names a policy
        may give it (a project: ``projects/ID`` and ``projects/NUMBER``)."""
        project = {f"projects/{p}" for p in (self.project_id, self.project_number) if p}
        nodes = [project] if project else []
        for ancestor in self.ancestors:
            if ancestor.startswith("projects/"):
                nodes[0:1] = [(nodes[0] if nodes else set()) | {ancestor}]
            else:
                nodes.append({ancestor})
        return nodes


def _decide(policy: Policy, mode: str) -> Scope | None:
    spec = policy.spec_of(mode)
    if spec is None:
        return None
    if spec.reset:
        return Scope(OFF, policy.name)
    if spec.tag_conditions:
        return Scope(TAG, policy.name, spec.tag_conditions, exempt=spec.unconditional)
    return Scope(ON if spec.unconditional else OFF, policy.name)


def scope(guardrails: Guardrails, constraint: Constraint, place: Place, mode: str) -> Scope:
    """Whether ``mode``'s spec (:data:`~pushguard.audit.guardrails.model.ENFORCED` or
    ``DRY_RUN``) of ``constraint``'s policies applies to a subscription at ``place``: the
    nearest node's policy that sets that spec decides. A subscription of another organisation
    than the constraint's is :data:`OFF`; with no organisation in its ancestors, a policy on a
    folder or organisation makes it :data:`HIERARCHY` unless its project's policy decides."""
    policies = {p.node: p for p in guardrails.policies_of(constraint.short)}
    organizations = [a for a in place.ancestors if a.startswith("organizations/")]
    if organizations and constraint.organization not in organizations:
        return Scope(OFF)
    for names in place.nodes():
        for name in sorted(names):
            decided = _decide(policies[name], mode) if name in policies else None
            if decided is not None:
                return decided
    above = [
        p.name
        for node, p in sorted(policies.items())
        if not node.startswith("projects/") and p.spec_of(mode) is not None
    ]
    if not organizations and above:
        return Scope(HIERARCHY, above[0])
    return Scope(OFF)
