"""``push-unmanaged``: its pass and fail cases, on the facts.

The rule needs the live side (the audit with ``--stacks``): the pack registers it and never
decides it (tests/audit/test_stacks.py), so it has no wire cases.
"""

from __future__ import annotations

from pushguard.rules.managed import Management, PushSettings, StackRecord
from tests.crossguard.wire import RUN_URL
from tests.rules.cases._build import FactCase, WireCase, fact

RULE_ID = "push-unmanaged"
LIVE = PushSettings(push_endpoint=RUN_URL)
RECORD = StackRecord(
    stack="acme/orders/prod", urn="urn:pulumi:prod::orders::x::orders", recorded=LIVE
)

FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "no --stacks (not checked)", management=None),
    fact(RULE_ID, "pass", "managed", management=Management(records=(RECORD,), live=LIVE)),
    fact(RULE_ID, "pass", "a pull subscription", management=Management(live=PushSettings())),
    fact(
        RULE_ID,
        "pass",
        "not in the export (drift reports)",
        management=Management(records=(RECORD,)),
    ),
    fact(
        RULE_ID,
        "fail",
        "no stack manages it",
        management=Management(live=LIVE),
        message=("no given stack manages this push subscription",),
    ),
]

WIRE_CASES: list[WireCase] = []  # not applicable in the pack: NO_WIRE_CASES
