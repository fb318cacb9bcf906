"""``push-invoker-binding``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from pushguard.rules import IamGrant, InvokerTarget
from tests.crossguard.wire import (
    PUSH_SA,
    RUN_URN,
    push_config,
    run_invoker,
    run_service,
    subscription,
)
from tests.rules.cases._build import (
    DETERMINISTIC,
    INVOKER,
    FactCase,
    WireCase,
    cloud_run_sub,
    fact,
    wire,
)

RULE_ID = "push-invoker-binding"

FACT_CASES: list[FactCase] = [
    fact(
        RULE_ID,
        "pass",
        "run invoker",
        invoker_target=InvokerTarget(kind="cloud-run", name="orders", grants=(INVOKER,)),
    ),
    fact(
        RULE_ID,
        "pass",
        "function invoker",
        invoker_target=InvokerTarget(
            kind="cloud-function-v1",
            grants=(
                IamGrant(role="roles/cloudfunctions.invoker", member=f"serviceAccount:{PUSH_SA}"),
            ),
        ),
    ),
    fact(RULE_ID, "pass", "external", invoker_target=InvokerTarget(kind="external")),
    fact(
        RULE_ID,
        "fail",
        "no grant",
        invoker_target=InvokerTarget(kind="cloud-run", name="orders", grants=()),
    ),
    fact(
        RULE_ID,
        "fail",
        "wrong product role",
        invoker_target=InvokerTarget(
            kind="cloud-run",
            grants=(
                IamGrant(role="roles/cloudfunctions.invoker", member=f"serviceAccount:{PUSH_SA}"),
            ),
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "other account",
        invoker_target=InvokerTarget(
            kind="cloud-run",
            grants=(
                IamGrant(
                    role="roles/run.invoker",
                    member="serviceAccount:x@acme-orders.iam.gserviceaccount.com",
                ),
            ),
        ),
    ),
]

WIRE_CASES: list[WireCase] = [
    wire(
        RULE_ID,
        "pass",
        "binding on the deterministic url's service",
        subscription(pushConfig=push_config(DETERMINISTIC)),
        run_invoker(),
    ),
    wire(
        RULE_ID,
        "pass",
        "external endpoint",
        subscription(pushConfig=push_config("https://hooks.partner.example/")),
    ),
    wire(
        RULE_ID,
        "pass",
        "binding through the service's urn",
        cloud_run_sub(),
        run_service(),
        run_invoker(service="orders", deps={"name": (RUN_URN,)}),
    ),
    wire(
        RULE_ID,
        "fail",
        "no binding on the deterministic url's service",
        subscription(pushConfig=push_config(DETERMINISTIC)),
    ),
    wire(
        RULE_ID,
        "fail",
        "cloud run service in the stack, no binding",
        cloud_run_sub(),
        run_service(),
    ),
    wire(
        RULE_ID,
        "fail",
        "binding for another account",
        subscription(pushConfig=push_config(DETERMINISTIC)),
        run_invoker(member="serviceAccount:other@acme-orders.iam.gserviceaccount.com"),
    ),
]
