"""Issue 35, item 4: ``pushguard audit --baseline`` compares like with like, through the command
as users run it.

A baseline finding is resolved only when this run evaluated its asset and its rule: a rule
disabled since, ``--stacks`` not given this time, a line quarantined this time leave it
``not-rechecked`` with the reason, never resolved. A level raised is the finding's own change
(``level-raised``), so a gate on mandatory findings sees it. A baseline of another organisation
or another policy config is refused (exit 2) unless ``--accept-baseline-mismatch``, which the
summary records; a baseline written before these facts were recorded is read, and what it lacks
is said. Baseline basics (new, existing, resolved): tests/audit/test_outputs_survive.py.
"""

from __future__ import annotations

import copy
import json
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from pushguard.cli import app

from . import cai
from .states import Stack, push_config, write

ORDERS, ORDERS_N = "acme-orders", "123456789012"
PUSH = f"orders-push@{ORDERS}.iam.gserviceaccount.com"
RUN_URL = "https://orders-3kq2x7ab9c-ew.a.run.app/push"
NO_OIDC = [f"no-oidc-{n:02d}" for n in range(1, 12)]  # 11 mandatory push-auth-oidc findings


@dataclass
class Run:
    """One ``pushguard audit`` as a user runs it: exit code, output, and its --out read back."""

    code: int
    output: str
    out: Path

    @property
    def summary(self) -> dict[str, Any]:
        return json.loads((self.out / "summary.json").read_text())

    def rows(self, name: str) -> list[dict[str, Any]]:
        text = (self.out / name).read_text()
        return [json.loads(line) for line in text.splitlines()]


def audit(*args: str) -> Run:
    out = Path(args[args.index("--out") + 1])
    result = CliRunner().invoke(app, ["audit", *args])
    return Run(result.exit_code, result.output, out)


def _subscriptions(project: str, number: str) -> list[dict[str, Any]]:
    subs = [cai.subscription(project, number, name, RUN_URL) for name in NO_OIDC]
    subs += [
        # its line is quarantined in the second run
        cai.subscription(project, number, "quarantined", "http://orders.example.com/p"),
        # push-audience-explicit (advisory), raised to mandatory in the second run
        cai.subscription(project, number, "implicit-audience", RUN_URL, PUSH),
        # http in the baseline, https with an audience in the second run: really resolved
        cai.subscription(project, number, "fixed", "http://orders.example.com/p", PUSH, "o"),
        cai.subscription(project, number, "managed", RUN_URL, PUSH, "orders"),
    ]
    return subs


