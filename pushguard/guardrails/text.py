"""The words of each constraint and module: what it denies or reports, which rule it is, what it
leaves to the pack and the audit, and its exceptions (with the fact that Google cannot end them).

Every description names the rule ID (issue 38: "Each constraint and module names its rule ID in its
description") and stays within the documented 2,000 characters
(:mod:`pushguard.guardrails.limits`, checked by the compiler).
"""

from __future__ import annotations

from pushguard.guardrails.model import PolicyFile, Status
from pushguard.guardrails.registry import Entry
from pushguard.policy.settings import PackSettings
from pushguard.rules import EnforcementLevel, Rule


def _exceptions(settings: PackSettings) -> str:
    """The active exceptions, each with its expiry, and that Google cannot end them."""
    listed = [f"{e.resource} until {e.expires}" for e in settings.exceptions]
    if not listed:
        return ""
    return (
        " Excepted: " + "; ".join(listed) + ". Google cannot end an exception on its date: "
        "regenerate and re-apply these files when one expires (pushguard guardrails refuses an "
        "expired one)."
    )


def _scope(entry: Entry, policies: list[PolicyFile]) -> str:
    if not entry.perimeter:
        return ""
    if policies and policies[0].tag_condition:
        return f" Applies where {policies[0].tag_condition}."
    names = ", ".join(p.name.split("/policies/")[0] for p in policies)
    return f" Applies in the perimeter projects: {names}." if names else ""


def constraint_description(
    rule: Rule,
    level: EnforcementLevel,
    entry: Entry,
    settings: PackSettings,
    policies: list[PolicyFile],
) -> str:
    """The constraint's ``description``: the rule ID and level, the rule's title, what is left
    to the pack and the audit (for a ``partial`` rule), the scope, the exceptions, the docs."""
    left = f" Partial: {entry.reason}." if entry.status is Status.PARTIAL else ""
    never = (
        " Subscriptions Google creates (Cloud Build gcb-*, 1st-gen Cloud Functions gcf-*) are "
        "never denied."
    )
    return (
        f"pushguard rule {rule.id} ({level.value}): {rule.title}. Denies what the rule reports "
        f"from the subscription alone.{left}{_scope(entry, policies)}{never}"
        f"{_exceptions(settings)} {rule.url}"
    )


def module_description(
    rule: Rule, level: EnforcementLevel, entry: Entry, settings: PackSettings
) -> str:
    """The SHA module's ``description``: the rule ID, level and title, what is left out."""
    left = f" Partial: {entry.reason}." if entry.status is Status.PARTIAL else ""
    return (
        f"pushguard rule {rule.id} ({level.value}): {rule.title}.{left}"
        f"{_exceptions(settings)} {rule.url}"
    )
