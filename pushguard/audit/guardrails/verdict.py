"""One subscription against every evaluated constraint: denied, undecided, an error, allowed,
or out of every policy's scope.

A ``DENY`` constraint refuses a request when its condition is true, an ``ALLOW`` constraint
when it is false (``actionType``, and "ACTION: the action to take if the condition is met":
https://cloud.google.com/pubsub/docs/custom-constraints). A new constraint does not touch
existing resources; it is checked on the methods it names (``CREATE``; ``UPDATE``), so what the
audit lists is what the next such request on the subscription would meet.

Statuses of a row (:data:`STATUSES`): ``denied`` (the enforced spec applies, or else the dry
run's: its violation would be logged), ``unknown`` (the condition denies it, but whether a
policy applies depends on tags or on ancestors the export does not hold), ``error`` (the
condition errs on it: reported, never a pass). A Google-managed subscription
(:mod:`pushguard.rules.google_managed`) that a condition denies is listed like any other, named
as such: a constraint that refuses it breaks the product that made it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pushguard.audit.guardrails.condition import cel_resource, evaluate
from pushguard.audit.guardrails.model import DRY_RUN, ENFORCED, Constraint, Guardrails
from pushguard.audit.guardrails.scope import OFF, ON, TAG, Place, Scope, scope
from pushguard.rules.google_managed import recognise

DENIED, UNKNOWN, ERROR = "denied", "unknown", "error"
STATUSES = (DENIED, UNKNOWN, ERROR)
ALLOWED, OUT_OF_SCOPE = "allowed", "out-of-scope"
"""The two outcomes that are only counted, never listed."""


@dataclass(frozen=True)
class Subscription:
    """What the verdict reads of one subscription: its asset name, place in the hierarchy,
    typed ``resource.data`` (as Arrow's ``to_pylist`` gives it) and, for the Google-managed
    check, its endpoint, OIDC account and topic."""

    asset_name: str
    place: Place
    data: Mapping[str, Any] | None


def _managed(sub: Subscription) -> str | None:
    """The product that made ``sub`` (``Cloud Build``...), or ``None``."""
    data = sub.data or {}
    push = data.get("pushConfig") or {}
    token = push.get("oidcToken") or {}
    _, found, tail = sub.asset_name.rpartition("/subscriptions/")
    managed = recognise(
        tail if found else None,
        push.get("pushEndpoint"),
        topic=data.get("topic"),
        account=(token.get("serviceAccountEmail") or "").lower() or None,
        project=sub.place.project_id,
    )
    return managed.product if managed else None


def _deciding(enforced: Scope, dry: Scope) -> tuple[str, Scope]:
    """The mode and scope a row reports: the enforced spec when it applies, else the dry run
    when it applies, else the undecided one (enforced first)."""
    if enforced.state == ON:
        return ENFORCED, enforced
    if dry.state == ON:
        return DRY_RUN, dry
    return (ENFORCED, enforced) if enforced.state != OFF else (DRY_RUN, dry)


def _reason(constraint: Constraint, mode: str, deciding: Scope, enforced: Scope) -> str:
    methods = " or ".join(constraint.methods)
    if deciding.state == ON:
        what = "refused" if mode == ENFORCED else "logged as a dry-run violation"
        text = f"its next {methods} would be {what} (existing subscriptions are not touched)"
        if mode == DRY_RUN and enforced.state == TAG:
            text += "; the enforced spec applies only where its tag condition holds"
        return text
    if deciding.state == TAG:
        where = "except where" if deciding.exempt else "only where"
        return (
            f"the condition denies it; the {mode} spec of {deciding.policy} applies {where} "
            f"the tag condition {' or '.join(deciding.tags)} holds, and the export holds no tags"
        )
    return (
        f"the condition denies it; whether {deciding.policy} applies depends on the "
        "subscription's folders and organisation, which the export does not give"
    )


def verdicts(
    sub: Subscription, guardrails: Guardrails
) -> list[tuple[Constraint, str, str, Scope, str | None, str | None]]:
    """Per evaluated constraint: ``(constraint, status, mode, deciding scope, reason, error)``
    with ``status`` one of :data:`STATUSES`, :data:`ALLOWED` or :data:`OUT_OF_SCOPE`."""
    results: list[tuple[Constraint, str, str, Scope, str | None, str | None]] = []
    resource: dict[str, Any] | None = None
    for constraint in guardrails.constraints:
        enforced = scope(guardrails, constraint, sub.place, ENFORCED)
        dry = scope(guardrails, constraint, sub.place, DRY_RUN)
        mode, deciding = _deciding(enforced, dry)
        if deciding.state == OFF:
            results.append((constraint, OUT_OF_SCOPE, mode, deciding, None, None))
            continue
        resource = resource if resource is not None else cel_resource(sub.asset_name, sub.data)
        value = evaluate(constraint.condition, resource)
        if isinstance(value, str):
            results.append((constraint, ERROR, mode, deciding, None, value))
            continue
        if value == (constraint.action == "ALLOW"):  # DENY and true, ALLOW and false deny
            results.append((constraint, ALLOWED, mode, deciding, None, None))
            continue
        status = DENIED if deciding.state == ON else UNKNOWN
        reason = _reason(constraint, mode, deciding, enforced)
        results.append((constraint, status, mode, deciding, reason, None))
    return results


def rows_of(row: Mapping[str, Any], guardrails: Guardrails) -> list[dict[str, Any]]:
    """The rows of one subscription ``row`` (``asset_name``, ``project_id``,
    ``project_number``, ``ancestors``, ``data``:
    :func:`pushguard.audit.guardrails.spark.subscriptions`) as
    :data:`~pushguard.audit.guardrails.spark.GUARDRAILS_DDL` without ``count``: every verdict,
    each with ``status``; the caller lists the :data:`STATUSES` and counts the others."""
    asset_name, project_id = row["asset_name"], row["project_id"] or None
    project_number = row["project_number"] or None
    place = Place(project_id, project_number, list(row["ancestors"] or ()))
    sub = Subscription(asset_name, place, row["data"])
    managed: str | None = None
    checked = False
    rows = []
    for constraint, status, mode, deciding, why, error in verdicts(sub, guardrails):
        if status in STATUSES and not checked:
            managed, checked = _managed(sub), True
        reason = why
        if status in STATUSES and managed:
            said = f"Google-managed ({managed}): refusing it breaks {managed}"
            reason = f"{said}; {why}" if why else said
        rows.append(
            {
                "constraint": constraint.short,
                "asset_name": asset_name,
                "project_id": project_id,
                "project_number": project_number,
                "status": status,
                "mode": mode,
                "policy": deciding.policy,
                "action": constraint.action,
                "methods": list(constraint.methods),
                "google_managed": managed if status in STATUSES else None,
                "reason": reason,
                "error": error,
            }
        )
    return rows
