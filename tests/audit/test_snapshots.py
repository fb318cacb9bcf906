"""Snapshots, not piles (issue 35, item 3): ``pushguard audit`` over several Cloud Asset
Inventory exports of one organization, run as a user runs it (the CLI), each export in the
folder its ``gcloud asset export`` run wrote and given with its read time (``--snapshot``).

The exports (tests/audit/cai.py shapes): an organization-wide export of 2026-10-01 and one of
2026-11-01 (resources, IAM policies and access policies, as the docs' example exports them), and a
project export of 2026-12-01 of acme-payments only. Between October and November a subscription
was deleted, a broad IAM policy on a push-auth account was removed, acme-orders left the
perimeter and a subscription changed without its ``update_time`` moving; in December one
subscription of acme-payments was deleted.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from pushguard.cli import app

from . import cai
from .conftest import FIXTURES, write_lines

ORDERS, ORDERS_N = "acme-orders", "123456789012"
PAY, PAY_N = "acme-payments", "987654321098"
RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app"
OCT, NOV, DEC = "2026-10-01T06:00:00Z", "2026-11-01T06:00:00+01:00", "2026-12-01T06:00:00Z"
SAME_TIME = "2026-09-30T12:00:00Z"
TOKEN_CREATOR = "roles/iam.serviceAccountTokenCreator"
SUBSCRIPTION = "pubsub.googleapis.com/Subscription"


def _account(project: str, number: str, account_id: str, uid: str) -> tuple[dict, str]:
    asset = cai.service_account(project, number, account_id, uid)
    return asset, asset["resource"]["data"]["email"]


def _sub(project: str, number: str, name: str, endpoint: str, account: str) -> dict[str, Any]:
    asset = cai.subscription(project, number, name, endpoint, account, audience="orders")
    asset["update_time"] = SAME_TIME
    return asset


def _export(folder: Path, resources: list[dict], policies: list[dict], access: list[dict]) -> Path:
    """One organization's export as the docs' example writes it: a file per content type."""
    write_lines(folder / "resource.json", resources)
    write_lines(folder / "iam.json", policies)
    write_lines(folder / "access.json", access)
    return folder


def build(root: Path) -> dict[str, Path]:
    """The three exports (see the module docstring), each in its own folder."""
    push, push_email = _account(ORDERS, ORDERS_N, "orders-push", "1001")
    broad, broad_email = _account(ORDERS, ORDERS_N, "orders-broad", "1002")
    pay, pay_email = _account(PAY, PAY_N, "pay-push", "3001")
    agent = (TOKEN_CREATOR, [cai.agent(ORDERS_N)])
    common = [cai.organization(), cai.folder(), cai.project(ORDERS, ORDERS_N)]
    common += [cai.project(PAY, PAY_N), push, broad]
    run = cai.run_service(ORDERS, ORDERS_N, "orders", RUN_URL)
    common += [pay, run]
    invoker = ("roles/run.invoker", [f"serviceAccount:{push_email}"])
    org_policy = cai.container_iam(
        cai.ORG, "cloudresourcemanager.googleapis.com/Organization", ("roles/viewer", ["x"])
    )
    org_policy["ancestors"] = [cai.ORG]
    subs = {
        "kept": _sub(ORDERS, ORDERS_N, "kept", f"{RUN_URL}/push", push_email),
        "uses-broad": _sub(ORDERS, ORDERS_N, "uses-broad", f"{RUN_URL}/push", broad_email),
        "custom-domain": _sub(ORDERS, ORDERS_N, "custom-domain", "https://o.example/p", push_email),
        "pay-custom": _sub(PAY, PAY_N, "pay-custom", "https://pay.example/p", pay_email),
        "pay-gone": _sub(PAY, PAY_N, "pay-gone", "http://pay.example/p", pay_email),
    }
    october = [
        *common,
        *subs.values(),
        _sub(ORDERS, ORDERS_N, "deleted-since", "http://orders.example/push", push_email),
        _sub(ORDERS, ORDERS_N, "same-time", f"{RUN_URL}/push", push_email),
    ]
    november = [
        *common,
        *subs.values(),
        _sub(ORDERS, ORDERS_N, "same-time", "http://orders.example/push", push_email),
    ]
    policies = [org_policy, cai.iam(push, agent), cai.iam(pay, agent), cai.iam(run, invoker)]
    roots = {
        "oct": _export(
            root / "2026-10-01",
            october,
            [*policies, cai.iam(broad, agent, (TOKEN_CREATOR, ["allUsers"]))],
            [cai.perimeter(ORDERS_N, PAY_N)],
        ),
        "nov": _export(root / "2026-11-01", november, policies, [cai.perimeter(PAY_N)]),
    }
    december = root / "2026-12-01" / "acme-payments"
    write_lines(december / "resource.json", [cai.project(PAY, PAY_N), pay, subs["pay-custom"]])
    roots["dec"] = december
    return roots


@dataclass
class Run:
    code: int
    out: Path
    output: str

    @property
    def summary(self) -> dict[str, Any]:
        return json.loads((self.out / "summary.json").read_text())

    @property
    def findings(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (self.out / "findings.jsonl").read_text().splitlines()]

    def rules(self, name: str) -> set[str]:
        return {
            f["rule_id"]
            for f in self.findings
            if f["asset_name"].endswith(f"/subscriptions/{name}") and f["status"] == "violation"
        }

    def identities(self) -> list[tuple[str, str, str, str]]:
        """What the findings say, without the run's time."""
        return sorted(
            (f["asset_name"], f["rule_id"], f["status"], f["finding_id"]) for f in self.findings
        )


