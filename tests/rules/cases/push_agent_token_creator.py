"""``push-agent-token-creator``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from pushguard.rules import IamBinding, IamGrant
from tests.crossguard.wire import (
    ACCOUNT_URN,
    AGENT,
    PROJECT,
    PUSH_SA,
    UNKNOWN,
    account,
    resource,
    sa_member,
    subscription,
    token_creator,
)
from tests.rules.cases._build import (
    NO_NUMBER,
    NUMBERS,
    PUSHER,
    REMOVES_AGENT,
    SELF_GRANT,
    SELF_TOKEN,
    TOKEN,
    TOKEN_CREATOR,
    FactCase,
    WireCase,
    binding,
    fact,
    project_binding,
    project_policy,
    unknown_account_sub,
    wire,
)

RULE_ID = "push-agent-token-creator"

FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "grant on account", push_auth_account_grants=(TOKEN,)),
    fact(
        RULE_ID,
        "pass",
        "openid token creator role",
        push_auth_account_grants=(
            IamGrant(role="roles/iam.serviceAccountOpenIdTokenCreator", member=AGENT),
        ),
    ),
    fact(
        RULE_ID,
        "pass",
        "the service agent's own role on the project carries the permission",
        push_auth_account_grants=(
            IamGrant(role="roles/pubsub.serviceAgent", member=AGENT, resource="projects/1"),
        ),
    ),
    fact(
        RULE_ID,
        "pass",
        "a custom role that carries it, as the source states",
        push_auth_account_grants=(
            IamGrant(
                role="projects/acme-orders/roles/signer",
                member=AGENT,
                permissions=("iam.serviceAccounts.getOpenIdToken",),
            ),
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "a custom role that does not carry it, as the source states",
        push_auth_account_grants=(
            IamGrant(role="projects/acme-orders/roles/reader", member=AGENT, permissions=()),
        ),
    ),
    fact(
        RULE_ID,
        "pass",
        "known granted elsewhere",
        push_auth_account_grants=(),
        token_creator_known_granted=True,
    ),
    fact(RULE_ID, "fail", "no grant", push_auth_account_grants=()),
    fact(
        RULE_ID,
        "fail",
        "other project's agent",
        push_auth_account_grants=(
            IamGrant(
                role="roles/iam.serviceAccountTokenCreator",
                member="serviceAccount:service-1@gcp-sa-pubsub.iam.gserviceaccount.com",
            ),
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "only conditional",
        push_auth_account_grants=(
            IamGrant(
                role="roles/iam.serviceAccountTokenCreator", member=AGENT, condition="expires"
            ),
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "owner is not enough",
        push_auth_account_grants=(IamGrant(role="roles/owner", member=AGENT),),
    ),
    fact(
        RULE_ID,
        "fail",
        "granted to the push-auth account itself, no project number",
        push_auth_account_grants=(SELF_TOKEN,),
        **NO_NUMBER,
        message=(
            "push-auth service account itself",
            PUSH_SA,
            "should go to the Pub/Sub service agent",
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "granted to the push-auth account itself on its project",
        push_auth_account_grants=(
            SELF_TOKEN.model_copy(update={"resource": "projects/acme-orders"}),
        ),
        **NO_NUMBER,
        message=("push-auth service account itself", "projects/acme-orders"),
    ),
    fact(
        RULE_ID,
        "fail",
        "granted to the push-auth account itself, number known",
        push_auth_account_grants=(SELF_TOKEN,),
        message=("has no roles/iam.serviceAccountTokenCreator", "push-auth service account itself"),
    ),
    fact(
        RULE_ID,
        "pass",
        "self grant beside a service agent's grant, no number",
        push_auth_account_grants=(SELF_TOKEN, TOKEN),
        **NO_NUMBER,
    ),
    fact(
        RULE_ID,
        "pass",
        "self grant but granted elsewhere",
        push_auth_account_grants=(SELF_TOKEN,),
        token_creator_known_granted=True,
    ),
    fact(
        RULE_ID,
        "fail",
        "authoritative project binding without the agent, no number",
        **binding("user:ops@example.com", **NO_NUMBER),
        message=(
            "authoritative",
            "projects/acme-orders",
            "user:ops@example.com",
            "would remove the Pub/Sub service agent's token-creator grant",
        ),
    ),
    fact(
        RULE_ID,
        "fail",
        "authoritative binding beside the agent's grant on the account",
        **binding("user:ops@example.com", push_auth_account_grants=(TOKEN,)),
        message=("would remove the Pub/Sub service agent's token-creator grant",),
    ),
    fact(
        RULE_ID,
        "fail",
        "authoritative binding with another project's agent",
        **binding(
            "serviceAccount:service-1@gcp-sa-pubsub.iam.gserviceaccount.com",
            push_auth_account_grants=(TOKEN,),
        ),
        message=("would remove the Pub/Sub service agent's token-creator grant",),
    ),
    fact(
        RULE_ID,
        "fail",
        "authoritative binding even when granted elsewhere",
        **binding("user:ops@example.com", token_creator_known_granted=True),
        message=("would remove the Pub/Sub service agent's token-creator grant",),
    ),
    fact(
        RULE_ID,
        "fail",
        "authoritative binding with no member",
        **binding(**NO_NUMBER),
        message=("lists no member", "would remove the Pub/Sub service agent's token-creator grant"),
    ),
    fact(
        RULE_ID,
        "pass",
        "authoritative binding that keeps the agent",
        **binding("user:ops@example.com", AGENT),
    ),
    fact(
        RULE_ID,
        "pass",
        "authoritative binding that keeps a service agent, no number",
        **binding("user:ops@example.com", AGENT, **NO_NUMBER),
    ),
    fact(
        RULE_ID,
        "pass",
        "conditional authoritative binding",
        push_auth_account_grants=(TOKEN,),
        push_auth_account_bindings=(
            IamBinding(
                role="roles/iam.serviceAccountTokenCreator",
                members=("user:ops@example.com",),
                condition="expires",
            ),
        ),
    ),
    fact(
        RULE_ID,
        "pass",
        "authoritative binding of another role",
        push_auth_account_grants=(TOKEN,),
        push_auth_account_bindings=(
            IamBinding(role="roles/viewer", members=("user:ops@example.com",)),
        ),
    ),
]

WIRE_CASES: list[WireCase] = [
    wire(
        RULE_ID,
        "pass",
        "grant on the account in the stack",
        subscription(),
        token_creator(),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "pass",
        "granted outside the stack",
        subscription(),
        tokenCreatorGrantedProjects=[PROJECT],
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "pass",
        "project-level grant",
        subscription(),
        resource(
            "gcp:projects/iAMMember:IAMMember",
            "agent-token-creator",
            {"project": PROJECT, "role": "roles/iam.serviceAccountTokenCreator", "member": AGENT},
        ),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "pass",
        "grant on an account created in the stack",
        unknown_account_sub(),
        account(),
        sa_member(
            "tc",
            UNKNOWN,
            "roles/iam.serviceAccountTokenCreator",
            AGENT,
            deps={"serviceAccountId": (ACCOUNT_URN,)},
        ),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "pass",
        "binding on the account",
        subscription(),
        resource(
            "gcp:serviceaccount/iAMBinding:IAMBinding",
            "tc-binding",
            {
                "serviceAccountId": f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}",
                "role": "roles/iam.serviceAccountTokenCreator",
                "members": ["user:a@example.com", AGENT],
            },
        ),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "fail",
        "conditional binding only",
        subscription(),
        resource(
            "gcp:serviceaccount/iAMMember:IAMMember",
            "tc",
            {
                "serviceAccountId": PUSH_SA,
                "role": "roles/iam.serviceAccountTokenCreator",
                "member": AGENT,
                "condition": {
                    "title": "office-hours",
                    "expression": "request.time.getHours() < 18",
                },
            },
        ),
        **NUMBERS,
    ),
    wire(RULE_ID, "fail", "no grant", subscription(), **NUMBERS),
    wire(
        RULE_ID,
        "fail",
        "grant to another member",
        subscription(),
        sa_member(
            "tc",
            f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}",
            "roles/iam.serviceAccountTokenCreator",
            "user:dev@example.com",
        ),
        **NUMBERS,
    ),
    # ... to the push-auth account itself instead of the service agent (no project numbers needed)
    wire(
        RULE_ID,
        "fail",
        "on the account, to the push-auth account itself",
        subscription(),
        sa_member("tc", f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}", TOKEN_CREATOR, PUSHER),
        message=SELF_GRANT,
    ),
    wire(
        RULE_ID,
        "fail",
        "on the project, to the push-auth account itself",
        subscription(),
        resource(
            "gcp:projects/iAMMember:IAMMember",
            "tc",
            {"project": PROJECT, "role": TOKEN_CREATOR, "member": PUSHER},
        ),
        message=(*SELF_GRANT, f"project:{PROJECT}"),
    ),
    wire(
        RULE_ID,
        "fail",
        "to an account created in the stack, itself",
        unknown_account_sub(),
        account(),
        sa_member(
            "tc",
            UNKNOWN,
            TOKEN_CREATOR,
            UNKNOWN,
            deps={"serviceAccountId": (ACCOUNT_URN,), "member": (ACCOUNT_URN,)},
        ),
        message=SELF_GRANT,
    ),
    wire(
        RULE_ID,
        "fail",
        "to the push-auth account itself, numbers configured",
        subscription(),
        sa_member("tc", f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}", TOKEN_CREATOR, PUSHER),
        message=("has no roles/iam.serviceAccountTokenCreator", "push-auth service account itself"),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "pass",
        "self grant beside the service agent's",
        subscription(),
        sa_member("tc", f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}", TOKEN_CREATOR, PUSHER),
        token_creator(),
    ),
    # authoritative bindings of the role on the project (no project numbers needed)
    wire(
        RULE_ID,
        "fail",
        "project IAMBinding without the service agent",
        subscription(),
        project_binding("group:ops@example.com"),
        message=(*REMOVES_AGENT, f"project:{PROJECT}", "group:ops@example.com"),
    ),
    wire(
        RULE_ID,
        "fail",
        "project IAMBinding beside the agent's grant on the account",
        subscription(),
        token_creator(),
        project_binding("group:ops@example.com"),
        message=REMOVES_AGENT,
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "fail",
        "project IAMPolicy binding the role without the service agent",
        subscription(),
        project_policy("group:ops@example.com"),
        message=REMOVES_AGENT,
    ),
    wire(
        RULE_ID,
        "pass",
        "project IAMBinding that keeps the service agent",
        subscription(),
        project_binding("group:ops@example.com", AGENT),
    ),
    wire(
        RULE_ID,
        "pass",
        "project IAMBinding that keeps the service agent, numbers",
        subscription(),
        project_binding("group:ops@example.com", AGENT),
        **NUMBERS,
    ),
    wire(
        RULE_ID,
        "pass",
        "project IAMPolicy that keeps the service agent",
        subscription(),
        project_policy(AGENT),
    ),
    wire(
        RULE_ID,
        "pass",
        "project IAMBinding of another role",
        subscription(),
        token_creator(),
        project_binding("group:ops@example.com", role="roles/viewer"),
        **NUMBERS,
    ),
]
