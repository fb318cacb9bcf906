"""Violation and compliant cases, built on the real CAI shapes (see cai.py), in one export."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from pushguard.audit.command import summary_line

from . import cai
from .conftest import Audit, audit, write_lines

ORDERS, ORDERS_N = "acme-orders", "123456789012"
SHARED, SHARED_N = "acme-shared", "222333444555"
PAY, PAY_N = "acme-payments", "987654321098"
BILL, BILL_N = "acme-billing", "333444555666"
RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app"
BILLING_URL = "https://billing-3kq2x7ab9c-ew.a.run.app"
TOKEN_CREATOR = "roles/iam.serviceAccountTokenCreator"


def _sa(project: str, number: str, account_id: str, uid: str) -> tuple[dict, str]:
    asset = cai.service_account(project, number, account_id, uid)
    return asset, asset["resource"]["data"]["email"]


def build_export() -> list[dict]:
    push, push_email = _sa(ORDERS, ORDERS_N, "orders-push", "1001")
    nogrant, nogrant_email = _sa(ORDERS, ORDERS_N, "orders-nogrant", "1002")
    folder_sa, folder_email = _sa(BILL, BILL_N, "bill-push", "4001")
    cond_sa, cond_email = _sa(ORDERS, ORDERS_N, "orders-conditional", "1004")
    shared, shared_email = _sa(SHARED, SHARED_N, "push", "2001")
    pay_sa, pay_email = _sa(PAY, PAY_N, "pay-push", "3001")
    orders_run = cai.run_service(ORDERS, ORDERS_N, "orders", RUN_URL)
    billing_run = cai.run_service(ORDERS, ORDERS_N, "billing", BILLING_URL)
    agent = cai.agent(ORDERS_N)
    grant_all = (TOKEN_CREATOR, [agent])
    return [
        cai.folder(),
        cai.project(ORDERS, ORDERS_N),
        cai.project(SHARED, SHARED_N),
        cai.project(PAY, PAY_N),
        cai.project(BILL, BILL_N),
        cai.perimeter(PAY_N),
        push,
        nogrant,
        folder_sa,
        cond_sa,
        shared,
        pay_sa,
        orders_run,
        billing_run,
        cai.iam(push, grant_all),
        cai.iam(cond_sa, grant_all, condition="expired"),
        cai.iam(shared, (TOKEN_CREATOR, [cai.agent(ORDERS_N)])),
        cai.iam(pay_sa, (TOKEN_CREATOR, [cai.agent(PAY_N)])),
        cai.container_iam(
            cai.FOLDER,
            "cloudresourcemanager.googleapis.com/Folder",
            (TOKEN_CREATOR, [cai.agent(BILL_N)]),
        ),
        cai.iam(
            orders_run,
            (
                "roles/run.invoker",
                [
                    f"serviceAccount:{push_email}",
                    f"serviceAccount:{folder_email}",
                    f"serviceAccount:{cond_email}",
                    f"serviceAccount:{nogrant_email}",
                ],
            ),
        ),
        cai.iam(billing_run),
        cai.subscription(
            ORDERS, ORDERS_N, "compliant", f"{RUN_URL}/push", push_email, audience="orders"
        ),
        cai.subscription(ORDERS, ORDERS_N, "no-oidc", "https://orders.example.com/push"),
        cai.subscription(
            ORDERS, ORDERS_N, "plain-http", "http://orders.example.com/push", push_email, "orders"
        ),
        cai.subscription(
            ORDERS, ORDERS_N, "cross-project", f"{RUN_URL}/push", shared_email, "orders"
        ),
        cai.subscription(
            PAY, PAY_N, "perimeter-custom-domain", "https://pay.example.com/push", pay_email, "pay"
        ),
        cai.subscription(
            PAY,
            PAY_N,
            "perimeter-hash-url",
            "https://pay-3kq2x7ab9c-ew.a.run.app/push",
            pay_email,
            "pay",
        ),
        cai.subscription(
            PAY,
            PAY_N,
            "perimeter-deterministic-url",
            f"https://pay-{PAY_N}.europe-west1.run.app/push",
            pay_email,
            "pay",
        ),
        cai.subscription(
            ORDERS, ORDERS_N, "token-creator-missing", f"{RUN_URL}/push", nogrant_email, "orders"
        ),
        cai.subscription(
            BILL, BILL_N, "token-creator-inherited", f"{RUN_URL}/push", folder_email, "orders"
        ),
        cai.subscription(
            ORDERS, ORDERS_N, "token-creator-conditional", f"{RUN_URL}/push", cond_email, "orders"
        ),
        cai.subscription(
            ORDERS, ORDERS_N, "invoker-missing", f"{BILLING_URL}/push", push_email, "billing"
        ),
        cai.subscription(ORDERS, ORDERS_N, "pull", None),
    ]


@pytest.fixture(scope="module")
def scenarios(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Audit:
    root = tmp_path_factory.mktemp("scenarios")
    export = write_lines(root / "export" / "resources.json", build_export())
    return audit(spark, [export], root / "out")


@pytest.mark.parametrize(
    ("subscription", "present", "absent"),
    [
        ("compliant", set(), {"*"}),
        ("no-oidc", {"push-auth-oidc"}, set()),
        ("plain-http", {"push-endpoint-https"}, {"push-auth-oidc"}),
        ("cross-project", {"push-sa-same-project"}, {"push-endpoint-https"}),
        ("perimeter-custom-domain", {"push-vpcsc-default-url"}, set()),
        ("perimeter-hash-url", set(), {"push-vpcsc-default-url"}),
        ("perimeter-deterministic-url", set(), {"push-vpcsc-default-url"}),
        ("token-creator-missing", {"push-agent-token-creator"}, {"push-invoker-binding"}),
        ("token-creator-inherited", set(), {"push-agent-token-creator"}),
        ("token-creator-conditional", {"push-agent-token-creator"}, set()),
        ("invoker-missing", {"push-invoker-binding"}, {"push-agent-token-creator"}),
        ("pull", set(), {"*"}),
    ],
)
def test_case(scenarios: Audit, subscription: str, present: set[str], absent: set[str]) -> None:
    found = scenarios.violations(subscription)
    assert present <= found, found
    if "*" in absent:
        assert found == set(), found
    else:
        assert not (absent & found), found


def test_conditional_grant_is_reported_as_such(scenarios: Audit) -> None:
    [finding] = [
        f
        for f in scenarios.findings
        if f["asset_name"].endswith("token-creator-conditional")
        and f["rule_id"] == "push-agent-token-creator"
    ]
    assert "conditional grant exists (expired)" in finding["message"]
    assert finding["ancestors"] == cai.ancestors(ORDERS_N)
    assert finding["project_id"] == ORDERS and finding["project_number"] == ORDERS_N


def test_summary_counts(scenarios: Audit) -> None:
    summary = scenarios.summary
    assert summary["subscriptions"] == {"evaluated": 12, "push": 11}
    assert summary["lines"] == {"read": 33, "parsed": 33, "quarantined": 0, "blank": 0}
    assert (
        sum(summary["findings"]["violations_by_rule"].values()) == summary["findings"]["violations"]
    )
    # resources, IAM policies and a perimeter: every rule's inputs were read
    assert summary["coverage"] == {
        "nothing_read": False,
        "read": {"iam-policies": 7, "service-perimeters": 1, "subscriptions": 12},
        "missing": {},
        "organizations": [cai.ORG],
    }
    assert "not seen" not in summary_line(scenarios.result.summary, str(scenarios.out))


def test_without_stacks_neither_stack_rule_is_checked_and_the_summary_says_so(
    scenarios: Audit,
) -> None:
    # push-unmanaged and push-state-drift need --stacks (tests/audit/test_stacks.py)
    stack_rules = {"push-unmanaged", "push-state-drift"}
    assert not [f for f in scenarios.findings if f["rule_id"] in stack_rules]
    stacks = scenarios.summary["stacks"]
    assert stacks["checked"] is False and stacks["note"].startswith("not checked: no --stacks")
    line = summary_line(scenarios.result.summary, str(scenarios.out))
    assert "stacks not checked (--stacks)" in line
    assert "not checked: no --stacks given" in (scenarios.out / "report.html").read_text()


def test_dry_run_perimeters_count_only_when_asked(spark: SparkSession, tmp_path: Path) -> None:
    assets = [
        cai.project(PAY, PAY_N),
        cai.perimeter(PAY_N, dry_run=True),
        cai.subscription(PAY, PAY_N, "custom", "https://pay.example.com/push"),
    ]
    export = write_lines(tmp_path / "export.json", assets)
    assert "push-vpcsc-default-url" not in audit(spark, [export], tmp_path / "a").violations(
        "custom"
    )
    with_spec = audit(spark, [export], tmp_path / "b", include_dry_run=True)
    assert "push-vpcsc-default-url" in with_spec.violations("custom")
