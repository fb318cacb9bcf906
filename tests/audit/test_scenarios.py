"""Violation and compliant cases, built on the real CAI shapes (see cai.py), in one export; and
the same export audited as users run it with a policy config of exceptions (issue 35, item 10)."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from pushguard.audit.command import summary_line
from pushguard.policy.exceptions import utc_today

from . import cai
from .conftest import Audit, audit, write_lines
from .test_google_managed import GCB
from .test_stacks import Run, run

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


# --- issue 35, item 10: exceptions checked against what they can match; report.html ----------

URN = "urn:pulumi:prod::orders::gcp:pubsub/subscription:Subscription::no-oidc"
CAI = "//pubsub.googleapis.com/projects"


def _days(n: int) -> str:
    return (utc_today() + timedelta(days=n)).isoformat()


def _item(resource: str, reason: str, days: int = 30) -> dict[str, str]:
    return {"resource": resource, "reason": reason, "expires": _days(days)}


def exceptions_config() -> dict[str, Any]:
    """Three exceptions that match (by CAI full name, expired, by project number) and six that
    cannot (a disabled policy, a rule that needs --stacks, a URN, a subscription not in the
    export, one with no finding of its policy, a Google-managed subscription)."""
    orders = f"projects/{ORDERS}/subscriptions"
    return {
        "push-endpoint-https": {
            "exceptions": [_item(f"{CAI}/{ORDERS}/subscriptions/plain-http", "partner moves")]
        },
        "push-auth-oidc": {
            "exceptions": [
                _item(f"{orders}/no-oidc", "was accepted", days=-1),
                _item(f"{orders}/compliant", "fixed since"),
                _item(f"{orders}/gcb-deploy-on-release", "Cloud Build's own"),
            ]
        },
        "push-agent-token-creator": {
            "exceptions": [
                _item(f"projects/{ORDERS_N}/subscriptions/token-creator-missing", "by number")
            ]
        },
        "push-sa-same-project": {
            "exceptions": [_item(f"{orders}/deleted-long-ago", "gone"), _item(URN, "by urn")]
        },
        "push-unmanaged": {"exceptions": [_item(f"{orders}/no-oidc", "legacy")]},
        "push-audience-explicit": {
            "enforcementLevel": "disabled",
            "exceptions": [_item(f"{orders}/no-oidc", "off")],
        },
    }


def finding(run: Run, subscription: str, rule: str) -> dict[str, Any]:
    [found] = [
        f
        for f in run.findings()
        if f.get("rule_id") == rule and f["asset_name"].endswith(f"/subscriptions/{subscription}")
    ]
    return found


def report_of(run: Run) -> str:
    return (run.out / "report.html").read_text()


def run_command(root: Path, assets: list[dict], config: dict[str, Any]) -> Run:
    """`pushguard audit EXPORT --out OUT --policy-config CONFIG`, as users run it."""
    export = write_lines(root / "export" / "resources.json", assets)
    (root / "policy-config.json").write_text(json.dumps(config))
    return run(root, export, config=root / "policy-config.json")


@pytest.fixture(scope="module")
def excepted(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Run:
    # a second perimeter, in the ServicePerimeter resource form, holds the payments project too
    assets = [
        *build_export(),
        cai.perimeter_resource("pay-restricted", PAY_N),
        cai.subscription(ORDERS, ORDERS_N, "gcb-deploy-on-release", f"{GCB}global"),
    ]
    done = run_command(tmp_path_factory.mktemp("excepted"), assets, exceptions_config())
    assert done.code == 1, done.stderr
    return done


def test_an_exception_by_the_cai_full_name_excepts_its_finding(excepted: Run) -> None:
    found = finding(excepted, "plain-http", "push-endpoint-https")
    assert found["asset_name"] == f"{CAI}/{ORDERS}/subscriptions/plain-http"
    assert (found["status"], found["exception_state"]) == ("excepted", "active")
    assert found["exception_reason"] == "partner moves"


def test_an_exception_by_project_number_excepts_its_finding(excepted: Run) -> None:
    found = finding(excepted, "token-creator-missing", "push-agent-token-creator")
    assert (found["status"], found["exception_reason"]) == ("excepted", "by number")


def test_exceptions_that_match_nothing_are_listed_with_why(excepted: Run) -> None:
    orders = f"projects/{ORDERS}/subscriptions"
    use = excepted.summary["exceptions"]
    assert (use["given"], use["matched"]) == (9, 3)
    whys = {(u["policy"], u["resource"]): u["why"] for u in use["unused"]}
    assert set(whys) == {
        ("push-audience-explicit", f"{orders}/no-oidc"),
        ("push-auth-oidc", f"{orders}/compliant"),
        ("push-auth-oidc", f"{orders}/gcb-deploy-on-release"),
        ("push-sa-same-project", f"{orders}/deleted-long-ago"),
        ("push-sa-same-project", URN),
        ("push-unmanaged", f"{orders}/no-oidc"),
    }
    assert "disabled" in whys[("push-audience-explicit", f"{orders}/no-oidc")]
    assert "risk may be gone" in whys[("push-auth-oidc", f"{orders}/compliant")]
    assert "Google-managed" in whys[("push-auth-oidc", f"{orders}/gcb-deploy-on-release")]
    assert (
        "no subscription of this name is in the export"
        in whys[("push-sa-same-project", f"{orders}/deleted-long-ago")]
    )
    assert "URN" in whys[("push-sa-same-project", URN)]
    assert "--stacks" in whys[("push-unmanaged", f"{orders}/no-oidc")]
    assert [u["expires"] for u in use["unused"]] == [_days(30)] * 6
    assert "exceptions: 3 of 9 matched a finding, 6 unused" in excepted.stdout
    report = report_of(excepted)
    assert "3 of 9 exceptions in the policy config matched a finding; 6 matched nothing" in report
    for (_, resource), why in whys.items():
        assert f"<code>{resource}</code>" in report and why in report


def test_the_report_shows_undecided_and_excepted_results_with_their_counts(
    excepted: Run,
) -> None:
    found = excepted.summary["findings"]
    undecided = [f for f in excepted.findings() if f["status"] == "unknown"]
    assert len(undecided) == found["undecided"] > 0
    assert "push-target-requires-auth" in found["undecided_by_rule"]
    report = report_of(excepted)
    # undecided results: counted and listed (before, never shown)
    assert f'<div class="card"><b>{found["undecided"]}</b>undecided</div>' in report
    listed = re.findall(r"<td>(violation|excepted|undecided)</td>", report)
    assert listed.count("undecided") == len(undecided)
    for rule, count in found["undecided_by_rule"].items():
        assert f"<tr><td><code>{rule}</code></td>" in report and f"{count:,}</td></tr>" in report
    # excepted findings: counted and listed
    assert found["excepted"] == 2
    assert f'<div class="card"><b>{found["excepted"]}</b>excepted</div>' in report
    assert listed.count("excepted") == found["excepted"]


def test_the_report_words_an_expired_exception_as_not_excepted(excepted: Run) -> None:
    found = finding(excepted, "no-oidc", "push-auth-oidc")
    assert (found["status"], found["exception_state"]) == ("violation", "expired")
    report = report_of(excepted)
    assert "excepted expired" not in report
    assert f"exception expired {_days(-1)} (counted again): was accepted" in report
    assert f"excepted until {_days(30)}: partner moves" in report


def test_a_perimeter_finding_names_its_perimeters(excepted: Run) -> None:
    found = finding(excepted, "perimeter-custom-domain", "push-vpcsc-default-url")
    names = (
        "accessPolicies/111222333444/servicePerimeters/payments, "
        "accessPolicies/987654/servicePerimeters/pay-restricted"
    )
    assert f"inside the VPC Service Controls perimeters {names}," in found["message"]
    assert names in report_of(excepted)


@pytest.mark.parametrize(
    ("exceptions", "says"),
    [
        (
            [_item(f"projects/{ORDERS}/subscription/no-oidc", "typo")],
            "exceptions.0.resource: 'projects/acme-orders/subscription/no-oidc' is not a "
            "resource an exception can name",
        ),
        (
            [_item("projects/Acme-Orders/subscriptions/no-oidc", "upper")],
            "exceptions.0.resource: 'projects/Acme-Orders/subscriptions/no-oidc': the project "
            "ID 'Acme-Orders' cannot exist",
        ),
        ([_item("*", "everything")], "exceptions.0.resource: '*': wildcards are not supported"),
        (
            [
                _item(f"projects/{ORDERS}/subscriptions/no-oidc", "first"),
                _item(f"{CAI}/{ORDERS}/subscriptions/no-oidc", "second", days=60),
            ],
            "exceptions: item 1: names projects/acme-orders/subscriptions/no-oidc, as item 0 does",
        ),
    ],
)
def test_an_exception_that_can_match_nothing_is_refused_before_the_audit(
    spark: SparkSession, tmp_path: Path, exceptions: list[dict[str, str]], says: str
) -> None:
    done = run_command(tmp_path, build_export(), {"push-auth-oidc": {"exceptions": exceptions}})
    assert done.code == 2, done.stderr
    assert done.stderr.startswith("pushguard audit: error: invalid policy config"), done.stderr
    assert f"push-auth-oidc: {says}" in done.stderr, done.stderr
    assert not done.out.exists()
