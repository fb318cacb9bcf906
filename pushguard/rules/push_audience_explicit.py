"""The push token's audience is set explicitly.

When no audience is configured, Pub/Sub uses the push endpoint URL as the token's ``aud`` claim
(https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions). The receiver must check
``aud`` against the same value, and an implicit one silently changes with the endpoint (a new
query parameter, a path change, a migration to a custom domain), breaking verification or tempting
the receiver to skip the check. An explicit audience is a stable contract between the subscription
and its receiver.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when an authenticated push subscription has no explicit audience."""
    if not facts.is_push() or not facts.has_push_auth_account():
        return
    if "audience" in facts.unknown:
        return  # a value that is not known yet is still an explicit value
    if not (facts.audience or "").strip():
        yield Result.violation(
            "The push token's audience is not set, so it defaults to the endpoint URL and changes "
            "whenever the endpoint does.",
            "audience",
        )


RULE = Rule(
    id="push-audience-explicit",
    title="The push token's audience is explicit",
    default_level=EnforcementLevel.ADVISORY,
    severity="low",
    remediation=(
        "Set pushConfig.oidcToken.audience to a stable value (pushguard's PushSubscription sets "
        "it) and check the same value in the receiver."
    ),
    check=check,
)
