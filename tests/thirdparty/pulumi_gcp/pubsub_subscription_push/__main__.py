# Third-party example, not written by pushguard: the "Pubsub Subscription Push" example in the
# docstring of gcp.pubsub.Subscription in pulumi-gcp 10.2.0 (pulumi_gcp/pubsub/subscription.py),
# Apache-2.0, Pulumi Corporation. Copied unchanged below this header; see ../README.md.

import pulumi
import pulumi_gcp as gcp

example = gcp.pubsub.Topic("example", name="example-topic")
example_subscription = gcp.pubsub.Subscription("example",
    name="example-subscription",
    topic=example.id,
    ack_deadline_seconds=20,
    labels={
        "foo": "bar",
    },
    push_config={
        "push_endpoint": "https://example.com/push",
        "attributes": {
            "x-goog-version": "v1",
        },
    })
