"""``--guardrails``' scope without Spark: one subscription row, as the executors see it, against
policies whose scope the export cannot fully decide (tags that exempt, ancestors it does not
give, another organisation). The route through ``pushguard audit`` is in test_guardrails.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pushguard.audit.guardrails.files import load_guardrails
from pushguard.audit.guardrails.verdict import rows_of

from . import cai
from .test_guardrails import CONSTRAINTS, ORG_ID, _policy, write_dir

ROW = {
    "asset_name": "//pubsub.googleapis.com/projects/acme-x/subscriptions/plain",
    "project_id": "acme-x",
    "project_number": "100000000009",
    "ancestors": ["projects/100000000009", cai.FOLDER, cai.ORG],
    "data": {"pushConfig": {"pushEndpoint": "http://x.example/push"}, "topic": None},
}


def _rows(tmp_path: Path, policies: dict, **row: object) -> dict[str, dict]:
    folder = write_dir(tmp_path / "g", {"https": CONSTRAINTS["https"]}, policies)
    return {r["status"]: r for r in rows_of({**ROW, **row}, load_guardrails(folder))}


def test_a_tag_that_exempts_is_unknown_and_said_so(tmp_path: Path) -> None:
    tag = f"resource.matchTag('{ORG_ID}/env', 'sandbox')"
    spec = {"rules": [{"enforce": True}, {"enforce": False, "condition": {"expression": tag}}]}
    rows = _rows(tmp_path, {"p": _policy(cai.ORG, "custom.pushHttpsOnly", spec=spec)})
    assert set(rows) == {"unknown"}
    assert f"applies except where the tag condition {tag} holds" in rows["unknown"]["reason"]


def test_ancestors_the_export_does_not_give_leave_a_folder_policy_undecided(
    tmp_path: Path,
) -> None:
    policies = {
        "p": _policy(cai.FOLDER, "custom.pushHttpsOnly", spec={"rules": [{"enforce": True}]})
    }
    rows = _rows(tmp_path, policies, ancestors=[])
    assert set(rows) == {"unknown"}
    assert "folders and organisation" in rows["unknown"]["reason"]
    # the project's own policy decides without them
    policies["q"] = _policy("projects/acme-x", "custom.pushHttpsOnly", spec={"reset": True})
    assert set(_rows(tmp_path, policies, ancestors=[])) == {"out-of-scope"}


@pytest.mark.parametrize("organization", ["organizations/999", cai.ORG])
def test_a_constraint_applies_in_its_own_organisation_only(
    tmp_path: Path, organization: str
) -> None:
    policies = {
        "p": _policy(organization, "custom.pushHttpsOnly", spec={"rules": [{"enforce": True}]})
    }
    ancestors = ["projects/100000000009", "folders/1", organization]
    rows = _rows(tmp_path, policies, ancestors=ancestors)
    assert set(rows) == ({"denied"} if organization == cai.ORG else {"out-of-scope"})
