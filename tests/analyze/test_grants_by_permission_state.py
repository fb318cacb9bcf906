"""Issue 35, item 9, in ``pushguard analyze`` as users run it on a ``pulumi stack export`` file:
grants judged by the permissions a role carries (Workload Identity User to a pool, Service
Account Admin to all authenticated users, Editor and Owner to a domain on the project), a
custom role listed as not checked, never passed, and the query-token names ``x-api-key``,
``code`` and ``hub.verify_token`` (the pack's end: tests/crossguard/
test_grants_by_permission_protocol.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.gate.result import ResourceRecord
from pushguard.rules import RULES
from tests.routes import deployed_state

ROOT = "urn:pulumi:prod::team::pulumi:pulumi:Stack::team-prod"
PROJECT, NUMBER = "acme-orders", "123456789012"
SA = f"orders-push@{PROJECT}.iam.gserviceaccount.com"
AGENT = f"serviceAccount:service-{NUMBER}@gcp-sa-pubsub.iam.gserviceaccount.com"
RUN = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
HOOKS = "https://hooks.example.com/push"
POOL = (
    f"principalSet://iam.googleapis.com/projects/{NUMBER}/locations/global/"
    "workloadIdentityPools/github/*"
)
CUSTOM = f"projects/{PROJECT}/roles/pushHelper"


def _record(kind: str, name: str, props: dict[str, Any]) -> ResourceRecord:
    return ResourceRecord(
        urn=f"urn:pulumi:prod::team::{kind}::{name}",
        type=kind,
        name=name,
        parent=ROOT,
        custom=True,
        provider="",
        inputs=props,
        dependencies=(),
        property_dependencies={},
        outputs={**props, "id": name},
    )


def _subscription(name: str, account: str, endpoint: str = RUN) -> ResourceRecord:
    return _record(
        "gcp:pubsub/subscription:Subscription",
        name,
        {
            "name": name,
            "project": PROJECT,
            "topic": f"projects/{PROJECT}/topics/orders",
            "pushConfig": {
                "pushEndpoint": endpoint,
                "oidcToken": {"serviceAccountEmail": account, "audience": "orders"},
            },
        },
    )


def _account(account_id: str) -> tuple[ResourceRecord, str]:
    email = f"{account_id}@{PROJECT}.iam.gserviceaccount.com"
    props = {"accountId": account_id, "project": PROJECT, "email": email}
    return _record("gcp:serviceaccount/account:Account", account_id, props), email


def _on_account(name: str, email: str, role: str, member: str) -> ResourceRecord:
    return _record(
        "gcp:serviceaccount/iAMMember:IAMMember",
        name,
        {
            "serviceAccountId": f"projects/{PROJECT}/serviceAccounts/{email}",
            "role": role,
            "member": member,
        },
    )


def _records() -> list[ResourceRecord]:
    """One account per case, each granted token creator for the agent and one broad grant;
    the project grants Editor and Owner to a domain (every account of the project inherits
    them, so they are judged on each subscription)."""
    records = []
    cases = {
        "wif": ("roles/iam.workloadIdentityUser", POOL),
        "admin": ("roles/iam.serviceAccountAdmin", "allAuthenticatedUsers"),
        "custom": (CUSTOM, "allUsers"),
    }
    for name, (role, member) in cases.items():
        account, email = _account(f"{name}-push")
        records += [
            account,
            _on_account(f"{name}-tc", email, "roles/iam.serviceAccountTokenCreator", AGENT),
            _on_account(f"{name}-broad", email, role, member),
            _subscription(name, email),
        ]
    records.append(
        _record(
            "gcp:projects/iAMMember:IAMMember",
            "editors",
            {"project": PROJECT, "role": "roles/editor", "member": "domain:example.com"},
        )
    )
    plain, email = _account("plain-push")
    records += [
        plain,
        _on_account("plain-tc", email, "roles/iam.serviceAccountTokenCreator", AGENT),
    ]
    for name, query in (
        ("key", "x-api-key=k3y"),
        ("code", "code=k3y"),
        ("hub", "hub.verify_token=k3y"),
    ):
        records.append(_subscription(f"query-{name}", email, f"{HOOKS}?{query}"))
    return records


def _analyze(folder: Path) -> tuple[int, dict[str, Any], str]:
    state = folder / "prod.json"
    state.write_text(json.dumps(deployed_state(_records(), {}, stack="prod")))
    config = folder / "policy-config.json"
    config.write_text(json.dumps({r.id: {"projectNumbers": {PROJECT: NUMBER}} for r in RULES}))
    result = CliRunner().invoke(
        app, ["analyze", str(state), "--policy-config", str(config), "-f", "json"]
    )
    return result.exit_code, json.loads(result.stdout), result.stdout + result.stderr


def _on(stack: dict[str, Any], key: str, policy: str, name: str) -> list[str]:
    field = "message" if key == "violations" else "reason"
    return [
        entry[field]
        for entry in stack[key]
        if entry["policy"] == policy and entry["urn"].endswith(f"::{name}")
    ]


def test_grants_by_permission_and_query_token_names(tmp_path: Path) -> None:
    """Before: none of these was reported (Editor, Workload Identity User and Service Account
    Admin are none of the three role names pushguard knew), the custom role passed in silence
    and the three query names were not secret names."""
    code, report, text = _analyze(tmp_path)
    assert code == 0, text  # every finding here is advisory
    (stack,) = report["stacks"]
    broad = "push-sa-broad-grants"
    [wif_pool] = [m for m in _on(stack, "violations", broad, "wif") if POOL in m]
    assert "roles/iam.workloadIdentityUser" in wif_pool and "getOpenIdToken" in wif_pool
    [admin] = [m for m in _on(stack, "violations", broad, "admin") if "Admin" in m]
    assert "allAuthenticatedUsers holds roles/iam.serviceAccountAdmin" in admin
    assert "iam.serviceAccounts.setIamPolicy" in admin
    for name in ("wif", "admin", "custom"):
        editor = [m for m in _on(stack, "violations", broad, name) if "roles/editor" in m]
        assert editor and "domain:example.com" in editor[0], name
    [custom] = _on(stack, "notChecked", broad, "custom")
    assert f"{CUSTOM} is a custom role" in custom
    assert not [m for m in _on(stack, "violations", broad, "custom") if CUSTOM in m]
    for name, parameter in (("key", "x-api-key"), ("code", "code"), ("hub", "hub.verify_token")):
        [found] = _on(stack, "violations", "push-no-query-token", f"query-{name}")
        assert f"(parameter {parameter})" in found
    assert "k3y" not in text
