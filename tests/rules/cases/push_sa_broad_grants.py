"""``push-sa-broad-grants``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from pushguard.rules import IamGrant
from tests.crossguard.wire import PUSH_SA, sa_member, subscription
from tests.rules.cases._build import TOKEN, FactCase, WireCase, fact, wire

RULE_ID = "push-sa-broad-grants"
POOL = "principalSet://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/*"

FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "agent only", push_auth_account_grants=(TOKEN,)),
    fact(
        RULE_ID,
        "pass",
        "viewer to everyone",
        push_auth_account_grants=(
            IamGrant(role="roles/iam.serviceAccountViewer", member="allUsers"),
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "token creator to allUsers",
        push_auth_account_grants=(
            IamGrant(role="roles/iam.serviceAccountTokenCreator", member="allUsers"),
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "actAs to a domain",
        push_auth_account_grants=(
            IamGrant(
                role="roles/iam.serviceAccountUser",
                member="domain:example.com",
                resource="projects/acme-orders",
            ),
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "token creator to all authenticated",
        push_auth_account_grants=(
            IamGrant(role="roles/iam.serviceAccountTokenCreator", member="allAuthenticatedUsers"),
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "token creator to all authenticated, as older Terraform states spell it",
        push_auth_account_grants=(
            IamGrant(role="roles/iam.serviceAccountTokenCreator", member="allauthenticatedusers"),
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "workload identity user to a pool",
        push_auth_account_grants=(IamGrant(role="roles/iam.workloadIdentityUser", member=POOL),),
        message=("iam.serviceAccounts.getOpenIdToken",),
    ),
    fact(
        RULE_ID,
        "fail",
        "account admin to all authenticated",
        push_auth_account_grants=(
            IamGrant(role="roles/iam.serviceAccountAdmin", member="allAuthenticatedUsers"),
        ),
        message=("iam.serviceAccounts.setIamPolicy",),
    ),
    fact(
        RULE_ID,
        "fail",
        "editor to a domain on the project",
        push_auth_account_grants=(
            IamGrant(role="roles/editor", member="domain:example.com", resource="projects/123"),
        ),
        message=("on projects/123, which carries iam.serviceAccounts.actAs",),
    ),
    fact(
        RULE_ID,
        "fail",
        "owner to a domain",
        push_auth_account_grants=(IamGrant(role="roles/owner", member="domain:example.com"),),
    ),
    fact(
        RULE_ID,
        "fail",
        "a custom role whose permissions the source gives",
        push_auth_account_grants=(
            IamGrant(
                role="projects/acme-orders/roles/helper",
                member="allUsers",
                permissions=("iam.serviceAccounts.signJwt",),
            ),
        ),
    ),
]

WIRE_CASES: list[WireCase] = [
    wire(
        RULE_ID,
        "pass",
        "group may act as",
        subscription(),
        sa_member("act-as", PUSH_SA, "roles/iam.serviceAccountUser", "group:platform@example.com"),
    ),
    wire(
        RULE_ID,
        "fail",
        "allUsers may act as",
        subscription(),
        sa_member("act-as", PUSH_SA, "roles/iam.serviceAccountUser", "allUsers"),
    ),
    wire(
        RULE_ID,
        "fail",
        "domain may mint tokens",
        subscription(),
        sa_member(
            "tc",
            f"projects/-/serviceAccounts/{PUSH_SA}",
            "roles/iam.serviceAccountTokenCreator",
            "domain:example.com",
        ),
    ),
]
