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

from pushguard.rules.accounts import AccountProject, service_account_project
from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts


def _account_project(facts: SubscriptionFacts) -> AccountProject | str | None:
    """The account's project, ``None`` if the email is not a service account's, or a string
    explaining what is not known."""
    if facts.push_auth_account:
        return service_account_project(facts.push_auth_account)
    if facts.push_auth_account_project:
        value = facts.push_auth_account_project
        return AccountProject(project_number=value) if value.isdigit() else AccountProject(value)
    return "the push-auth service account is not known yet"


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when the push-auth account's project differs from the subscription's."""
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
    ours: str | None
    if account.project_id is not None:
        ours, theirs, kind = facts.project_id, account.project_id, "ID"
    else:
        ours, theirs, kind = facts.project_number, account.project_number or "", "number"
    if not ours:
        yield Result.unknown(
            f"the subscription's project {kind} is not known, so the push-auth account's project "
            f"({theirs}) cannot be compared",
            "push_auth_account",
        )
        return
    if ours.lower() != theirs.lower():
        who = f" {facts.push_auth_account}" if facts.push_auth_account else ""
        yield Result.violation(
            f"The push-auth service account{who} belongs to project {theirs}, not to the "
            f"subscription's project {ours}.",
            "push_auth_account",
            push_auth_account=facts.push_auth_account or "",
            account_project=theirs,
            subscription_project=ours,
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
