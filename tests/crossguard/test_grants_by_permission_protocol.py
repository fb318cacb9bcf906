"""Issue 35, item 9, over the pack's Analyzer protocol as the Pulumi CLI calls it (``Analyze`` per
resource, then ``AnalyzeStack``): grants judged by the permissions a role carries (Workload
Identity User to a pool, Service Account Admin to all authenticated users, Editor and Owner to a
domain on the project; the Pub/Sub service agent's own role), a custom role the pack cannot know
listed as not checked, never passed; and the query-token names ``x-api-key``, ``code`` and
``hub.verify_token`` (``pushguard analyze``: tests/analyze/test_grants_by_permission_state.py;
the audit: tests/audit/test_missed_and_misread.py)."""

from __future__ import annotations

from typing import Any

import pytest

from pushguard.gate.analyzer import AnalyzerResource, Diagnostic, PolicyPackProcess
from pushguard.rules import RULES
from tests.crossguard.wire import (
    AGENT,
    PUSH_SA,
    account,
    push_config,
    resource,
    sa_member,
    subscription,
    token_creator,
)
from tests.helpers import NUMBER, PROJECT

BROAD = "push-sa-broad-grants"
AGENT_RULE = "push-agent-token-creator"
ON_ACCOUNT = f"projects/{PROJECT}/serviceAccounts/{PUSH_SA}"
POOL = (
    f"principalSet://iam.googleapis.com/projects/{NUMBER}/locations/global/"
    "workloadIdentityPools/github/*"
)
SETTINGS = {"projectNumbers": {PROJECT: NUMBER}}


def project_member(name: str, role: str, member: str) -> AnalyzerResource:
    return resource(
        "gcp:projects/iAMMember:IAMMember",
        name,
        {"project": PROJECT, "role": role, "member": member},
    )


def _run(
    pack: PolicyPackProcess, *resources: AnalyzerResource
) -> tuple[list[Diagnostic], dict[str, str]]:
    """Every policy configured with the project's number; the diagnostics of both halves and
    the not-checked reasons by policy."""
    pack.configure({rule.id: dict(SETTINGS) for rule in RULES})
    found = [d for r in resources for d in pack.analyze(r)]
    found += pack.analyze_stack(list(resources))
    return found, {n.policy: n.reason for n in pack.not_applicable}


def _of(found: list[Diagnostic], policy: str) -> list[str]:
    return sorted({d.message for d in found if d.policy == policy})


@pytest.mark.parametrize(
    ("grant", "carries"),
    [
        (
            sa_member("wif", ON_ACCOUNT, "roles/iam.workloadIdentityUser", POOL),
            "iam.serviceAccounts.getOpenIdToken, iam.serviceAccounts.getAccessToken",
        ),
        (
            sa_member(
                "admin", ON_ACCOUNT, "roles/iam.serviceAccountAdmin", "allAuthenticatedUsers"
            ),
            "iam.serviceAccounts.setIamPolicy",
        ),
        (
            project_member("editors", "roles/editor", "domain:example.com"),
            "iam.serviceAccounts.actAs",
        ),
        (
            project_member("owners", "roles/owner", "domain:example.com"),
            "iam.serviceAccounts.actAs, iam.serviceAccounts.setIamPolicy",
        ),
    ],
    ids=["workload-identity-user-to-a-pool", "admin-to-all-authenticated", "editor", "owner"],
)
def test_a_broad_grant_of_a_role_by_its_permissions_is_a_violation(
    pack: PolicyPackProcess, grant: AnalyzerResource, carries: str
) -> None:
    """Before: no diagnostic (only token creator and service account user were known)."""
    found, _ = _run(pack, subscription(), account(), token_creator(), grant)
    [message] = _of(found, BROAD)
    role, member = grant.properties["role"], grant.properties["member"]
    assert f"{member} holds {role}" in message and f"which carries {carries}," in message
    assert {d.level for d in found if d.policy == BROAD} == {"advisory"}


def test_a_custom_role_to_all_users_is_not_checked_never_passed(pack: PolicyPackProcess) -> None:
    """Before: passed in silence. The pack cannot read a custom role's permissions."""
    custom = f"projects/{PROJECT}/roles/pushHelper"
    found, unchecked = _run(
        pack,
        subscription(),
        account(),
        token_creator(),
        sa_member("c", ON_ACCOUNT, custom, "allUsers"),
    )
    assert _of(found, BROAD) == []
    assert f"allUsers holds {custom}" in unchecked[BROAD]
    assert f"{custom} is a custom role" in unchecked[BROAD]


def test_the_service_agents_own_role_on_the_project_lets_it_sign(pack: PolicyPackProcess) -> None:
    """Before: a violation. ``roles/pubsub.serviceAgent`` carries getOpenIdToken; a custom role
    of the agent is not checked rather than missing."""
    agent_role = project_member("agent", "roles/pubsub.serviceAgent", AGENT)
    found, _ = _run(pack, subscription(), account(), agent_role)
    assert _of(found, AGENT_RULE) == []
    custom = sa_member("c", ON_ACCOUNT, f"projects/{PROJECT}/roles/signer", AGENT)
    found, unchecked = _run(pack, subscription(), account(), custom)
    assert _of(found, AGENT_RULE) == []
    assert "roles/signer is a custom role" in unchecked[AGENT_RULE]


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("x-api-key=k3y", "x-api-key"),
        ("code=func-k3y", "code"),
        ("hub.mode=subscribe&hub.verify_token=t0k", "hub.verify_token"),
    ],
)
def test_the_query_token_names_of_known_endpoints(
    pack: PolicyPackProcess, query: str, name: str
) -> None:
    """Before: no diagnostic."""
    endpoint: Any = f"https://hooks.example.com/push?{query}"
    sub = subscription(pushConfig=push_config(endpoint=endpoint))
    found, _ = _run(pack, sub, account(), token_creator())
    [message] = _of(found, "push-no-query-token")
    assert f"(parameter {name})" in message
    assert "k3y" not in message and "t0k" not in message
