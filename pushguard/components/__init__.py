"""Pulumi components: :class:`PushSubscription` and its args."""

from pushguard.components.args import (
    DeadLetterArgs,
    PushSubscriptionArgs,
    PushTargetArgs,
    RetryPolicyArgs,
    TokenCreatorGrant,
)
from pushguard.components.push_subscription import TYPE_TOKEN, PushSubscription
from pushguard.components.spec import PushSubscriptionInputError
from pushguard.rules.facts import TargetKind

__all__ = [
    "TYPE_TOKEN",
    "DeadLetterArgs",
    "PushSubscription",
    "PushSubscriptionArgs",
    "PushSubscriptionInputError",
    "PushTargetArgs",
    "RetryPolicyArgs",
    "TargetKind",
    "TokenCreatorGrant",
]
