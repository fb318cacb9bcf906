"""Pulumi components: :class:`PushSubscription`, :class:`OrgGuardrails` and their args."""

from pushguard.components.args import (
    DeadLetterArgs,
    GuardrailMethods,
    OrgGuardrailsArgs,
    PushSubscriptionArgs,
    PushTargetArgs,
    RetryPolicyArgs,
    TokenCreatorGrant,
)
from pushguard.components.org_guardrails import OrgGuardrails, OrgGuardrailsInputError
from pushguard.components.push_subscription import TYPE_TOKEN, PushSubscription
from pushguard.components.spec import PushSubscriptionInputError
from pushguard.rules.facts import TargetKind

__all__ = [
    "TYPE_TOKEN",
    "DeadLetterArgs",
    "GuardrailMethods",
    "OrgGuardrails",
    "OrgGuardrailsArgs",
    "OrgGuardrailsInputError",
    "PushSubscription",
    "PushSubscriptionArgs",
    "PushSubscriptionInputError",
    "PushTargetArgs",
    "RetryPolicyArgs",
    "TargetKind",
    "TokenCreatorGrant",
]
