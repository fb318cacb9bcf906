"""What a policy could not decide, and why: the "not checked" notes (answered by the server as
``not_applicable`` entries) with the setting that enables each check, and which undecided results
are due to values a preview does not know."""

from __future__ import annotations

from pushguard.crossguard.facts import Resolution
from pushguard.crossguard.not_checked import NotChecked
from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.routes import SubscriptionType
from pushguard.crossguard.scope import current_scope
from pushguard.crossguard.secrets import scrub
from pushguard.rules import Result

_NUMBERS = "add the project to the top-level projectNumbers map (project ID to number)"
ENABLES: dict[str, str] = {
    "project_number": _NUMBERS,
    "dead_letter": _NUMBERS,
    "token_creator_grant": "add the project to the top-level projectNumbers map, or list it in "
    "tokenCreatorGrantedProjects under {policy}",
    "in_service_perimeter": "set perimeterProjects under {policy} and add the project to the "
    "top-level projectNumbers map",
    "push_auth_account": "set defaultProject under {policy} (the project of subscriptions that "
    "name none) and add both projects to the top-level projectNumbers map, or name the push-auth "
    "account by its e-mail",
    "target": "declare the service behind the endpoint in this stack to check its grants (or "
    "audit its project: pushguard audit reads the service's whole IAM policy)",
}
"""Per result field, what lets a rule decide (``{policy}``: the policy's name; settings go in
the policy config)."""


def not_checked(policy: str, sub: WireResource, result: Result, cause: str = "") -> None:
    """Note that ``policy`` could not check ``sub`` for want of configuration (answered by the
    server as a ``not_applicable`` entry on the subscription); ``cause``: what configuration is
    missing beyond the result's own message (:func:`_unconfigured`)."""
    notes = current_scope().notes
    if notes is None:
        return
    hint = ENABLES.get(result.field or "", "").format(policy=policy)
    if sub.no_default_project and "defaultProject" in hint:
        # defaultProject does not stand in for a project its placement chooses (routes/kcc.py)
        hint = _NUMBERS
    enable = f"; {hint}" if hint else ""
    because = f" ({cause})" if cause else ""
    reason = scrub(f"{sub.name}: not checked: {result.message}{because}{enable}")
    notes.not_checked.append(NotChecked(policy, sub.report_urn, reason))


GRANT_RULES = frozenset(
    {
        "push-agent-token-creator",
        "push-invoker-binding",
        "push-dead-letter-iam",
        "push-sa-broad-grants",
        "push-target-requires-auth",
    }
)
"""The rules that read IAM grants declared in the stack: not checked at all (neither passed nor
violated) while the stack grants through a resource pushguard does not map."""


def grants_not_read(policy: str, sub: WireResource, unread: list[str]) -> None:
    notes = current_scope().notes
    if notes is None:
        return
    reason = scrub(
        f"{sub.name}: not checked: the stack grants roles through {', '.join(unread)}, which "
        "pushguard does not map, so the grants this rule looks for are not all known"
    )
    notes.not_checked.append(NotChecked(policy, sub.report_urn, reason))


def not_mapped(policy: str, resource: WireResource, known: SubscriptionType) -> None:
    """Note that ``policy`` did not check ``resource``, whose type creates a Pub/Sub
    subscription pushguard does not map (:data:`pushguard.crossguard.routes.SUBSCRIPTION_TYPES`)."""
    notes = current_scope().notes
    if notes is None:
        return
    reason = scrub(
        f"{resource.name}: not checked: {resource.type} creates a Pub/Sub subscription that "
        f"pushguard does not map ({known.why})"
    )
    notes.not_checked.append(NotChecked(policy, resource.urn, reason))


_RESTS_ON: dict[str, tuple[str, ...]] = {
    "push_endpoint": ("push_endpoint",),
    "push_auth_account": (
        "push_auth_account",
        "push_auth_account_grants",
        "push_auth_account_bindings",
        "project_id",
    ),
    "target": ("invoker_target", "push_endpoint", "push_auth_account"),
    "dead_letter": ("dead_letter_topic_grants", "subscription_grants", "project_id"),
    "project_number": ("project_id",),
    "in_service_perimeter": ("in_service_perimeter", "project_id"),
    "exactly_once_delivery": ("exactly_once_delivery",),
}
"""Per result field (:attr:`~pushguard.rules.Result.field`), the facts whose values decide it:
a result is undecided at preview only when one of these is unknown, and its reasons are theirs.
A field not listed rests on every fact."""


def facts_for(field: str | None) -> tuple[str, ...] | None:
    """The facts a result field rests on, ``None`` when not listed (every fact)."""
    return _RESTS_ON.get(field) if field else None


def undecided_at_preview(resolution: Resolution, field: str | None) -> bool:
    """An undecided result is due to preview when a fact it rests on is unknown, or has a
    reason (a value not known yet); otherwise the fact was simply not collected (not checked).
    A fact unknown for want of configuration (:attr:`Resolution.unconfigured`, no project
    anywhere) is not due to preview."""
    facts = facts_for(field)
    unknown = resolution.facts.unknown - resolution.unconfigured.keys()
    if facts is None:
        return bool(unknown) or bool(resolution.reasons)
    return any(f in unknown or f in resolution.reasons for f in facts)


def unconfigured(resolution: Resolution, field: str | None) -> str:
    """Why the facts a not-checked result rests on are missing from the configuration (each
    distinct reason once), or ``""``."""
    facts = facts_for(field)
    missing = resolution.unconfigured
    keys = sorted(missing) if facts is None else [f for f in facts if f in missing]
    return "; ".join(dict.fromkeys(missing[f] for f in keys))


def why_unknown(resolution: Resolution, field: str | None) -> str:
    """Why the facts a result rests on are unknown: their reasons, each distinct one once."""
    facts = facts_for(field)
    reasons = resolution.reasons
    keys = sorted(reasons) if facts is None else [f for f in facts if f in reasons]
    chosen = list(dict.fromkeys(reasons[f] for f in keys))
    return "; ".join(chosen) if chosen else "a value is not known until the stack is deployed"
