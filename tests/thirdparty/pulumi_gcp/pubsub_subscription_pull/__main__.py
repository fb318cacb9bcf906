# Third-party example, not written by pushguard: the "Pubsub Subscription Pull" example in the
# docstring of gcp.pubsub.Subscription in pulumi-gcp 10.2.0 (pulumi_gcp/pubsub/subscription.py),
# Apache-2.0, Pulumi Corporation. Copied unchanged below this header; see ../README.md.

import pulumi
import pulumi_gcp as gcp

example = gcp.pubsub.Topic("example", name="example-topic")
example_subscription = gcp.pubsub.Subscription("example",
    name="example-subscription",
    topic=example.id,
    labels={
        "foo": "bar",
    },
    message_retention_duration="1200s",
    retain_acked_messages=True,
    ack_deadline_seconds=20,
    expiration_policy={
        "ttl": "300000.5s",
    },
    retry_policy={
        "minimum_backoff": "10s",
    },
    enable_message_ordering=False)
