"""A push subscription authenticates its requests with an OIDC token.

Without authentication the endpoint cannot tell Pub/Sub's requests from anyone else's: the push
endpoint is public, so anyone who learns its URL can inject messages. With a push-auth service
account set, Pub/Sub signs an OIDC JWT per request that the receiver verifies
(https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions). Cloud Run and Cloud
Functions then enforce IAM (``run.invoker``) on the token, so the service need not be public.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when a push subscription has no push-auth service account."""
    if not facts.is_push():
        return
    if facts.has_push_auth_account():
        return
    if "push_auth_account" in facts.unknown:
        yield Result.unknown("the push-auth service account is not known yet", "push_auth_account")
        return
    yield Result.violation(
        "The push subscription sends unauthenticated requests: no push-auth service account "
        "(pushConfig.oidcToken.serviceAccountEmail) is set.",
        "push_auth_account",
    )


RULE = Rule(
    id="push-auth-oidc",
    title="Push delivery is authenticated with an OIDC token",
    default_level=EnforcementLevel.MANDATORY,
    severity="high",
    remediation=(
        "Set pushConfig.oidcToken.serviceAccountEmail to a push-auth service account in the "
        "subscription's project (pushguard's PushSubscription does this), and verify the token "
        "at the endpoint."
    ),
    check=check,
)
