# Third-party example, not written by pushguard: the "Pubsub Subscription Dead Letter" example in the
# docstring of gcp.pubsub.Subscription in pulumi-gcp 10.2.0 (pulumi_gcp/pubsub/subscription.py),
# Apache-2.0, Pulumi Corporation. Copied unchanged below this header; see ../README.md.

import pulumi
import pulumi_gcp as gcp

example = gcp.pubsub.Topic("example", name="example-topic")
example_dead_letter = gcp.pubsub.Topic("example_dead_letter", name="example-topic-dead-letter")
example_subscription = gcp.pubsub.Subscription("example",
    name="example-subscription",
    topic=example.id,
    dead_letter_policy={
        "dead_letter_topic": example_dead_letter.id,
        "max_delivery_attempts": 10,
    })
