"""Example team program: push subscriptions declared from typed stack config.

The stack config (``Pulumi.<stack>.yaml``) lists subscriptions; pydantic checks its shape so a typo
is an error naming the key, and pushguard's ``PushSubscription`` does the wiring and the rule checks.
``legacySubscriptions`` are wired by hand with raw pulumi-gcp resources (``legacy.py``), as a team
that bypasses the component would: the ``legacy`` stack shows what the policy pack catches then.
"""

from __future__ import annotations

from typing import Literal

import pulumi
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from legacy import RawSubscription, declare
from pushguard.components import PushSubscription, PushSubscriptionArgs


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


class Target(_Config):
    kind: Literal["cloud-run", "cloud-function-v1", "cloud-function-v2", "external"]
    name: str | None = None
    location: str | None = None


class DeadLetter(_Config):
    topic: str | None = None
    max_delivery_attempts: int = 5


class Retry(_Config):
    minimum_backoff: str | None = None
    maximum_backoff: str | None = None


class Subscription(_Config):
    name: str
    topic: str
    endpoint: str
    target: Target
    audience: str | None = None
    dead_letter: DeadLetter | None = None
    retry: Retry | None = None
    ack_deadline_seconds: int | None = None
    no_wrapper: bool = False
    write_metadata: bool = False
    paused: bool = False


class StackConfig(_Config):
    project_number: str | None = None
    in_service_perimeter: bool = False
    deployers: list[str] = Field(default_factory=list)
    subscriptions: list[Subscription] = Field(default_factory=list)
    legacy_subscriptions: list[RawSubscription] = Field(default_factory=list)


def component_args(stack: StackConfig, sub: Subscription) -> PushSubscriptionArgs:
    """The component's args for one configured subscription (unset options left out)."""
    args: PushSubscriptionArgs = {
        "topic": sub.topic,
        "push_endpoint": sub.endpoint,
        "target": sub.target.model_dump(exclude_none=True),  # type: ignore[typeddict-item]
        "deployers": stack.deployers,
        "in_service_perimeter": stack.in_service_perimeter,
        "no_wrapper": sub.no_wrapper,
        "write_metadata": sub.write_metadata,
        "paused": sub.paused,
    }
    if stack.project_number:
        args["project_number"] = stack.project_number
    if sub.audience:
        args["audience"] = sub.audience
    if sub.ack_deadline_seconds is not None:
        args["ack_deadline_seconds"] = sub.ack_deadline_seconds
    if sub.dead_letter:
        args["dead_letter"] = sub.dead_letter.model_dump(exclude_none=True)  # type: ignore[typeddict-item]
    if sub.retry:
        args["retry_policy"] = sub.retry.model_dump(exclude_none=True)  # type: ignore[typeddict-item]
    return args


config = pulumi.Config()
stack = StackConfig.model_validate(
    {
        "projectNumber": config.get("projectNumber"),
        "inServicePerimeter": config.get_bool("inServicePerimeter") or False,
        "deployers": config.get_object("deployers") or [],
        "subscriptions": config.get_object("subscriptions") or [],
        "legacySubscriptions": config.get_object("legacySubscriptions") or [],
    }
)
for sub in stack.subscriptions:
    component = PushSubscription(sub.name, component_args(stack, sub))
    pulumi.export(f"{sub.name}.subscription", component.subscription_path)
    pulumi.export(f"{sub.name}.pushAuthServiceAccount", component.push_auth_service_account_email)
    pulumi.export(f"{sub.name}.audience", component.audience)
for raw in stack.legacy_subscriptions:
    pulumi.export(f"{raw.name}.subscription", declare(raw).id)
