"""``push-dead-letter-iam``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from pushguard.rules import IamGrant
from tests.crossguard.wire import AGENT, subscription
from tests.rules.cases._build import NUMBERS, FactCase, WireCase, dlq_grants, dlq_sub, fact, wire

RULE_ID = "push-dead-letter-iam"

FACT_CASES: list[FactCase] = [
    fact(
        RULE_ID,
        "pass",
        "both grants",
        dead_letter_topic="projects/acme-orders/topics/dlq",
        dead_letter_topic_grants=(IamGrant(role="roles/pubsub.publisher", member=AGENT),),
        subscription_grants=(IamGrant(role="roles/pubsub.subscriber", member=AGENT),),
    ),
    fact(RULE_ID, "pass", "no dead letter"),
    fact(
        RULE_ID,
        "fail",
        "no publisher",
        dead_letter_topic="projects/acme-orders/topics/dlq",
        dead_letter_topic_grants=(),
        subscription_grants=(IamGrant(role="roles/pubsub.subscriber", member=AGENT),),
    ),
    fact(
        RULE_ID,
        "fail",
        "no subscriber",
        dead_letter_topic="projects/acme-orders/topics/dlq",
        dead_letter_topic_grants=(IamGrant(role="roles/pubsub.publisher", member=AGENT),),
        subscription_grants=(),
    ),
]

WIRE_CASES: list[WireCase] = [
    wire(RULE_ID, "pass", "no dead-letter topic", subscription(), **NUMBERS),
    wire(RULE_ID, "pass", "both grants", dlq_sub(), *dlq_grants(), **NUMBERS),
    wire(RULE_ID, "fail", "no grants", dlq_sub(), **NUMBERS),
    wire(RULE_ID, "fail", "publisher only", dlq_sub(), dlq_grants()[0], **NUMBERS),
]
