"""``push-audience-explicit``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from tests.crossguard.wire import UNKNOWN, push_config, subscription
from tests.rules.cases._build import FactCase, WireCase, fact, wire

RULE_ID = "push-audience-explicit"

FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "set"),
    fact(
        RULE_ID,
        "pass",
        "unauthenticated (push-auth-oidc reports)",
        push_auth_account=None,
        audience=None,
    ),
    fact(RULE_ID, "fail", "missing", audience=None),
    fact(RULE_ID, "fail", "blank", audience="  "),
]

WIRE_CASES: list[WireCase] = [
    wire(RULE_ID, "pass", "explicit", subscription()),
    wire(RULE_ID, "pass", "unknown yet", subscription(pushConfig=push_config(audience=UNKNOWN))),
    wire(RULE_ID, "fail", "implicit", subscription(pushConfig=push_config(audience=None))),
]
