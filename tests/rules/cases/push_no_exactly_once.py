"""``push-no-exactly-once``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from tests.crossguard.wire import subscription
from tests.rules.cases._build import FactCase, WireCase, fact, wire

RULE_ID = "push-no-exactly-once"

FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "off"),
    fact(RULE_ID, "pass", "pull with exactly once", push_endpoint=None, exactly_once_delivery=True),
    fact(RULE_ID, "fail", "on", exactly_once_delivery=True),
]

WIRE_CASES: list[WireCase] = [
    wire(RULE_ID, "pass", "off", subscription(enableExactlyOnceDelivery=False)),
    wire(
        RULE_ID,
        "pass",
        "pull with exactly once",
        subscription(pushConfig=None, enableExactlyOnceDelivery=True),
    ),
    wire(RULE_ID, "fail", "push with exactly once", subscription(enableExactlyOnceDelivery=True)),
]
