"""With a dead-letter topic, the Pub/Sub service agent can forward undeliverable messages.

To move a message to the dead-letter topic, the project's Pub/Sub service agent needs
``roles/pubsub.publisher`` on the dead-letter topic and ``roles/pubsub.subscriber`` on the
subscription (https://cloud.google.com/pubsub/docs/handling-failures#grant_forwarding_permissions).
Without them Pub/Sub keeps redelivering the message and the dead-letter policy does nothing.
Grants on the project or its ancestors count.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import IamGrant, SubscriptionFacts
from pushguard.rules.iam import PUBLISHER, SUBSCRIBER, find_grants

_NEEDS: tuple[tuple[str, str, frozenset[str]], ...] = (
    (
        "dead_letter_topic_grants",
        "roles/pubsub.publisher on the dead-letter topic",
        PUBLISHER.accepted,
    ),
    ("subscription_grants", "roles/pubsub.subscriber on the subscription", SUBSCRIBER.accepted),
)


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """One violation per forwarding permission the service agent lacks."""
    if not facts.is_push() or not facts.dead_letter_topic:
        return
    agent = facts.service_agent_member()
    if agent is None:
        yield Result.unknown(
            "the project number is not known, so the Pub/Sub service agent cannot be named",
            "dead_letter",
        )
        return
    for attribute, what, roles in _NEEDS:
        grants: tuple[IamGrant, ...] | None = getattr(facts, attribute)
        if grants is None:
            yield Result.unknown(f"grants for {what} were not collected", "dead_letter")
        elif not find_grants(grants, agent, roles).granted:
            yield Result.violation(
                f"The Pub/Sub service agent lacks {what}, so undeliverable messages cannot be "
                "dead-lettered.",
                "dead_letter",
                service_agent=agent,
                dead_letter_topic=facts.dead_letter_topic,
            )


RULE = Rule(
    id="push-dead-letter-iam",
    title="The service agent can forward to the dead-letter topic",
    default_level=EnforcementLevel.ADVISORY,
    severity="medium",
    remediation=(
        "Grant the Pub/Sub service agent roles/pubsub.publisher on the dead-letter topic and "
        "roles/pubsub.subscriber on the subscription (pushguard's PushSubscription does)."
    ),
    check=check,
)
