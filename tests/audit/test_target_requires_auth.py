"""push-target-requires-auth in the audit: the IAM policy of the Cloud Run service behind a push
endpoint (and of its project) read from a Cloud Asset Inventory export, in a local Spark session."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from . import cai
from .conftest import Audit, audit, write_lines

RULE = "push-target-requires-auth"
ORDERS, ORDERS_N = "acme-orders", "123456789012"
PAY, PAY_N = "acme-payments", "987654321098"
PUBLIC_URL = "https://public-3kq2x7ab9c-ew.a.run.app"
PRIVATE_URL = "https://private-3kq2x7ab9c-ew.a.run.app"
PAY_URL = "https://pay-3kq2x7ab9c-ew.a.run.app"
INVOKER = "roles/run.invoker"
TOKEN_CREATOR = "roles/iam.serviceAccountTokenCreator"


def build_export() -> list[dict]:
    """Three push subscriptions, each to its own Cloud Run service that grants the push-auth
    account the invoker role: ``public`` also grants it to allUsers on the service,
    ``inherited`` to allAuthenticatedUsers on its project, ``private`` to no one else."""
    push = cai.service_account(ORDERS, ORDERS_N, "orders-push", "1001")
    pay_push = cai.service_account(PAY, PAY_N, "pay-push", "3001")
    email = push["resource"]["data"]["email"]
    pay_email = pay_push["resource"]["data"]["email"]
    public = cai.run_service(ORDERS, ORDERS_N, "public", PUBLIC_URL)
    private = cai.run_service(ORDERS, ORDERS_N, "private", PRIVATE_URL)
    pay = cai.run_service(PAY, PAY_N, "pay", PAY_URL)
    return [
        cai.folder(),
        cai.project(ORDERS, ORDERS_N),
        cai.project(PAY, PAY_N),
        push,
        pay_push,
        public,
        private,
        pay,
        cai.iam(push, (TOKEN_CREATOR, [cai.agent(ORDERS_N)])),
        cai.iam(pay_push, (TOKEN_CREATOR, [cai.agent(PAY_N)])),
        cai.iam(public, (INVOKER, [f"serviceAccount:{email}", "allUsers"])),
        cai.iam(private, (INVOKER, [f"serviceAccount:{email}"])),
        cai.iam(pay, (INVOKER, [f"serviceAccount:{pay_email}"])),
        cai.container_iam(
            f"projects/{PAY_N}",
            "cloudresourcemanager.googleapis.com/Project",
            (INVOKER, ["allAuthenticatedUsers"]),
        ),
        cai.subscription(ORDERS, ORDERS_N, "public", f"{PUBLIC_URL}/push", email, "orders"),
        cai.subscription(ORDERS, ORDERS_N, "private", f"{PRIVATE_URL}/push", email, "orders"),
        cai.subscription(PAY, PAY_N, "inherited", f"{PAY_URL}/push", pay_email, "pay"),
    ]


@pytest.fixture(scope="module")
def public_targets(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Audit:
    root = tmp_path_factory.mktemp("public-targets")
    export = write_lines(root / "export" / "resources.json", build_export())
    return audit(spark, [export], root / "out")


def _findings(result: Audit, subscription: str) -> list[dict]:
    return [
        f
        for f in result.findings
        if f["asset_name"].endswith(f"/subscriptions/{subscription}") and f["rule_id"] == RULE
    ]


def test_a_service_that_grants_allusers_its_invoker_role_is_reported(public_targets: Audit) -> None:
    [finding] = _findings(public_targets, "public")
    service = f"//run.googleapis.com/projects/{ORDERS}/locations/europe-west1/services/public"
    assert finding["status"] == "violation" and finding["level"] == "advisory"
    assert finding["field"] == "target"
    assert finding["evidence"] == {
        "target": "public",
        "member": "allUsers",
        "role": INVOKER,
        "resource": service,
    }
    assert (
        f"Cloud Run service public grants {INVOKER} to allUsers on {service}"
        in (finding["message"])
    )
    # the push-auth account may invoke it too: only the public grant is wrong
    assert "push-invoker-binding" not in public_targets.violations("public")


def test_a_grant_inherited_from_the_project_is_reported_where_it_is_made(
    public_targets: Audit,
) -> None:
    [finding] = _findings(public_targets, "inherited")
    assert finding["status"] == "violation"
    assert finding["evidence"]["member"] == "allAuthenticatedUsers"
    assert finding["evidence"]["resource"] == f"projects/{PAY_N}"
    assert f"inherited from projects/{PAY_N}" in finding["message"]


def test_a_service_only_the_push_auth_account_invokes_passes(public_targets: Audit) -> None:
    assert _findings(public_targets, "private") == []
    assert public_targets.violations("private") == set()


def test_the_summary_counts_the_rule(public_targets: Audit) -> None:
    assert public_targets.summary["findings"]["violations_by_rule"][RULE] == 2


def test_an_export_without_iam_policies_decides_no_grant_rule(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A resource-only export (``--content-type=resource``) says nothing of grants: a public
    service is not passed, and no account is said to lack a grant."""
    root = tmp_path_factory.mktemp("resources-only")
    lines = [line for line in build_export() if "iam_policy" not in line]
    result = audit(spark, [write_lines(root / "export" / "resources.json", lines)], root / "out")
    [finding] = _findings(result, "public")
    assert finding["status"] == "unknown"
    assert "IAM grants were not collected" in finding["message"]
    for subscription in ("public", "private", "inherited"):
        assert (
            result.violations(subscription)
            & {
                RULE,
                "push-invoker-binding",
                "push-agent-token-creator",
            }
            == set()
        )
