"""``push-state-drift``: its pass and fail cases, on the facts.

The rule needs the live side (the audit with ``--stacks``): the pack registers it and never
decides it (tests/audit/test_stacks.py), so it has no wire cases.
"""

from __future__ import annotations

from pushguard.rules.managed import Management, PushSettings, StackRecord
from tests.crossguard.wire import PUSH_SA, RUN_URL
from tests.rules.cases._build import FactCase, WireCase, fact

RULE_ID = "push-state-drift"
URN = "urn:pulumi:prod::orders::gcp:pubsub/subscription:Subscription::orders"
LIVE = PushSettings(push_endpoint=RUN_URL, push_auth_account=PUSH_SA, audience="orders-push")


def record(**recorded: object) -> StackRecord:
    settings = LIVE.model_copy(update=recorded)
    return StackRecord(stack="acme/orders/prod", urn=URN, recorded=settings)


def hidden(*fields: str, **recorded: object) -> StackRecord:
    return record(**recorded).model_copy(update={"not_checked": fields})


FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "no --stacks (not checked)", management=None),
    fact(RULE_ID, "pass", "matches", management=Management(records=(record(),), live=LIVE)),
    fact(
        RULE_ID,
        "pass",
        "the x-goog-version Pub/Sub set itself",
        management=Management(
            records=(record(),), live=LIVE.model_copy(update={"attributes": ("x-goog-version=v1",)})
        ),
    ),
    fact(RULE_ID, "pass", "unmanaged (push-unmanaged reports)", management=Management(live=LIVE)),
    fact(
        RULE_ID,
        "pass",
        "an encrypted account is not checked, not presumed drifted",
        management=Management(
            records=(
                hidden("push_auth_account", push_auth_account="other@x.iam.gserviceaccount.com"),
            ),
            live=LIVE,
        ),
    ),
    fact(
        RULE_ID,
        "pass",
        "deleted, but the export holds no asset of the project (not checked)",
        management=Management(records=(record(),), project_in_export=False),
    ),
    fact(
        RULE_ID,
        "fail",
        "endpoint edited in the console",
        management=Management(
            records=(record(push_endpoint="https://old.example.com/push?token=s3cret"),), live=LIVE
        ),
        message=("acme/orders/prod", "push_endpoint", "[redacted]"),
    ),
    fact(
        RULE_ID,
        "fail",
        "account swapped by hand",
        management=Management(
            records=(record(push_auth_account="old@acme-orders.iam.gserviceaccount.com"),),
            live=LIVE,
        ),
        message=("push_auth_account",),
    ),
    fact(
        RULE_ID,
        "fail",
        "paused",
        management=Management(records=(record(),), live=PushSettings()),
        message=("paused: live true, stack false",),
    ),
    fact(
        RULE_ID,
        "fail",
        "wrapper",
        management=Management(records=(record(no_wrapper=True),), live=LIVE),
        message=("no_wrapper",),
    ),
    fact(
        RULE_ID,
        "fail",
        "deleted out of band",
        management=Management(records=(record(),), live=None),
        message=("deleted out of band",),
    ),
]

WIRE_CASES: list[WireCase] = []  # not applicable in the pack: NO_WIRE_CASES
