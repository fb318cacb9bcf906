"""The push-auth service account belongs to the subscription's project.

Pub/Sub requires the service account used for push authentication to be in the same project as the
subscription (https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication). An
account from another project either fails at create time or, where it slips through, lets one
project mint tokens that another project's endpoints trust: a confused-deputy risk across team
boundaries. The email must also be a service account's: a user or group email is not a push-auth
service account.

Eventarc triggers (the pack, the preview and analyze): a trigger's ``serviceAccount``
"represents the identity of the trigger"; for Cloud Run destinations Eventarc generates the
identity tokens it invokes the service with for that account
(https://cloud.google.com/eventarc/docs/reference/rest/v1/projects.locations.triggers), the role
the push-auth account has for a subscription. Google does not require it to be in the trigger's
project: by default an account cannot be attached to a resource of another project, and the
cross-project case needs the ``iam.disableCrossProjectServiceAccountUsage`` constraint lifted in
the account's project and the token-creator role for the trigger project's Eventarc service agent
on the account (https://cloud.google.com/eventarc/docs/use-cross-project-service-account).
pushguard's rule holds a trigger to the same boundary as a subscription, whatever its destination:
a trigger's account of another project is that project's identity acting for this one, the
confused deputy the rule is about. An organisation that centralises its accounts in one project
records each such trigger as an exception (policy config ``exceptions``, by URN or
``projects/P/locations/L/triggers/T``) or lowers the rule's level. A trigger that names no
account has none to compare.
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
    return f"the {facts.account_noun()} is not known yet"


def _short(facts: SubscriptionFacts) -> str:
    return "trigger's service account" if facts.is_trigger else "push-auth account"


def _label(names: ProjectNames) -> str:
    """A project as a message names it: ``ID (NUMBER)`` where both are known."""
    if names.id and names.number:
        return f"{names.id} ({names.number})"
    return _name(names)


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
                f"the {facts.account_noun()} is not known yet", "push_auth_account"
            )
        return  # push-auth-oidc reports a missing account (a trigger may name none)
    account = _account_project(facts)
    if isinstance(account, str):
        yield Result.unknown(account, "push_auth_account")
        return
    if account is None:
        yield Result.violation(
            f"{facts.push_auth_account} is not a service account email; the {_short(facts)} "
            f"must be a service account in the {facts.noun()}'s project.",
            "push_auth_account",
            push_auth_account=facts.push_auth_account or "",
        )
        return
    ours = ProjectNames(facts.project_id, facts.project_number)
    same = ours.same_as(account)
    if same and not (ours.id and account.id) and facts.project_number_claimed:
        same = None  # "the same number" on the program's word alone: not decided
    if same is None:
        kind = "ID" if account.id else "number"
        yield Result.unknown(
            f"the {facts.noun()}'s project {kind} is not known, so the {_short(facts)}'s project "
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
            f"The {facts.account_noun()}{who} belongs to project {_label(account)}, not to the "
            f"{facts.noun()}'s project {_label(ours)}.",
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
        "PushSubscription does) and use its email in pushConfig.oidcToken.serviceAccountEmail "
        "(for an Eventarc trigger: an account of the trigger's project in serviceAccount)."
    ),
    check=check,
    kinds=("subscription", "eventarc-trigger"),
)