def pushguard_audit(out: Path, *args: str) -> Run:
    result = CliRunner().invoke(app, ["audit", *args, "--out", str(out)])
    return Run(result.exit_code, out, result.output)


def dated(roots: dict[str, Path], out: Path, **renamed: Path) -> Run:
    paths = {**roots, **renamed}
    return pushguard_audit(
        out,
        "--snapshot",
        f"{OCT}={paths['oct']}",
        "--snapshot",
        f"{NOV}={paths['nov']}",
        "--snapshot",
        f"{DEC}={paths['dec']}",
    )


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build(tmp_path_factory.mktemp("snapshots") / "cai")


@pytest.fixture(scope="module")
def snapshots(
    spark: SparkSession, exports: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Run:
    return dated(exports, tmp_path_factory.mktemp("dated") / "out")


def test_a_subscription_deleted_since_is_not_evaluated(snapshots: Run) -> None:
    assert snapshots.code == 1, snapshots.output  # mandatory violations remain (same-time)
    assert not [f for f in snapshots.findings if f["asset_name"].endswith("/deleted-since")]
    assert snapshots.rules("pay-gone") == set()  # deleted in the December project export
    # kept, uses-broad, custom-domain, same-time, pay-custom
    assert snapshots.summary["subscriptions"]["evaluated"] == 5
    gone = snapshots.summary["snapshots"]["not_in_newest_export_by_type"]
    assert gone == {SUBSCRIPTION: 2, "iam.googleapis.com/ServiceAccount": 1}


def test_an_iam_policy_removed_since_grants_nothing(snapshots: Run) -> None:
    assert "push-sa-broad-grants" not in snapshots.rules("uses-broad")


def test_a_project_removed_from_the_perimeter_is_not_flagged(snapshots: Run) -> None:
    assert "push-vpcsc-default-url" not in snapshots.rules("custom-domain")
    assert "push-vpcsc-default-url" in snapshots.rules("pay-custom")  # still inside


def test_the_newer_export_wins_when_update_time_does_not_move(snapshots: Run) -> None:
    assert "push-endpoint-https" in snapshots.rules("same-time")


def test_a_project_export_covers_its_project_only(snapshots: Run) -> None:
    """The December export of acme-payments holds nothing of acme-orders: the November
    organization export still decides for acme-orders' subscriptions."""
    assert snapshots.rules("kept") == set()  # compliant in November
    exports = {
        e["export"].split("/cai/", 1)[1]: e for e in snapshots.summary["snapshots"]["exports"]
    }
    december = exports["2026-12-01/acme-payments/resource.json"]
    assert december["read_time"] == "2026-12-01T06:00:00Z"
    assert december["scopes"] == {"resource": f"projects/{PAY_N}"}
    november = exports["2026-11-01/resource.json"]
    assert november["read_time"] == "2026-11-01T05:00:00Z"  # given at +01:00
    assert november["scopes"] == {"resource": cai.ORG}
    assert exports["2026-11-01/access.json"]["scopes"] == {"perimeter": cai.ORG}


def test_superseded_counts_only_real_copies(snapshots: Run) -> None:
    superseded = snapshots.summary["superseded_by_type"]
    # kept, uses-broad, custom-domain, same-time: their October copies; pay-custom: October's
    # and November's (December's project export lists it); the deleted ones are not copies
    assert superseded[SUBSCRIPTION] == 4 + 2
    assert superseded["accesscontextmanager.googleapis.com/ServicePerimeter"] == 1


def test_renaming_an_export_folder_changes_no_finding(
    spark: SparkSession, exports: dict[str, Path], snapshots: Run, tmp_path: Path
) -> None:
    renamed = tmp_path / "old"
    shutil.copytree(exports["nov"], renamed)
    again = dated(exports, tmp_path / "out", nov=renamed)
    assert again.code == snapshots.code, again.output
    assert again.identities() == snapshots.identities()


def test_a_folder_of_exports_without_read_times_is_refused(
    spark: SparkSession, exports: dict[str, Path], tmp_path: Path
) -> None:
    """`pushguard audit cai/` over two dated folders cannot know which is newer: it names the
    assets and the exports, publishes nothing, and says how to give the read times."""
    pile = pushguard_audit(tmp_path / "out", str(exports["oct"].parent))
    assert pile.code == 2, pile.output
    assert "cannot tell" in pile.output and "--snapshot TIME=PATH" in pile.output
    assert "2026-10-01/" in pile.output and "2026-11-01/" in pile.output
    assert not (tmp_path / "out").exists()


def test_an_access_policy_export_has_no_superseded_copies(
    spark: SparkSession, tmp_path: Path
) -> None:
    """forseti's access-policy export: one policy, two access levels, a perimeter, all named
    after the organization; one export, so nothing is a copy of anything."""
    export = tmp_path / "access"
    export.mkdir()
    shutil.copy(FIXTURES / "forseti" / "mock_cai_access_policies.dump", export / "access.json")
    run = pushguard_audit(tmp_path / "out", str(export))
    assert run.code == 0, run.output
    assert run.summary["superseded_by_type"] == {}
    assert run.summary["assets_by_type"] == {"cloudresourcemanager.googleapis.com/Organization": 5}


def test_a_bad_snapshot_value_is_a_usage_error(tmp_path: Path) -> None:
    run = pushguard_audit(tmp_path / "out", "--snapshot", f"2026-11-01={tmp_path}")
    assert run.code == 2 and "RFC 3339" in run.output
    twice = pushguard_audit(tmp_path / "out", str(tmp_path), "--snapshot", f"{OCT}={tmp_path}")
    assert twice.code == 2 and "given twice" in twice.output
