"""``push-shared-iam-binding``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from pushguard.rules import HeldGrant
from tests.crossguard.wire import AGENT, PUSH_SA, sa_member, subscription
from tests.rules.cases._build import (
    NO_NUMBER,
    NUMBERS,
    TOKEN,
    TOKEN_CREATOR,
    FactCase,
    WireCase,
    fact,
    wire,
)

RULE_ID = "push-shared-iam-binding"

FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "no stack (the audit)", held_grants=None),
    fact(RULE_ID, "pass", "one holder", held_grants=(HeldGrant(grant=TOKEN, holders=("tc",)),)),
    fact(
        RULE_ID,
        "fail",
        "two holders",
        held_grants=(HeldGrant(grant=TOKEN, holders=("orders-tc", "billing-tc")),),
        message=("held by 2 resources (orders-tc, billing-tc)", "removes the binding for all"),
    ),
    fact(
        RULE_ID,
        "fail",
        "two holders, no project number: the agent matched by its form",
        held_grants=(HeldGrant(grant=TOKEN, holders=("orders-tc", "billing-tc")),),
        message=("(orders-tc, billing-tc)", "matched by its form", "top-level "),
        **NO_NUMBER,
    ),
    fact(
        RULE_ID,
        "pass",
        "two holders, no project number, a member not of the agent's form",
        held_grants=(
            HeldGrant(
                grant=TOKEN.model_copy(update={"member": "serviceAccount:service-1@example.com"}),
                holders=("orders-tc", "billing-tc"),
            ),
        ),
        **NO_NUMBER,
    ),
]

WIRE_CASES: list[WireCase] = [
    wire(
        RULE_ID,
        "pass",
        "token creator held once",
        subscription(),
        sa_member("tc", PUSH_SA, TOKEN_CREATOR, AGENT),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "pass",
        "two different members",
        subscription(),
        sa_member("tc", PUSH_SA, TOKEN_CREATOR, AGENT),
        sa_member("tc-ci", PUSH_SA, TOKEN_CREATOR, "group:ci@example.com"),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "fail",
        "the same token creator held twice",
        subscription(),
        sa_member("orders-tc", PUSH_SA, TOKEN_CREATOR, AGENT),
        sa_member(
            "billing-tc", f"projects/acme-orders/serviceAccounts/{PUSH_SA}", TOKEN_CREATOR, AGENT
        ),
        message=("orders-tc, billing-tc", "removes the binding for all"),
        **NUMBERS,
    ),
]
