"""The push-auth service account belongs to the subscription's project.

Pub/Sub requires the service account used for push authentication to be in the same project as the
subscription (https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication). An
account from another project either fails at create time or, where it slips through, lets one
project mint tokens that another project's endpoints trust: a confused-deputy risk across team
boundaries. The email must also be a service account's: a user or group email is not a push-auth
service account.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.accounts import service_account_project
from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import ProjectNames, SubscriptionFacts


def _account_project(facts: SubscriptionFacts) -> ProjectNames | str | None:
    """The account's project by the names known, ``None`` if the email is not a service
    account's, or a string explaining what is not known."""
    if facts.push_auth_account and service_account_project(facts.push_auth_account) is None:
        return None
    if facts.push_auth_account_project_names is not None:
        return facts.push_auth_account_project_names
    if facts.push_auth_account:
        owner = service_account_project(facts.push_auth_account)
        return ProjectNames(owner.project_id, owner.project_number) if owner else None
    if facts.push_auth_account_project:
        value = facts.push_auth_account_project
        return ProjectNames(number=value) if value.isdigit() else ProjectNames(id=value)
    return "the push-auth service account is not known yet"


def _name(names: ProjectNames) -> str:
    return names.id or names.number or "?"


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when the push-auth account's project differs from the subscription's, compared
    by project ID where both are known, else by project number (``NUMBER-compute@...`` and the
    other number forms of :func:`~pushguard.rules.accounts.service_account_project`)."""
    if not facts.is_push():
        return
    if not facts.has_push_auth_account():
        if "push_auth_account" in facts.unknown:
            yield Result.unknown(
                "the push-auth service account is not known yet", "push_auth_account"
            )
        return  # push-auth-oidc reports a missing account
    account = _account_project(facts)
    if isinstance(account, str):
        yield Result.unknown(account, "push_auth_account")
        return
    if account is None:
        yield Result.violation(
            f"{facts.push_auth_account} is not a service account email; the push-auth account "
            "must be a service account in the subscription's project.",
            "push_auth_account",
            push_auth_account=facts.push_auth_account or "",
        )
        return
    ours = ProjectNames(facts.project_id, facts.project_number)
    same = ours.same_as(account)
    if same is None:
        kind = "ID" if account.id else "number"
        yield Result.unknown(
            f"the subscription's project {kind} is not known, so the push-auth account's project "
            f"({_name(account)}) cannot be compared",
            "push_auth_account",
        )
        return
    if not same:
        who = f" {facts.push_auth_account}" if facts.push_auth_account else ""
        theirs, mine = (
            (account.id, ours.id) if account.id and ours.id else (account.number, ours.number)
        )
        yield Result.violation(
            f"The push-auth service account{who} belongs to project {theirs}, not to the "
            f"subscription's project {mine}.",
            "push_auth_account",
            push_auth_account=facts.push_auth_account or "",
            account_project=theirs or "",
            subscription_project=mine or "",
        )


RULE = Rule(
    id="push-sa-same-project",
    title="The push-auth service account is in the subscription's project",
    default_level=EnforcementLevel.MANDATORY,
    severity="high",
    remediation=(
        "Create the push-auth service account in the subscription's project (pushguard's "
        "PushSubscription does) and use its email in pushConfig.oidcToken.serviceAccountEmail."
    ),
    check=check,
)
