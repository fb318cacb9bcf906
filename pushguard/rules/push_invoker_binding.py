"""The push-auth service account may invoke the service behind the endpoint.

Cloud Run checks ``run.routes.invoke`` on every authenticated push: the push-auth account needs
``roles/run.invoker`` on the service (2nd-gen Cloud Functions are Cloud Run services underneath);
1st-gen Cloud Functions need ``roles/cloudfunctions.invoker``
(https://cloud.google.com/run/docs/triggering/pubsub-push, https://cloud.google.com/functions/docs/securing/authenticating).
Grants on the service's project or ancestors count. A service that grants the invoker role to
``allUsers`` accepts the push too, but then does not need the token at all: prefer the binding.
Endpoints outside Google Cloud (``external``) have no IAM to check.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.accounts import member
from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts, TargetKind
from pushguard.rules.iam import INVOKER, find_grants


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when the push-auth account holds no invoker role on the target."""
    if not facts.is_push():
        return
    if not facts.push_auth_account:
        if "push_auth_account" in facts.unknown and not facts.push_auth_account_project:
            yield Result.unknown("the push-auth service account is not known", "push_auth_account")
        return
    target = facts.invoker_target
    if target is None:
        yield Result.unknown("the service behind the push endpoint is not known", "target")
        return
    if target.kind is TargetKind.EXTERNAL:
        return
    if target.grants is None:
        yield Result.unknown("the target's IAM grants were not collected", "target")
        return
    role = INVOKER[target.kind]
    if find_grants(target.grants, member(facts.push_auth_account), role.accepted).granted:
        return
    if any(find_grants(target.grants, "allUsers", role.accepted).unconditional):
        return
    yield Result.violation(
        f"The push-auth service account {facts.push_auth_account} has no {role.granted} on "
        f"{target.name or 'the target service'}, so pushes will be rejected with 403.",
        "target",
        target=target.name,
        push_auth_account=facts.push_auth_account,
    )


RULE = Rule(
    id="push-invoker-binding",
    title="The push-auth account may invoke the target service",
    default_level=EnforcementLevel.ADVISORY,
    severity="medium",
    remediation=(
        "Grant roles/run.invoker on the Cloud Run service (or 2nd-gen function), or "
        "roles/cloudfunctions.invoker on a 1st-gen function, to serviceAccount:PUSH_AUTH_EMAIL "
        "(pushguard's PushSubscription does with its `target` input)."
    ),
    check=check,
)
