"""Issue 35, item 5: the audit fails closed on what it could not see, through the command as users
run it.

A folder where no line is a Cloud Asset Inventory asset (gcpdiag's REST dumps, in
tests/fixtures/gcpdiag) exits 2 by default, and says so in summary.json, the summary line and
report.html. An export without IAM policies or service perimeters names the rules that could not
fire; ``--fail-on-blind missing-inputs`` makes that exit 2 for the rules ``--fail-on`` gates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from pushguard.audit.coverage import RULE_NEEDS
from pushguard.cli import app
from pushguard.rules import RULES

from . import cai
from .conftest import write_lines

GCPDIAG = Path(__file__).resolve().parents[1] / "fixtures" / "gcpdiag"
ORDERS, ORDERS_N = "acme-orders", "123456789012"
PUSH = f"orders-push@{ORDERS}.iam.gserviceaccount.com"
RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
IAM_RULES = [
    "push-agent-token-creator",
    "push-invoker-binding",
    "push-dead-letter-iam",
    "push-sa-broad-grants",
    "push-target-requires-auth",
]


@dataclass
class Run:
    code: int
    output: str
    out: Path

    @property
    def summary(self) -> dict[str, Any]:
        return json.loads((self.out / "summary.json").read_text())

    @property
    def report(self) -> str:
        return (self.out / "report.html").read_text()


def audit(*args: str) -> Run:
    out = Path(args[args.index("--out") + 1])
    result = CliRunner().invoke(app, ["audit", *args])
    return Run(result.exit_code, result.output, out)


def test_every_rule_says_what_it_needs() -> None:
    assert list(RULE_NEEDS) == [rule.id for rule in RULES]


def test_a_folder_with_no_asset_fails_closed(spark: SparkSession, tmp_path: Path) -> None:
    files = sorted(p for p in GCPDIAG.rglob("*.json"))
    assert len(files) == 19
    blind = audit(str(GCPDIAG), "--out", str(tmp_path / "a"))
    assert blind.code == 2, blind.output
    assert "error: nothing could be read" in blind.output
    assert "NOTHING COULD BE READ" in blind.output  # the summary line
    coverage = blind.summary["coverage"]
    assert coverage["nothing_read"] is True
    assert coverage["read"] == {"iam-policies": 0, "service-perimeters": 0, "subscriptions": 0}
    assert blind.summary["lines"] == {"read": 19, "parsed": 0, "quarantined": 19, "blank": 0}
    assert "<b>Nothing could be read</b>" in blind.report
    # reported, not failed, when asked
    told = audit(str(GCPDIAG), "--out", str(tmp_path / "b"), "--fail-on-blind", "never")
    assert told.code == 0, told.output
    assert told.summary["coverage"]["nothing_read"] is True
    assert "NOTHING COULD BE READ" in told.output


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Resources only: no IAM policy, no service perimeter (the README's old export example)."""
    folder = tmp_path_factory.mktemp("resources-only")
    write_lines(
        folder / "resource.json",
        [
            cai.folder(),
            cai.project(ORDERS, ORDERS_N),
            cai.subscription(ORDERS, ORDERS_N, "authenticated", RUN_URL, PUSH, "orders"),
            cai.subscription(ORDERS, ORDERS_N, "no-oidc", RUN_URL),
        ],
    )
    return folder


def test_no_perimeter_and_no_iam_policy_read_are_stated(
    spark: SparkSession, export: Path, tmp_path: Path
) -> None:
    run = audit(str(export), "--out", str(tmp_path / "o"))
    assert run.code == 1, run.output  # the mandatory push-auth-oidc finding; blindness reported
    coverage = run.summary["coverage"]
    assert coverage["nothing_read"] is False
    assert coverage["read"] == {"iam-policies": 0, "service-perimeters": 0, "subscriptions": 2}
    assert coverage["missing"] == {
        "iam-policies": IAM_RULES,
        "service-perimeters": ["push-vpcsc-default-url"],
    }
    assert coverage["organizations"] == [cai.ORG]
    assert (
        "not seen: no IAM policies read (push-agent-token-creator, push-invoker-binding, "
        "push-dead-letter-iam, push-sa-broad-grants, push-target-requires-auth; export them with "
        "gcloud asset export --content-type=iam-policy); no VPC Service Controls service "
        "perimeters read (push-vpcsc-default-url; export them with gcloud asset export "
        "--organization=ORG_ID --content-type=access-policy)"
    ) in run.output
    assert "What the audit could not see" in run.report
    assert (
        "<code>gcloud asset export --organization=ORG_ID --content-type=access-policy</code>"
        in (run.report)
    )


def test_missing_inputs_fail_the_gate_when_asked(
    spark: SparkSession, export: Path, tmp_path: Path
) -> None:
    gated = audit(str(export), "--out", str(tmp_path / "a"), "--fail-on-blind", "missing-inputs")
    assert gated.code == 2, gated.output
    assert "a rule --fail-on gates could not see its inputs" in gated.output
    assert "(push-vpcsc-default-url;" in gated.output.split("error:", 1)[1]
    assert "push-agent-token-creator" not in gated.output.split("error:", 1)[1]  # advisory
    # perimeters declared in the policy config: the perimeter rule is not blind; the IAM rules
    # are advisory, which --fail-on mandatory does not gate
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"push-vpcsc-default-url": {"perimeterProjects": ["acme-pay"]}}))
    declared = audit(
        str(export),
        "--out",
        str(tmp_path / "b"),
        "--fail-on-blind",
        "missing-inputs",
        "--policy-config",
        str(config),
    )
    assert declared.code == 1, declared.output
    assert declared.summary["coverage"]["missing"] == {"iam-policies": IAM_RULES}
