"""``push-target-requires-auth``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py). The undecided cases (target not known, grants not collected)
are in tests/rules/test_rule_cases.py.
"""

from __future__ import annotations

from typing import Any

from pushguard.rules import IamGrant, InvokerTarget
from tests.crossguard.wire import (
    PROJECT,
    push_config,
    resource,
    run_invoker,
    run_service,
    subscription,
)
from tests.rules.cases._build import (
    DETERMINISTIC,
    INVOKER,
    PUSHER,
    FactCase,
    WireCase,
    cloud_run_sub,
    fact,
    function_v1,
    function_v1_sub,
    wire,
)

RULE_ID = "push-target-requires-auth"

RUN = "//run.googleapis.com/projects/acme-orders/locations/europe-west1/services/orders"
PUBLIC = IamGrant(role="roles/run.invoker", member="allUsers", resource=RUN)


def _run(*grants: IamGrant, kind: str = "cloud-run") -> InvokerTarget:
    return InvokerTarget(kind=kind, name="orders", grants=(INVOKER, *grants))


FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "only the push-auth account invokes", invoker_target=_run()),
    fact(RULE_ID, "pass", "external", invoker_target=InvokerTarget(kind="external")),
    fact(
        RULE_ID,
        "pass",
        "pull subscription",
        push_endpoint=None,
        invoker_target=_run(PUBLIC),
    ),
    fact(
        RULE_ID,
        "pass",
        "viewer to everyone",
        invoker_target=_run(IamGrant(role="roles/run.viewer", member="allUsers", resource=RUN)),
    ),
    fact(
        RULE_ID,
        "pass",
        "another product's invoker role",
        invoker_target=_run(
            IamGrant(role="roles/run.invoker", member="allUsers"), kind="cloud-function-v1"
        ),
    ),
    fact(
        RULE_ID,
        "pass",
        "a domain may invoke",
        invoker_target=_run(IamGrant(role="roles/run.invoker", member="domain:example.com")),
    ),
    fact(
        RULE_ID,
        "fail",
        "allauthenticatedusers in lower case (older Terraform states)",
        invoker_target=_run(
            IamGrant(role="roles/run.invoker", member=" allauthenticatedusers", resource=RUN)
        ),
        message=("roles/run.invoker to allAuthenticatedUsers on",),
    ),
    fact(
        RULE_ID,
        "fail",
        "run invoker to allUsers",
        invoker_target=_run(PUBLIC),
        message=("Cloud Run service orders", "roles/run.invoker to allUsers", f"on {RUN}"),
    ),
    fact(
        RULE_ID,
        "fail",
        "run invoker to all authenticated users, inherited from the project",
        invoker_target=_run(
            IamGrant(
                role="roles/run.invoker",
                member="allAuthenticatedUsers",
                resource="projects/123456789012",
            )
        ),
        message=("allAuthenticatedUsers", "inherited from projects/123456789012", "Google account"),
    ),
    fact(
        RULE_ID,
        "fail",
        "run admin to allUsers",
        invoker_target=_run(IamGrant(role="roles/run.admin", member="allUsers", resource=RUN)),
        message=("roles/run.admin to allUsers",),
    ),
    fact(
        RULE_ID,
        "fail",
        "2nd-gen function",
        invoker_target=_run(PUBLIC, kind="cloud-function-v2"),
        message=("2nd-gen Cloud Function orders",),
    ),
    fact(
        RULE_ID,
        "fail",
        "1st-gen function invoker to allUsers",
        invoker_target=_run(
            IamGrant(role="roles/cloudfunctions.invoker", member="allUsers"),
            kind="cloud-function-v1",
        ),
        message=("1st-gen Cloud Function orders", "roles/cloudfunctions.invoker to allUsers"),
    ),
    fact(
        RULE_ID,
        "fail",
        "conditional grant to allUsers",
        invoker_target=_run(
            IamGrant(role="roles/run.invoker", member="allUsers", resource=RUN, condition="office")
        ),
        message=("under the condition 'office'", "cannot prove"),
    ),
]


def _public_invoker(kind: str, service_prop: str, member: str = "allUsers") -> Any:
    """An additive invoker grant on the service ``orders`` to ``member``: ``kind`` is
    ``gcp.cloudrunv2.ServiceIamMember`` (``name``) or ``gcp.cloudrun.IamMember`` (``service``,
    the Cloud Run v1 API's)."""
    return resource(
        kind,
        "orders-public",
        {
            service_prop: "orders",
            "location": "europe-west1",
            "role": "roles/run.invoker",
            "member": member,
        },
    )


WIRE_CASES: list[WireCase] = [
    wire(
        RULE_ID,
        "pass",
        "only the push-auth account invokes the service",
        cloud_run_sub(),
        run_service(),
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
        "fail",
        "cloudrunv2 ServiceIamMember to allUsers",
        cloud_run_sub(),
        run_service(),
        run_invoker(),
        _public_invoker("gcp:cloudrunv2/serviceIamMember:ServiceIamMember", "name"),
        message=("Cloud Run service orders", "roles/run.invoker to allUsers"),
    ),
    wire(
        RULE_ID,
        "fail",
        "cloudrun IamMember to allUsers on the deterministic url's service",
        subscription(pushConfig=push_config(DETERMINISTIC)),
        run_invoker(),
        _public_invoker("gcp:cloudrun/iamMember:IamMember", "service"),
        message=("roles/run.invoker to allUsers",),
    ),
    wire(
        RULE_ID,
        "fail",
        "authoritative binding lists allAuthenticatedUsers",
        cloud_run_sub(),
        run_service(),
        resource(
            "gcp:cloudrunv2/serviceIamBinding:ServiceIamBinding",
            "orders-invokers",
            {
                "name": "orders",
                "location": "europe-west1",
                "role": "roles/run.invoker",
                "members": [PUSHER, "allAuthenticatedUsers"],
            },
        ),
        message=("roles/run.invoker to allAuthenticatedUsers",),
    ),
    wire(
        RULE_ID,
        "fail",
        "run invoker to allUsers on the project",
        cloud_run_sub(),
        run_service(),
        run_invoker(),
        resource(
            "gcp:projects/iAMMember:IAMMember",
            "everyone-invokes",
            {"project": PROJECT, "role": "roles/run.invoker", "member": "allUsers"},
        ),
        message=(f"inherited from project:{PROJECT}",),
    ),
    wire(
        RULE_ID,
        "fail",
        "1st-gen function invoker to allUsers",
        function_v1_sub(),
        function_v1(),
        resource(
            "gcp:cloudfunctions/functionIamMember:FunctionIamMember",
            "orders-public",
            {
                "cloudFunction": "orders",
                "region": "europe-west1",
                "role": "roles/cloudfunctions.invoker",
                "member": "allUsers",
            },
        ),
        message=("1st-gen Cloud Function orders", "roles/cloudfunctions.invoker to allUsers"),
    ),
]
