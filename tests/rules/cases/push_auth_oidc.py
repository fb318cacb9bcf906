"""``push-auth-oidc``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from tests.crossguard.wire import account, push_config, subscription
from tests.rules.cases._build import FactCase, WireCase, fact, unknown_account_sub, wire

RULE_ID = "push-auth-oidc"

FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "with account"),
    fact(
        RULE_ID,
        "pass",
        "account created in stack",
        push_auth_account=None,
        push_auth_account_project="acme-orders",
    ),
    fact(RULE_ID, "pass", "pull subscription", push_endpoint=None, push_auth_account=None),
    fact(RULE_ID, "fail", "no account", push_auth_account=None),
    fact(RULE_ID, "fail", "empty account", push_auth_account=""),
]

WIRE_CASES: list[WireCase] = [
    wire(RULE_ID, "pass", "oidc token", subscription()),
    wire(RULE_ID, "pass", "account created in the stack", unknown_account_sub(), account()),
    wire(RULE_ID, "fail", "no oidc token", subscription(pushConfig=push_config(account=None))),
]
