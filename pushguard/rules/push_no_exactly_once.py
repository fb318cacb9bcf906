"""A push subscription does not request exactly-once delivery.

Exactly-once delivery is a pull-only feature: push and export subscriptions do not support it
(https://cloud.google.com/pubsub/docs/exactly-once-delivery). Requesting it on a push subscription
is rejected or silently gives at-least-once delivery, and a receiver written for exactly-once
semantics then processes duplicates. Push receivers must be idempotent.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when exactly-once delivery is enabled on a push subscription."""
    if not facts.is_push():
        return
    if "exactly_once_delivery" in facts.unknown:
        yield Result.unknown(
            "whether exactly-once delivery is enabled is not known yet", "exactly_once_delivery"
        )
    elif facts.exactly_once_delivery:
        yield Result.violation(
            "Exactly-once delivery is enabled, but push subscriptions do not support it.",
            "exactly_once_delivery",
        )


RULE = Rule(
    id="push-no-exactly-once",
    title="Push subscriptions do not request exactly-once delivery",
    default_level=EnforcementLevel.MANDATORY,
    severity="medium",
    remediation=(
        "Remove enableExactlyOnceDelivery from the push subscription and make the receiver "
        "idempotent (deduplicate on messageId), or use a pull subscription."
    ),
    check=check,
)
