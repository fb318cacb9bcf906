"""Subscriptions a team wired by hand with raw pulumi-gcp resources, bypassing the component.

This is what the ``legacy`` stack declares on purpose, to show what pushguard's policy pack
catches where the component cannot help: nothing here is validated before it is registered.
"""

from __future__ import annotations

import pulumi_gcp as gcp
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class RawSubscription(BaseModel):
    """One hand-wired push subscription: the account is created here (``accountId``) or named
    (``serviceAccountEmail``); ``project`` overrides the stack's ``gcp:project``."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    name: str
    topic: str
    endpoint: str
    account_id: str | None = None
    service_account_email: str | None = None
    project: str | None = None


def declare(raw: RawSubscription) -> gcp.pubsub.Subscription:
    """The topic, the push-auth account (when created here) and the subscription."""
    topic = gcp.pubsub.Topic(raw.topic, name=raw.topic, project=raw.project)
    email = raw.service_account_email
    if raw.account_id:
        account = gcp.serviceaccount.Account(
            f"{raw.name}-pusher", account_id=raw.account_id, project=raw.project
        )
        email = account.email
    return gcp.pubsub.Subscription(
        raw.name,
        name=raw.name,
        project=raw.project,
        topic=topic.id,
        push_config=gcp.pubsub.SubscriptionPushConfigArgs(
            push_endpoint=raw.endpoint,
            oidc_token=gcp.pubsub.SubscriptionPushConfigOidcTokenArgs(
                service_account_email=email, audience=raw.endpoint
            ),
        ),
    )
