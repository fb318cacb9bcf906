"""``push-vpcsc-default-url``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from pushguard.rules import InvokerTarget
from tests.crossguard.wire import NUMBER, PROJECT, push_config, resource, run_service, subscription
from tests.rules.cases._build import (
    NUMBERS,
    V1_FUNCTION,
    FactCase,
    WireCase,
    cloud_run_sub,
    fact,
    function_v1,
    function_v1_sub,
    perimeter,
    wire,
)

RULE_ID = "push-vpcsc-default-url"

FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "hash url in perimeter", in_service_perimeter=True),
    fact(
        RULE_ID,
        "pass",
        "deterministic url in perimeter",
        in_service_perimeter=True,
        push_endpoint="https://orders-123456789012.europe-west1.run.app/push",
    ),
    fact(
        RULE_ID,
        "pass",
        "tagged deterministic url",
        in_service_perimeter=True,
        push_endpoint="https://blue---orders-123456789012.europe-west1.run.app/",
    ),
    fact(
        RULE_ID,
        "pass",
        "custom domain outside perimeter",
        push_endpoint="https://events.example.com/",
    ),
    fact(
        RULE_ID,
        "fail",
        "custom domain",
        in_service_perimeter=True,
        push_endpoint="https://events.example.com/",
    ),
    fact(
        RULE_ID,
        "fail",
        "cloudfunctions.net",
        in_service_perimeter=True,
        push_endpoint="https://europe-west1-acme-orders.cloudfunctions.net/orders",
    ),
    fact(
        RULE_ID,
        "fail",
        "suffix lookalike",
        in_service_perimeter=True,
        push_endpoint="https://orders-3kq2x7ab9c-ew.a.run.app.evil.example/",
    ),
    fact(
        RULE_ID,
        "fail",
        "no dot lookalike",
        in_service_perimeter=True,
        push_endpoint="https://orders-3kq2x7ab9c-ewa.run.app/",
    ),
    fact(
        RULE_ID,
        "fail",
        "userinfo trick",
        in_service_perimeter=True,
        push_endpoint="https://orders-3kq2x7ab9c-ew.a.run.app@evil.example/",
    ),
    fact(
        RULE_ID,
        "fail",
        "non-default port",
        in_service_perimeter=True,
        push_endpoint="https://orders-3kq2x7ab9c-ew.a.run.app:8443/",
    ),
    fact(
        RULE_ID,
        "fail",
        "nested label",
        in_service_perimeter=True,
        push_endpoint="https://x.orders-3kq2x7ab9c-ew.a.run.app/",
    ),
    fact(
        RULE_ID,
        "fail",
        "http default url",
        in_service_perimeter=True,
        push_endpoint="http://orders-3kq2x7ab9c-ew.a.run.app/",
    ),
    fact(
        RULE_ID,
        "fail",
        "1st-gen function url with its target",
        in_service_perimeter=True,
        invoker_target=V1_FUNCTION,
        push_endpoint="https://europe-west1-acme-orders.cloudfunctions.net/orders",
        message=("cloudfunctions.net/…", "is not one"),
    ),
    fact(
        RULE_ID,
        "fail",
        "endpoint not known yet, 1st-gen function target",
        in_service_perimeter=True,
        push_endpoint=None,
        unknown=frozenset({"push_endpoint"}),
        invoker_target=V1_FUNCTION,
        message=("1st-gen Cloud Function", "cloudfunctions.net"),
    ),
    fact(
        RULE_ID,
        "fail",
        "presumed url of a 1st-gen function in the deployment",
        in_service_perimeter=True,
        push_endpoint=None,
        push_endpoint_source="cloud-function",
        invoker_target=V1_FUNCTION,
        message=("1st-gen Cloud Function",),
    ),
    fact(
        RULE_ID,
        "pass",
        "presumed uri of a cloud run service",
        in_service_perimeter=True,
        push_endpoint=None,
        push_endpoint_source="cloud-run",
        invoker_target=InvokerTarget(kind="cloud-run", name="orders"),
    ),
    fact(
        RULE_ID,
        "pass",
        "1st-gen function target outside a perimeter",
        push_endpoint=None,
        unknown=frozenset({"push_endpoint"}),
        invoker_target=V1_FUNCTION,
    ),
    fact(
        RULE_ID,
        "pass",
        "default url wins over a stale target kind",
        in_service_perimeter=True,
        invoker_target=V1_FUNCTION,
    ),
]

WIRE_CASES: list[WireCase] = [
    wire(
        RULE_ID,
        "pass",
        "no perimeter, custom domain",
        subscription(pushConfig=push_config("https://events.example.com/")),
    ),
    wire(RULE_ID, "pass", "perimeter, default url", subscription(), perimeterProjects=[PROJECT]),
    wire(
        RULE_ID,
        "pass",
        "perimeter, uri of a cloud run service in the stack: undecided at preview, no violation",
        cloud_run_sub(),
        run_service(),
        perimeterProjects=[PROJECT],
    ),
    wire(
        RULE_ID,
        "fail",
        "perimeter, uri of a cloud run service in the stack, enforce: not presumed run.app",
        cloud_run_sub(),
        run_service(),
        message=("could not be verified",),
        perimeterProjects=[PROJECT],
        unknownAtPreview="enforce",
    ),
    wire(
        RULE_ID,
        "fail",
        "configured perimeter project, custom domain",
        subscription(pushConfig=push_config("https://events.example.com/")),
        perimeterProjects=[PROJECT],
    ),
    wire(
        RULE_ID,
        "fail",
        "configured by number, custom domain",
        subscription(pushConfig=push_config("https://events.example.com/")),
        perimeterProjects=[f"projects/{NUMBER}"],
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "fail",
        "perimeter declared in the stack, custom domain",
        subscription(pushConfig=push_config("https://events.example.com/")),
        perimeter(f"projects/{NUMBER}"),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "fail",
        "project added with ServicePerimeterResource",
        subscription(pushConfig=push_config("https://events.example.com/")),
        resource(
            "gcp:accesscontextmanager/servicePerimeterResource:ServicePerimeterResource",
            "member",
            {
                "perimeterName": "accessPolicies/1/servicePerimeters/orders",
                "resource": f"projects/{NUMBER}",
            },
        ),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "pass",
        "declared perimeter does not restrict pubsub",
        subscription(pushConfig=push_config("https://events.example.com/")),
        perimeter(f"projects/{NUMBER}", services=("storage.googleapis.com",)),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "fail",
        "lookalike host",
        subscription(pushConfig=push_config("https://x.a.run.app.evil.example/")),
        perimeterProjects=[PROJECT],
    ),
    wire(
        RULE_ID,
        "fail",
        "perimeter, 1st-gen cloudfunctions.net url",
        subscription(
            pushConfig=push_config("https://europe-west1-acme-orders.cloudfunctions.net/orders")
        ),
        perimeterProjects=[PROJECT],
        message=("cloudfunctions.net/…", "is not one"),
    ),
    wire(
        RULE_ID,
        "fail",
        "perimeter, url of a 1st-gen function in the stack",
        function_v1_sub(),
        function_v1(),
        perimeterProjects=[PROJECT],
        message=("1st-gen Cloud Function", "cloudfunctions.net"),
    ),
    wire(
        RULE_ID,
        "pass",
        "no perimeter, url of a 1st-gen function in the stack",
        function_v1_sub(),
        function_v1(),
    ),
]
