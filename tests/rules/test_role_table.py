"""The generated table of Google's predefined roles (pushguard/rules/role_table.py) and the script
that writes it (scripts/generate_role_table.py), run as a maintainer runs it on real ``gcloud``
output (tests/fixtures/iam_roles/, a part of iann0036/iam-dataset; provenance in
tests/fixtures/README.md); and what the grant rules make of roles the table does not know."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pushguard.rules import push_agent_token_creator, push_sa_broad_grants, role_table
from pushguard.rules.base import Status
from pushguard.rules.facts import IamGrant, SubscriptionFacts
from pushguard.rules.iam import IMPERSONATION_PERMISSIONS, is_broad_member, role_permissions
from tests.rules.cases import BASE

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "generate_role_table.py"
FIXTURE = ROOT / "tests" / "fixtures" / "iam_roles"
SOURCE = "https://github.com/iann0036/iam-dataset/tree/2073fa52ac008a45477aa0b1b4580cd99135bf60/gcp"


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generate(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["--list", str(FIXTURE / "predefined_roles.json"), "--roles", str(FIXTURE / "roles")]
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--source", SOURCE, "--out", str(out), *extra],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_script_writes_the_table_from_gcloud_output(tmp_path: Path) -> None:
    out = tmp_path / "table.py"
    done = _generate(out, "--date", "2026-08-22")
    assert done.returncode == 0, done.stderr
    table = _load(out, "generated_table")
    assert (table.SOURCE, table.DATE) == (SOURCE, "2026-08-22")
    assert table.CARRYING == {
        "roles/iam.serviceAccountAdmin": ("setIamPolicy",),
        "roles/iam.serviceAccountTokenCreator": (
            "getOpenIdToken", "getAccessToken", "implicitDelegation", "signJwt", "signBlob",
        ),
        "roles/iam.workloadIdentityUser": ("getOpenIdToken", "getAccessToken"),
        "roles/pubsub.serviceAgent": (
            "getOpenIdToken", "getAccessToken", "implicitDelegation", "signJwt", "signBlob",
        ),
    }  # fmt: skip
    # a role without includedPermissions carries none; a listed role without its file is unread;
    # the file of a role the list no longer names (removed) is not read
    none, unread = table.CARRYING_NONE, table.UNREAD
    assert none == {
        "roles/iam.serviceAccountViewer",
        "roles/spanner.databaseRoleUser",
    }
    assert unread == {"roles/admin"}
    assert "featurestoreResourceEditor" not in out.read_text()
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


def test_the_script_refuses_what_gcloud_does_not_write(tmp_path: Path) -> None:
    bad = tmp_path / "roles"
    bad.mkdir()
    (bad / "x.json").write_text(json.dumps({"name": "roles/x", "includedPermissions": "all"}))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--list", str(FIXTURE / "predefined_roles.json"),
         "--roles", str(bad), "--source", SOURCE, "--date", "2026-08-22",
         "--out", str(tmp_path / "t.py")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "includedPermissions is not a list" in done.stderr
    assert not (tmp_path / "t.py").exists()
    assert _generate(tmp_path / "t.py", "--date", "22/08/2026").returncode == 2


def test_the_committed_table_is_the_scripts_output_of_its_own_data() -> None:
    """Nobody edited the table by hand: rendering its contents again gives the file."""
    script = _load(SCRIPT, "generate_role_table")
    roles = {name: frozenset(perms) for name, perms in role_table.CARRYING.items()}
    roles |= {name: frozenset() for name in role_table.CARRYING_NONE}
    text = script.render(roles, role_table.UNREAD, role_table.SOURCE, role_table.DATE)
    assert text == (ROOT / "pushguard" / "rules" / "role_table.py").read_text()


@pytest.mark.parametrize(
    ("role", "carries"),
    [
        # Google's IAM roles reference (https://cloud.google.com/iam/docs/roles-permissions)
        ("roles/iam.serviceAccountTokenCreator", {"getOpenIdToken", "getAccessToken", "signJwt"}),
        ("roles/iam.serviceAccountUser", {"actAs"}),
        ("roles/iam.workloadIdentityUser", {"getOpenIdToken", "getAccessToken"}),
        ("roles/iam.serviceAccountAdmin", {"setIamPolicy"}),
        ("roles/editor", {"actAs"}),
        ("roles/owner", {"actAs", "setIamPolicy"}),
        ("roles/viewer", set()),
        ("roles/iam.serviceAccountViewer", set()),
    ],
)
def test_the_table_holds_what_the_reference_says(role: str, carries: set[str]) -> None:
    found = role_permissions(IamGrant(role=role, member="allUsers"))
    assert found is not None and found >= {f"iam.serviceAccounts.{p}" for p in carries}
    assert bool(found) == bool(carries)
    assert found <= IMPERSONATION_PERMISSIONS


def test_a_role_the_table_does_not_know_is_undecided_never_passed() -> None:
    for role, why in (
        ("organizations/1/roles/custom", "is a custom role"),
        ("roles/admin", "lists roles/admin without its permissions"),
        ("roles/newService.newRole", "is not in pushguard's table"),
    ):
        facts = SubscriptionFacts(
            **{**BASE, "push_auth_account_grants": (IamGrant(role=role, member="allUsers"),)}
        )
        [result] = push_sa_broad_grants.check(facts)
        assert result.status is Status.UNKNOWN and "not checked" in result.message, role
        assert why in result.message, result.message
    facts = SubscriptionFacts(
        **{
            **BASE,
            "push_auth_account_grants": (
                IamGrant(role="projects/p/roles/signer", member=_agent()),
            ),
        }
    )
    [result] = push_agent_token_creator.check(facts)
    assert result.status is Status.UNKNOWN and "projects/p/roles/signer" in result.message


def _agent() -> str:
    facts = SubscriptionFacts(**BASE)
    member = facts.service_agent_member()
    assert member is not None
    return member


@pytest.mark.parametrize(
    ("member", "broad"),
    [
        ("allUsers", True),
        ("allauthenticatedusers", True),
        ("domain:example.com", True),
        ("principalSet://iam.googleapis.com/locations/global/workforcePools/p/*", True),
        ("principalSet://cloudresourcemanager.googleapis.com/projects/1/type/ServiceAccount", True),
        ("principal://iam.googleapis.com/locations/global/workforcePools/p/subject/a", False),
        ("group:ops@example.com", False),
        ("serviceAccount:a@p.iam.gserviceaccount.com", False),
    ],
)
def test_broad_members_are_those_that_stand_for_many(member: str, broad: bool) -> None:
    """https://cloud.google.com/iam/docs/principal-identifiers"""
    assert is_broad_member(member) is broad


def test_the_rule_reference_names_the_tables_source_and_date() -> None:
    """docs/rules.md is the rules' docstrings: regenerating the table means updating them."""
    for rule in (push_sa_broad_grants, push_agent_token_creator):
        assert rule.__doc__ and "scripts/generate_role_table.py" in rule.__doc__
    doc = push_sa_broad_grants.__doc__ or ""
    assert role_table.SOURCE in doc and f"taken {role_table.DATE}" in doc
