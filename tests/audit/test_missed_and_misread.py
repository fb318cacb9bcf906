"""Issue 35, item 9 ("missed and misread"), through ``pushguard audit EXPORT --stacks STATE`` as a
user runs it, over one export in the real CAI shapes (tests/audit/cai.py; the custom roles in
the shape of forseti's ``iam.googleapis.com/Role`` lines, tests/fixtures/cai/forseti/):

- grants judged by the permissions a role carries, not by three role names: Workload Identity
  User to a ``principalSet://`` pool, Service Account Admin to ``allAuthenticatedUsers``, Editor
  and Owner to a ``domain:``, a custom role the export describes; a custom role it does not
  describe is undecided, never passed; the Pub/Sub service agent's own role carries the token
  permission;
- the query-token names ``x-api-key``, ``code`` and ``hub.verify_token``;
- a subscription named by its project's number, resolved through the export's project assets;
- drift that ignores the ``x-goog-version`` Pub/Sub sets itself.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from pushguard.audit import command

from . import cai
from .conftest import write_lines
from .states import Stack, push_config, write

ORDERS, ORDERS_N = "acme-orders", "123456789012"
EDIT, EDIT_N = "acme-edit", "444555666777"
SHARED, SHARED_N = "acme-shared", "222333444555"
UNKNOWN_N = "555666777888"  # a project the export holds no asset of
RUN = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
POOL = (
    f"principalSet://iam.googleapis.com/projects/{ORDERS_N}/locations/global/"
    "workloadIdentityPools/github/*"
)
SA_GET = "iam.serviceAccounts.get"


def _sa(project: str, number: str, account_id: str, uid: str) -> tuple[dict[str, Any], str]:
    asset = cai.service_account(project, number, account_id, uid)
    return asset, asset["resource"]["data"]["email"]


def custom_role(parent: str, role_id: str, *permissions: str) -> dict[str, Any]:
    """A custom role as CAI exports it (forseti's ``mock_cai_resources.dump`` lines)."""
    return {
        "name": f"//iam.googleapis.com/{parent}/roles/{role_id}",
        "asset_type": "iam.googleapis.com/Role",
        "resource": {
            "parent": f"{cai.CRM}{parent}",
            "data": {
                "name": f"{parent}/roles/{role_id}",
                "title": role_id,
                "includedPermissions": list(permissions),
                "etag": "BwVdgFmZ7Dg=",
            },
        },
    }


GRANTED = {
    # account id: (role, member) granted on the account (besides the agent's token creator)
    "wif": ("roles/iam.workloadIdentityUser", POOL),
    "admin": ("roles/iam.serviceAccountAdmin", "allAuthenticatedUsers"),
    "custom": (f"projects/{ORDERS}/roles/pushImpersonator", "allUsers"),
    "harmless": (f"{cai.ORG}/roles/accountReader", "allUsers"),
    "unlisted": (f"{cai.ORG}/roles/notExported", "allUsers"),
    "viewer": ("roles/iam.serviceAccountViewer", "allUsers"),
}


def _grant_cases() -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Accounts in ORDERS with one broad grant each, and their subscriptions."""
    assets, emails = [], {}
    for n, (account, (role, member)) in enumerate(sorted(GRANTED.items())):
        asset, email = _sa(ORDERS, ORDERS_N, f"{account}-push", str(5000 + n))
        emails[account] = email
        creator = ("roles/iam.serviceAccountTokenCreator", [cai.agent(ORDERS_N)])
        assets += [
            asset,
            cai.iam(asset, creator, (role, [member])),
            cai.subscription(ORDERS, ORDERS_N, f"grant-{account}", RUN, email, "orders"),
        ]
    return assets, emails


def _agent_cases() -> list[dict[str, Any]]:
    """The Pub/Sub service agent granted the token permission through a custom role the export
    describes, through one it does not, and through its own predefined role on the project."""
    signer, signer_email = _sa(ORDERS, ORDERS_N, "signer-push", "6001")
    hidden, hidden_email = _sa(ORDERS, ORDERS_N, "hidden-push", "6002")
    edit, edit_email = _sa(EDIT, EDIT_N, "edit-push", "6003")
    return [
        signer,
        cai.iam(signer, (f"projects/{ORDERS}/roles/pushSigner", [cai.agent(ORDERS_N)])),
        cai.subscription(ORDERS, ORDERS_N, "agent-custom", RUN, signer_email, "orders"),
        hidden,
        cai.iam(hidden, (f"projects/{ORDERS}/roles/notExported", [cai.agent(ORDERS_N)])),
        cai.subscription(ORDERS, ORDERS_N, "agent-unlisted", RUN, hidden_email, "orders"),
        edit,
        cai.iam(
            cai.project(EDIT, EDIT_N),
            ("roles/pubsub.serviceAgent", [cai.agent(EDIT_N)]),
            ("roles/editor", ["domain:example.com"]),
            ("roles/owner", ["domain:example.org"]),
        ),
        cai.subscription(EDIT, EDIT_N, "basic-roles", RUN, edit_email, "orders"),
    ]


def _named_by_number(orders_email: str) -> list[dict[str, Any]]:
    """Subscriptions whose asset names hold their project's number."""
    shared_number = cai.subscription(SHARED_N, SHARED_N, "cross-by-number", RUN, orders_email, "o")
    unknown = cai.subscription(UNKNOWN_N, UNKNOWN_N, "unknown-by-number", RUN, orders_email, "o")
    return [
        cai.subscription(ORDERS_N, ORDERS_N, "by-number", RUN, orders_email, "orders"),
        shared_number,
        unknown,
    ]


def _query_tokens() -> list[dict[str, Any]]:
    hooks = "https://hooks.example.com/push"
    return [
        cai.subscription(ORDERS, ORDERS_N, "x-api-key", f"{hooks}?x-api-key=k3y-value"),
        cai.subscription(ORDERS, ORDERS_N, "azure-code", f"{hooks}?code=func-k3y"),
        cai.subscription(
            ORDERS, ORDERS_N, "verify-token", f"{hooks}?hub.mode=subscribe&hub.verify_token=t0k"
        ),
        cai.subscription(ORDERS, ORDERS_N, "plain-query", f"{hooks}?region=eu&mode=fast"),
    ]


def _drift_cases(email: str) -> list[dict[str, Any]]:
    """Live subscriptions whose push attributes differ from their stack's only in the version."""
    implicit = cai.subscription(ORDERS, ORDERS_N, "implicit-version", RUN, email, "orders")
    implicit["resource"]["data"]["pushConfig"]["attributes"] = {"x-goog-version": "v1"}
    recorded = cai.subscription(ORDERS, ORDERS_N, "recorded-version", RUN, email, "orders")
    old = cai.subscription(ORDERS, ORDERS_N, "old-format", RUN, email, "orders")
    old["resource"]["data"]["pushConfig"]["attributes"] = {"x-goog-version": "v1beta1"}
    return [implicit, recorded, old]


def build_export(folder: Path) -> tuple[Path, str]:
    orders_sa, orders_email = _sa(ORDERS, ORDERS_N, "orders-push", "1001")
    grants, _ = _grant_cases()
    assets = [
        cai.folder(),
        cai.project(ORDERS, ORDERS_N),
        cai.project(EDIT, EDIT_N),
        cai.project(SHARED, SHARED_N),
        orders_sa,
        cai.iam(orders_sa, ("roles/iam.serviceAccountTokenCreator", [cai.agent(ORDERS_N)])),
        custom_role(
            f"projects/{ORDERS}", "pushImpersonator", SA_GET, "iam.serviceAccounts.getAccessToken"
        ),
        custom_role(cai.ORG, "accountReader", SA_GET),
        custom_role(f"projects/{ORDERS}", "pushSigner", "iam.serviceAccounts.getOpenIdToken"),
        *grants,
        *_agent_cases(),
        *_named_by_number(orders_email),
        *_query_tokens(),
        *_drift_cases(orders_email),
    ]
    return write_lines(folder / "export.json", assets), orders_email


def build_state(folder: Path, email: str) -> Path:
    stack = Stack("orders", "prod")
    stack.subscription(ORDERS, "implicit-version", push_config(RUN, email, "orders"))
    stack.subscription(
        ORDERS,
        "recorded-version",
        push_config(RUN, email, "orders", attributes={"x-goog-version": "v1"}),
    )
    stack.subscription(ORDERS, "old-format", push_config(RUN, email, "orders"))
    stack.subscription(ORDERS, "by-number", push_config(RUN, email, "orders"))
    path = folder / "prod.json"
    write(path, stack.export())
    return path


@dataclass
class Run:
    code: int
    out: Path
    stderr: str

    @property
    def rows(self) -> list[dict[str, Any]]:
        text = (self.out / "findings.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines()]

    def of(self, name: str, rule: str, status: str = "violation") -> list[dict[str, Any]]:
        return [
            r
            for r in self.rows
            if r["asset_name"].endswith(f"/subscriptions/{name}")
            and r["rule_id"] == rule
            and r["status"] == status
        ]


@pytest.fixture(scope="module")
def audited(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("missed")
    export, email = build_export(tmp / "in")
    state = build_state(tmp / "states", email)
    stderr = io.StringIO()
    with redirect_stdout(io.StringIO()):
        code = command.run([str(export)], str(tmp / "out"), stacks=[str(state)], stderr=stderr)
    return Run(code, tmp / "out", stderr.getvalue())


BROAD = "push-sa-broad-grants"
AGENT = "push-agent-token-creator"


@pytest.mark.parametrize(
    ("subscription", "permissions"),
    [
        ("grant-wif", "iam.serviceAccounts.getOpenIdToken, iam.serviceAccounts.getAccessToken"),
        ("grant-admin", "iam.serviceAccounts.setIamPolicy"),
        ("grant-custom", "iam.serviceAccounts.getAccessToken"),
    ],
)
def test_a_broad_member_holding_a_role_by_its_permissions_is_found(
    audited: Run, subscription: str, permissions: str
) -> None:
    """Before: none of these was found (only three role names were)."""
    role, member = GRANTED[subscription.removeprefix("grant-")]
    [found] = audited.of(subscription, BROAD)
    assert found["evidence"]["role"] == role and found["evidence"]["member"] == member
    assert f"which carries {permissions}," in found["message"]


def test_editor_and_owner_to_a_domain_on_the_project_are_found(audited: Run) -> None:
    """Before: passed. Editor carries actAs, Owner actAs and setIamPolicy (the table)."""
    found = {r["evidence"]["role"]: r for r in audited.of("basic-roles", BROAD)}
    assert set(found) == {"roles/editor", "roles/owner"}
    assert found["roles/editor"]["evidence"]["member"] == "domain:example.com"
    assert f"on projects/{EDIT_N}" in found["roles/editor"]["message"]
    assert (
        "carries iam.serviceAccounts.actAs, iam.serviceAccounts.setIamPolicy"
        in (found["roles/owner"]["message"])
    )


def test_a_custom_role_the_export_does_not_describe_is_undecided_never_passed(
    audited: Run,
) -> None:
    """Before: a silent pass. A custom role the export describes and a predefined role that
    carry none of the permissions pass, decided."""
    assert audited.of("grant-unlisted", BROAD) == []
    [undecided] = audited.of("grant-unlisted", BROAD, "unknown")
    assert f"{cai.ORG}/roles/notExported is a custom role" in undecided["message"]
    assert "not checked" in undecided["message"]
    for name in ("grant-harmless", "grant-viewer"):
        assert audited.of(name, BROAD) == [] and audited.of(name, BROAD, "unknown") == []


def test_the_agent_is_judged_by_the_token_permission_of_its_role(audited: Run) -> None:
    """Before: a violation for both; the service agent's own role and a custom role with
    getOpenIdToken let Pub/Sub sign, one the export does not describe cannot be judged."""
    assert audited.of("agent-custom", AGENT) == []
    assert audited.of("basic-roles", AGENT) == []
    assert audited.of("agent-unlisted", AGENT) == []
    [undecided] = audited.of("agent-unlisted", AGENT, "unknown")
    assert f"projects/{ORDERS}/roles/notExported" in undecided["message"]


@pytest.mark.parametrize(
    ("subscription", "parameter"),
    [("x-api-key", "x-api-key"), ("azure-code", "code"), ("verify-token", "hub.verify_token")],
)
def test_the_query_token_names_of_known_endpoints_are_found(
    audited: Run, subscription: str, parameter: str
) -> None:
    """Before: none of the three was found; a query of other names still passes."""
    [found] = audited.of(subscription, "push-no-query-token")
    assert found["evidence"]["parameters"] == parameter
    assert not any(secret in json.dumps(audited.rows) for secret in ("k3y-value", "func-k3y"))
    assert audited.of("plain-query", "push-no-query-token") == []


def test_a_subscription_named_by_number_is_in_its_own_project(audited: Run) -> None:
    """Before: push-sa-same-project said the account of acme-orders was not in project
    123456789012's; the export's project asset names that project acme-orders."""
    assert audited.of("by-number", "push-sa-same-project") == []
    rows = [r for r in audited.rows if r["asset_name"].endswith("/subscriptions/by-number")]
    assert rows and {r["project_id"] for r in rows} == {ORDERS}
    # its stack names it by ID: managed, not "unmanaged" (and the stack's not "deleted")
    assert audited.of("by-number", "push-unmanaged") == []
    assert audited.of("by-number", "push-state-drift") == []


def test_named_by_number_another_project_is_still_another_project(audited: Run) -> None:
    [found] = audited.of("cross-by-number", "push-sa-same-project")
    assert found["evidence"]["subscription_project"] == SHARED
    assert audited.of("unknown-by-number", "push-sa-same-project") == []
    [undecided] = audited.of("unknown-by-number", "push-sa-same-project", "unknown")
    assert "project ID is not known" in undecided["message"]


def test_drift_ignores_the_version_pubsub_sets_itself(audited: Run) -> None:
    """Before: both reported as drift of ``attributes``; a real change of format still is."""
    assert audited.of("implicit-version", "push-state-drift") == []
    assert audited.of("recorded-version", "push-state-drift") == []
    [old] = audited.of("old-format", "push-state-drift")
    assert old["evidence"]["fields"] == "attributes"
    assert "x-goog-version=v1beta1" in old["message"]
