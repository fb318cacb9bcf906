"""The rule set: one module per rule, each a pure function over :class:`SubscriptionFacts`.

Every enforcement point (component, CrossGuard pack, offline preview, Spark audit) runs these same
rules through :func:`evaluate`. The rule IDs are a public contract: policy-group configs and CI
refer to them.

Adding a rule: write ``push_<name>.py`` whose ``RULE`` has the ID ``push-<name>`` (its docstring is
the rationale), import it here and put its ``RULE`` in :data:`RULES` (mandatory rules first, a new
rule at the end of its level's group: the order is a public contract too, reports follow it), and
write its pass and fail cases in ``tests/rules/cases/push_<name>.py``. tests/rules/test_registry.py
finds the ``push_*.py`` modules on disk and fails, naming the module, when one is not in
:data:`RULES`, is listed under another ID, or is listed but missing; tests/rules/test_case_files.py
does the same for the case files.
"""

from __future__ import annotations

from collections.abc import Mapping

from pushguard.rules import (
    push_agent_token_creator,
    push_audience_explicit,
    push_auth_oidc,
    push_dead_letter_iam,
    push_endpoint_https,
    push_invoker_binding,
    push_no_exactly_once,
    push_no_query_token,
    push_sa_broad_grants,
    push_sa_same_project,
    push_shared_iam_binding,
    push_state_drift,
    push_target_requires_auth,
    push_unmanaged,
    push_vpcsc_default_url,
)
from pushguard.rules.base import EnforcementLevel, Finding, Result, Rule, Status, evaluate_rules
from pushguard.rules.facts import (
    HeldGrant,
    IamBinding,
    IamGrant,
    InvokerTarget,
    SubscriptionFacts,
)

RULES: tuple[Rule, ...] = (
    push_endpoint_https.RULE,
    push_auth_oidc.RULE,
    push_sa_same_project.RULE,
    push_vpcsc_default_url.RULE,
    push_no_exactly_once.RULE,
    push_agent_token_creator.RULE,
    push_invoker_binding.RULE,
    push_dead_letter_iam.RULE,
    push_no_query_token.RULE,
    push_audience_explicit.RULE,
    push_sa_broad_grants.RULE,
    push_shared_iam_binding.RULE,
    push_unmanaged.RULE,
    push_state_drift.RULE,
    push_target_requires_auth.RULE,
)
"""All rules, mandatory ones first, in a stable order (kept explicit; a test checks it against
the rule modules on disk)."""

RULES_BY_ID: Mapping[str, Rule] = {rule.id: rule for rule in RULES}


def get_rule(rule_id: str) -> Rule:
    """The rule with this ID.

    Raises:
        KeyError: naming the unknown ID and the known ones.
    """
    try:
        return RULES_BY_ID[rule_id]
    except KeyError:
        raise KeyError(f"unknown rule {rule_id!r}; known rules: {', '.join(RULES_BY_ID)}") from None


def evaluate(
    facts: SubscriptionFacts, levels: Mapping[str, EnforcementLevel] | None = None
) -> list[Finding]:
    """All rules over one subscription (see :func:`pushguard.rules.base.evaluate_rules`)."""
    return evaluate_rules(RULES, facts, levels)


__all__ = [
    "RULES",
    "RULES_BY_ID",
    "EnforcementLevel",
    "Finding",
    "HeldGrant",
    "IamBinding",
    "IamGrant",
    "InvokerTarget",
    "Result",
    "Rule",
    "Status",
    "SubscriptionFacts",
    "evaluate",
    "get_rule",
]
