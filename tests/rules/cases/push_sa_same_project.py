"""``push-sa-same-project``: its pass and fail cases, on the facts and on the wire.

``FACT_CASES`` run the rule over one subscription's facts (tests/rules/test_rule_cases.py);
``WIRE_CASES`` send a stack's resources, as the Pulumi engine sends them, to the running policy pack
(tests/crossguard/test_pack_cases.py).
"""

from __future__ import annotations

from tests.crossguard.wire import PROJECT, PUSH_SA, account, push_config, subscription
from tests.rules.cases._build import (
    FactCase,
    WireCase,
    eventarc_trigger,
    fact,
    trigger_fact,
    unknown_account_sub,
    wire,
)

RULE_ID = "push-sa-same-project"

FACT_CASES: list[FactCase] = [
    fact(RULE_ID, "pass", "same project"),
    fact(RULE_ID, "pass", "case differs", push_auth_account=PUSH_SA.upper()),
    fact(
        RULE_ID,
        "pass",
        "compute default of same number",
        push_auth_account="123456789012-compute@developer.gserviceaccount.com",
    ),
    fact(
        RULE_ID,
        "pass",
        "domain-scoped project",
        project_id="example.com:orders",
        push_auth_account="push@orders.example.com.iam.gserviceaccount.com",
    ),
    fact(
        RULE_ID,
        "fail",
        "other project",
        push_auth_account="orders-push@acme-shared.iam.gserviceaccount.com",
    ),
    fact(
        RULE_ID,
        "fail",
        "compute default of other project",
        push_auth_account="999999999999-compute@developer.gserviceaccount.com",
    ),
    fact(RULE_ID, "fail", "user email", push_auth_account="alice@example.com"),
    fact(
        RULE_ID,
        "fail",
        "account created in other project",
        push_auth_account=None,
        push_auth_account_project="acme-shared",
    ),
    fact(
        RULE_ID,
        "fail",
        "lookalike domain",
        push_auth_account="x@acme-orders.iam.gserviceaccount.com.evil.example",
    ),
    trigger_fact(RULE_ID, "pass", "same project"),
    trigger_fact(RULE_ID, "pass", "no account named", push_auth_account=None),
    trigger_fact(
        RULE_ID,
        "fail",
        "cloud run destination, account of another project",
        push_endpoint=None,
        trigger_destination="cloudRunService",
        push_auth_account="events@acme-shared.iam.gserviceaccount.com",
        message=("trigger's service account", "not to the trigger's project acme-orders"),
    ),
]

WIRE_CASES: list[WireCase] = [
    wire(RULE_ID, "pass", "same project", subscription()),
    wire(
        RULE_ID,
        "pass",
        "project from pack config",
        subscription(provider=None),
        defaultProject=PROJECT,
    ),
    wire(RULE_ID, "pass", "account created in the stack", unknown_account_sub(), account()),
    wire(
        RULE_ID,
        "fail",
        "other project",
        subscription(
            pushConfig=push_config(account="orders-push@other-proj.iam.gserviceaccount.com")
        ),
    ),
    wire(
        RULE_ID,
        "fail",
        "own project property wins over the provider's",
        subscription(project="billing-prod"),
    ),
    wire(
        RULE_ID,
        "fail",
        "account created in the stack in another project",
        unknown_account_sub(),
        account(project="shared-identities"),
    ),
    wire(
        RULE_ID,
        "fail",
        "user email",
        subscription(pushConfig=push_config(account="dev@example.com")),
    ),
    wire(RULE_ID, "pass", "eventarc trigger with an account of its project", eventarc_trigger()),
    wire(
        RULE_ID,
        "fail",
        "eventarc trigger to cloud run with an account of another project",
        eventarc_trigger(
            destination={"cloudRunService": {"service": "orders", "region": "europe-west1"}},
            account="events@acme-shared.iam.gserviceaccount.com",
        ),
        message=("trigger's service account",),
    ),
]
