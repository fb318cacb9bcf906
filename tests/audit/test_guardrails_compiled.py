"""The roll-out of docs/guardrails.md end to end: ``pushguard guardrails`` compiles the rules,
``pushguard audit --guardrails`` says what the compiled constraints would deny on an export, and
that agrees with the audit's own findings: a constraint denies only subscriptions its rule finds
in violation (compiled or partial, never wider), never one Google itself created, and errs on
no subscription shape (pull subscriptions, no ``pushConfig``, no OIDC token)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.guardrails import constraint_id
from pushguard.rules import RULES_BY_ID

from .conftest import write_lines
from .test_guardrails import ORG_ID, _export


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


@pytest.fixture(scope="module")
def rollout(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("rollout")
    compiled = CliRunner().invoke(
        app, ["guardrails", "--organization", ORG_ID, "-o", str(tmp / "guardrails"), "--enforce"]
    )
    assert compiled.exit_code == 0, compiled.output
    export = tmp / "export.json"
    write_lines(export, _export())
    audited = CliRunner().invoke(
        app,
        ["audit", str(export), "--out", str(tmp / "out"), "--guardrails", str(tmp / "guardrails")],
    )
    assert audited.exit_code in (0, 1), audited.output
    return tmp / "out"


def _denied(out: Path) -> dict[str, set[str]]:
    """Constraint ID -> the short names of the subscriptions it would deny."""
    denied: dict[str, set[str]] = {}
    for row in _jsonl(out / "guardrails.jsonl"):
        assert row["status"] == "denied", row  # no error, no unknown: no tags, no odd shapes
        denied.setdefault(row["constraint"], set()).add(row["asset_name"].rsplit("/", 1)[1])
    return denied


def _violations(out: Path) -> dict[str, set[str]]:
    """Rule ID -> the short names of the subscriptions the audit finds in violation."""
    found: dict[str, set[str]] = {}
    for row in _jsonl(out / "findings.jsonl"):
        if row["status"] == "violation":
            found.setdefault(row["rule_id"], set()).add(row["asset_name"].rsplit("/", 1)[1])
    return found


def test_the_compiled_constraints_deny_no_more_than_the_rules_find(rollout: Path) -> None:
    denied, violations = _denied(rollout), _violations(rollout)
    assert denied, "the export holds plain-HTTP pushes: something must be denied"
    by_constraint = {constraint_id(rule): rule_id for rule_id, rule in RULES_BY_ID.items()}
    for constraint, names in denied.items():
        rule_id = by_constraint[constraint.rsplit("/", 1)[-1]]
        assert names <= violations.get(rule_id, set()), (constraint, names, violations)


def test_plain_http_pushes_are_denied_as_the_rule_finds_them(rollout: Path) -> None:
    https = _denied(rollout)[constraint_id(RULES_BY_ID["push-endpoint-https"])]
    assert https == _violations(rollout)["push-endpoint-https"]
    assert {"s-http", "o-http", "l-no-oidc"} <= https


def test_googles_own_subscriptions_are_never_denied(rollout: Path) -> None:
    for names in _denied(rollout).values():
        assert not {n for n in names if n.startswith(("gcb-", "gcf-"))}, names