def _lines(assets: list[dict[str, Any]], truncate: str | None = None) -> str:
    """The export's text; the line of the subscription ``truncate`` is cut short (not JSON)."""
    lines = []
    for asset in assets:
        text = cai.line(asset)
        if truncate and asset["name"].endswith(f"/subscriptions/{truncate}"):
            text = text[: len(text) // 2]
        lines.append(text + "\n")
    return "".join(lines)


@pytest.fixture(scope="module")
def runs(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """The baseline (with --stacks), and a second run of the same export against it: the
    ``quarantined`` line cut short, no --stacks, push-auth-oidc disabled, push-audience-explicit
    raised to mandatory, ``fixed`` fixed."""
    root = tmp_path_factory.mktemp("like")
    assets = [cai.folder(), cai.project(ORDERS, ORDERS_N), *_subscriptions(ORDERS, ORDERS_N)]
    (root / "before").mkdir()
    (root / "before" / "export.json").write_text(_lines(assets))
    stack = Stack("orders", "prod")
    stack.subscription(ORDERS, "managed", push_config(RUN_URL, PUSH, "orders"))
    state = write(root / "states" / "orders-prod.json", stack.export())
    baseline = audit(str(root / "before"), "--out", str(root / "baseline"), "--stacks", str(state))
    assert baseline.code == 1, baseline.output

    after = copy.deepcopy(assets)
    fixed = next(a for a in after if a["name"].endswith("/fixed"))
    fixed["resource"]["data"]["pushConfig"]["pushEndpoint"] = RUN_URL
    (root / "after").mkdir()
    (root / "after" / "export.json").write_text(_lines(after, truncate="quarantined"))
    config = root / "policy-config.json"
    config.write_text(
        json.dumps({"push-auth-oidc": "disabled", "push-audience-explicit": "mandatory"})
    )
    second = audit(
        str(root / "after"),
        "--out",
        str(root / "second"),
        "--baseline",
        str(root / "baseline"),
        "--policy-config",
        str(config),
    )
    return {"baseline": baseline, "second": second}


def _gone(run: Run, name: str) -> list[dict[str, Any]]:
    path = run.out / name
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _by_rule(rows: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["rule_id"] == rule]


def test_a_disabled_rule_resolves_nothing(runs: dict[str, Run]) -> None:
    before = _by_rule(runs["baseline"].rows("findings.jsonl"), "push-auth-oidc")
    assert {r["asset_name"].rsplit("/", 1)[1] for r in before} >= set(NO_OIDC)
    second = runs["second"]
    assert not _by_rule(_gone(second, "resolved.jsonl"), "push-auth-oidc")
    not_rechecked = _by_rule(_gone(second, "not_rechecked.jsonl"), "push-auth-oidc")
    assert {r["finding_id"] for r in not_rechecked} == {r["finding_id"] for r in before}
    assert {r["reason"] for r in not_rechecked} == {"rule-disabled"}
    assert second.summary["baseline"]["not_rechecked_by_reason"]["rule-disabled"] == len(before)
    assert len(before) >= 11


def test_without_stacks_the_stack_findings_are_not_rechecked(runs: dict[str, Run]) -> None:
    before = _by_rule(runs["baseline"].rows("findings.jsonl"), "push-unmanaged")
    assert before, "the baseline reports the subscriptions no given stack manages"
    second = runs["second"]
    assert not _by_rule(_gone(second, "resolved.jsonl"), "push-unmanaged")
    rows = _by_rule(_gone(second, "not_rechecked.jsonl"), "push-unmanaged")
    assert {r["finding_id"] for r in rows} == {r["finding_id"] for r in before}
    assert {r["reason"] for r in rows} == {"stacks-not-given"}


def test_a_line_quarantined_this_time_resolves_nothing(runs: dict[str, Run]) -> None:
    before = [
        r
        for r in runs["baseline"].rows("findings.jsonl")
        if r["asset_name"].endswith("/subscriptions/quarantined")
        and r["rule_id"] == "push-endpoint-https"
    ]
    assert before
    second = runs["second"]
    assert second.summary["lines"]["quarantined"] == 1
    resolved = _gone(second, "resolved.jsonl")
    assert not [r for r in resolved if r["asset_name"].endswith("/subscriptions/quarantined")]
    [row] = [
        r
        for r in _gone(second, "not_rechecked.jsonl")
        if r["finding_id"] == before[0]["finding_id"]
    ]
    assert row["reason"] == "line-quarantined"


def test_a_finding_fixed_is_still_resolved(runs: dict[str, Run]) -> None:
    second = runs["second"]
    resolved = _gone(second, "resolved.jsonl")
    assert [(r["asset_name"].rsplit("/", 1)[1], r["rule_id"]) for r in resolved] == [
        ("fixed", "push-endpoint-https")
    ]
    counts = second.summary["baseline"]
    assert counts["resolved"] == 1
    assert counts["not_rechecked"] == sum(counts["not_rechecked_by_reason"].values())
    assert "1 resolved" in second.output and "not rechecked (" in second.output
    report = (second.out / "report.html").read_text()
    assert "not_rechecked.jsonl" in report and "<code>rule-disabled</code>" in report


def test_a_raised_level_is_its_own_change_and_fails_the_gate(runs: dict[str, Run]) -> None:
    second = runs["second"]
    [raised] = [
        r for r in second.rows("findings.jsonl") if r["rule_id"] == "push-audience-explicit"
    ]
    assert raised["level"] == "mandatory" and raised["change"] == "level-raised"
    assert second.summary["baseline"]["level_raised"] == 1
    assert second.summary["findings"]["violations_by_level"] == {"mandatory": 1}
    assert second.code == 1  # --fail-on mandatory: the raised finding is a mandatory violation
    assert "1 raised to a higher level" in second.output
    report = (second.out / "report.html").read_text()
    assert '<tr class="finding level-raised"><td>level-raised</td>' in report


def _other_org(asset: dict[str, Any]) -> dict[str, Any]:
    moved = copy.deepcopy(asset)
    moved["ancestors"] = [
        "organizations/999888777" if a.startswith("organizations/") else a
        for a in moved.get("ancestors", [])
    ]
    return moved


def test_a_baseline_of_another_organisation_is_refused_unless_accepted(
    runs: dict[str, Run], tmp_path: Path
) -> None:
    other = [_other_org(a) for a in [cai.project("globex-web", "555666777888")]]
    other += [_other_org(a) for a in _subscriptions("globex-web", "555666777888")]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "export.json").write_text(_lines(other))
    baseline = str(runs["baseline"].out)
    refused = audit(str(tmp_path / "in"), "--out", str(tmp_path / "a"), "--baseline", baseline)
    assert refused.code == 2, refused.output
    assert "another organisation or policy config" in refused.output
    assert "organizations/111222333" in refused.output
    assert "organizations/999888777" in refused.output
    assert "--accept-baseline-mismatch" in refused.output
    assert not (tmp_path / "a").exists()  # nothing published

    accepted = audit(
        str(tmp_path / "in"),
        "--out",
        str(tmp_path / "b"),
        "--baseline",
        baseline,
        "--accept-baseline-mismatch",
    )
    counts = accepted.summary["baseline"]
    assert counts["mismatch_accepted"] == [
        "organizations: the baseline's organizations/111222333, this run's organizations/999888777"
    ]
    assert counts["resolved"] == 0, "another organisation's findings are never resolved here"
    reasons = counts["not_rechecked_by_reason"]
    assert set(reasons) == {"asset-not-in-export", "stacks-not-given"}, reasons
    assert counts["not_rechecked"] == len(
        [r for r in runs["baseline"].rows("findings.jsonl") if r["status"] == "violation"]
    )
    assert "compared despite organizations" in accepted.output


def test_a_baseline_of_another_policy_config_is_refused_before_spark(
    runs: dict[str, Run], tmp_path: Path
) -> None:
    config = tmp_path / "policy-config.json"
    config.write_text(
        json.dumps(
            {"push-endpoint-https": {"exemptEndpointPrefixes": ["http://orders.example.com/"]}}
        )
    )
    refused = audit(
        str(runs["baseline"].out.parent / "before"),
        "--out",
        str(tmp_path / "a"),
        "--baseline",
        str(runs["baseline"].out),
        "--policy-config",
        str(config),
    )
    assert refused.code == 2, refused.output
    assert "exemptEndpointPrefixes differs for push-endpoint-https" in refused.output
    assert "Spark" not in refused.output and not (tmp_path / "a").exists()


def test_an_older_baseline_is_read_and_what_it_lacks_is_said(
    runs: dict[str, Run], tmp_path: Path
) -> None:
    old = tmp_path / "old"
    shutil.copytree(runs["baseline"].out, old)
    summary = json.loads((old / "summary.json").read_text())
    summary.pop("coverage")
    summary["settings"].pop("policy_settings")
    (old / "summary.json").write_text(json.dumps(summary))
    again = audit(
        str(runs["baseline"].out.parent / "before"),
        "--out",
        str(tmp_path / "o"),
        "--baseline",
        str(old),
    )
    assert again.code == 1, again.output
    counts = again.summary["baseline"]
    assert counts["unverified"] == ["organizations", "policy settings"]
    assert "does not record its organizations or policy settings" in again.output
    # same export, no --stacks this time: nothing is resolved, the stack findings are not rechecked
    assert counts["resolved"] == 0
    assert set(counts["not_rechecked_by_reason"]) == {"stacks-not-given"}


def test_the_documented_gate_on_new_mandatory_findings_sees_a_raised_one(
    runs: dict[str, Run],
) -> None:
    """docs/findings.md's jq gate, run on the second run's findings: the raised finding fails it,
    and the same findings without it pass."""
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    page = Path(__file__).resolve().parents[2] / "docs" / "findings.md"
    [command] = [line for line in page.read_text().splitlines() if line.startswith("jq -s -e")]
    words = shlex.split(command)
    assert words[-1] == "audit/findings.jsonl"
    second = runs["second"].out / "findings.jsonl"
    failed = subprocess.run([*words[:-1], str(second)], capture_output=True, check=False)
    assert failed.returncode == 1, failed
    rows = [r for r in runs["second"].rows("findings.jsonl") if r["change"] != "level-raised"]
    rest = runs["second"].out.parent / "without-raised.jsonl"
    rest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    passed = subprocess.run([*words[:-1], str(rest)], capture_output=True, check=False)
    assert passed.returncode == 0, passed
