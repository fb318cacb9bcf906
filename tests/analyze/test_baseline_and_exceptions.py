"""Issue 22 through `pushguard analyze` as users run it: finding IDs in the JSON report and in
SARIF, `--baseline PREVIOUS.json` (new, existing, resolved), and exceptions (active, expired,
malformed, too far ahead) from the policy config, over state files of the example `legacy`
stack."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.gate.result import StackResult
from pushguard.policy.exceptions import utc_today
from pushguard.preview.runner import PreviewOptions, run_preview
from tests.analyze.exports import dumps, export_from_preview

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "policy-config.json"
PREFIX = "urn:pulumi:legacy::pushguard-example::gcp:pubsub/subscription:Subscription::"
ORDERS, BILLING, PAYMENTS = (
    PREFIX + n for n in ("legacy-orders", "legacy-billing", "payments-settled")
)


@pytest.fixture(scope="module")
def legacy_state() -> dict[str, Any]:
    result: StackResult = run_preview(PreviewOptions(ROOT / "stacks", "legacy", None, CONFIG))
    return export_from_preview(result)


def analyze(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["analyze", *map(str, args)])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, document: Any) -> Path:
    path.write_text(document if isinstance(document, str) else dumps(document))
    return path


def days(n: int) -> str:
    return (utc_today() + timedelta(days=n)).isoformat()


def config_with(tmp_path: Path, exceptions: dict[str, list[dict[str, str]]]) -> Path:
    config = json.loads(CONFIG.read_text())
    for policy, items in exceptions.items():
        entry = config.setdefault(policy, {})
        if isinstance(entry, str):
            entry = config[policy] = {"enforcementLevel": entry}
        entry["exceptions"] = items
    return write(tmp_path / "config.json", json.dumps(config))


def violations(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    [stack] = report["stacks"]
    return {(v["policy"], v["urn"]): v for v in stack["violations"]}


def test_baseline_new_existing_and_resolved(legacy_state, tmp_path: Path) -> None:
    state = write(tmp_path / "legacy.json", legacy_state)
    code, out, _ = analyze(state, "--policy-config", CONFIG, "-f", "json")
    assert code == 1
    before = json.loads(out)
    first = violations(before)
    assert all(v["findingId"].startswith("pg1-") for v in first.values())
    write(tmp_path / "before.json", out)

    # the same state again: the same IDs, every finding existing, nothing resolved
    code, out, _ = analyze(
        state, "--policy-config", CONFIG, "--baseline", tmp_path / "before.json", "-f", "json"
    )
    same = json.loads(out)
    assert {k: v["findingId"] for k, v in violations(same).items()} == {
        k: v["findingId"] for k, v in first.items()
    }
    assert {v["change"] for v in violations(same).values()} == {"existing"}
    assert same["resolved"] == []
    assert same["summary"]["new"] == 0 and same["summary"]["resolved"] == 0

    # legacy-orders deleted (its finding resolved); payments-settled pushes over http (new)
    changed = copy.deepcopy(legacy_state)
    resources = changed["deployment"]["resources"]
    changed["deployment"]["resources"] = [r for r in resources if r["urn"] != ORDERS]
    for r in changed["deployment"]["resources"]:
        if r["urn"] == PAYMENTS:
            for side in ("inputs", "outputs"):
                push = r[side]["pushConfig"]
                push["pushEndpoint"] = push["pushEndpoint"].replace("https://", "http://", 1)
    state = write(tmp_path / "legacy.json", changed)
    code, out, _ = analyze(
        state, "--policy-config", CONFIG, "--baseline", tmp_path / "before.json", "-f", "json"
    )
    assert code == 1
    after = json.loads(out)
    now = violations(after)
    assert now[("push-endpoint-https", PAYMENTS)]["change"] == "new"
    assert now[("push-sa-same-project", BILLING)]["change"] == "existing"
    assert (
        now[("push-sa-same-project", BILLING)]["findingId"]
        == first[("push-sa-same-project", BILLING)]["findingId"]
    )
    [gone] = after["resolved"]
    assert (gone["policy"], gone["urn"]) == ("push-endpoint-https", ORDERS)
    assert gone["findingId"] == first[("push-endpoint-https", ORDERS)]["findingId"]
    summary = after["summary"]
    assert (summary["new"], summary["resolved"]) == (1, 1)
    assert summary["existing"] == len(now) - 1

    # the text report says so too
    code, out, _ = analyze(state, "--policy-config", CONFIG, "--baseline", tmp_path / "before.json")
    assert "Against the baseline: 1 new" in out and "1 resolved" in out
    assert "No baseline" not in out
    # and, without --baseline, that what changed is not known (rather than nothing new)
    code, out, _ = analyze(state, "--policy-config", CONFIG)
    assert "Against the baseline" not in out
    assert "No baseline given: new and resolved findings are not computed (--baseline" in out


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("not json", "is not a JSON report"),
        ('{"violations": []}', "no stacks list"),
        (
            '{"stacks": [], "error": {"message": "x"}, "summary": {"exitCode": 2}}',
            "did not complete",
        ),
        ('{"stacks": [{"violations": [{"policy": "p"}]}], "summary": {"exitCode": 1}}', "lacks"),
    ],
)
def test_a_baseline_that_is_not_a_completed_analysis_is_exit_2(
    legacy_state, tmp_path: Path, content: str, expected: str
) -> None:
    state = write(tmp_path / "legacy.json", legacy_state)
    baseline = write(tmp_path / "baseline.json", content)
    code, out, err = analyze(state, "--baseline", baseline, "-f", "json")
    assert code == 2
    assert expected in json.loads(out)["error"]["message"]
    assert str(baseline) in err


def test_exceptions_active_and_expired_in_json_and_sarif(legacy_state, tmp_path: Path) -> None:
    state = write(tmp_path / "legacy.json", legacy_state)
    config = config_with(
        tmp_path,
        {
            "push-endpoint-https": [
                {"resource": ORDERS, "reason": "partner moves in Q1", "expires": days(60)}
            ],
            "push-sa-same-project": [
                {"resource": BILLING, "reason": "shared SA, ticket 42", "expires": days(10)}
            ],
            "push-vpcsc-default-url": [
                {"resource": PAYMENTS, "reason": "was accepted", "expires": days(-3)}
            ],
        },
    )
    code, out, _ = analyze(state, "--policy-config", config, "-f", "json")
    assert code == 1  # the expired one counts again
    report = json.loads(out)
    found = violations(report)
    orders = found[("push-endpoint-https", ORDERS)]
    assert orders["level"] == "mandatory"
    assert orders["exception"] == {
        "state": "active",
        "reason": "partner moves in Q1",
        "expires": days(60),
    }
    assert "[finding" not in orders["message"]
    assert found[("push-vpcsc-default-url", PAYMENTS)]["exception"]["state"] == "expired"
    summary = report["summary"]
    assert (summary["mandatory"], summary["excepted"], summary["expiredExceptions"]) == (1, 2, 1)

    code, out, _ = analyze(state, "--policy-config", config)
    assert "excepted until" in out and "exception expired" in out and "2 excepted" in out

    code, out, _ = analyze(state, "--policy-config", config, "-f", "sarif")
    [run] = json.loads(out)["runs"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert by_rule["push-endpoint-https"]["suppressions"][0]["status"] == "accepted"
    assert "suppressions" not in by_rule["push-vpcsc-default-url"]
    assert by_rule["push-endpoint-https"]["partialFingerprints"] == {
        "pushguardFinding/v2": orders["findingId"]
    }

    # every mandatory finding excepted: the analysis passes
    config = config_with(
        tmp_path,
        {
            "push-endpoint-https": [{"resource": ORDERS, "reason": "r", "expires": days(1)}],
            "push-sa-same-project": [{"resource": BILLING, "reason": "r", "expires": days(1)}],
            "push-vpcsc-default-url": [{"resource": PAYMENTS, "reason": "r", "expires": days(0)}],
        },
    )
    code, out, _ = analyze(state, "--policy-config", config, "-f", "json")
    assert code == 0, out
    assert json.loads(out)["summary"]["excepted"] == 3


@pytest.mark.parametrize(
    ("exception", "expected"),
    [
        ({"resource": ORDERS, "reason": "r", "expires": "2099-12-31"}, "more than 365 days ahead"),
        ({"resource": ORDERS, "expires": "2026-12-31"}, "'reason' is a required property"),
        ({"resource": ORDERS, "reason": "r", "expires": "31.12.2026"}, "does not match"),
        # issue 35: a resource that can match nothing is refused, not accepted silently
        (
            {
                "resource": "projects/acme-orders/subscription/orders",
                "reason": "r",
                "expires": days(9),
            },
            "exceptions.0.resource: 'projects/acme-orders/subscription/orders' is not a resource "
            "an exception can name",
        ),
        (
            {
                "resource": "projects/Acme-Orders/subscriptions/orders",
                "reason": "r",
                "expires": days(9),
            },
            "the project ID 'Acme-Orders' cannot exist",
        ),
        ({"resource": "*", "reason": "r", "expires": days(9)}, "wildcards are not supported"),
    ],
)
def test_a_malformed_or_distant_exception_is_exit_2_naming_it(
    legacy_state, tmp_path: Path, exception: dict[str, str], expected: str
) -> None:
    state = write(tmp_path / "legacy.json", legacy_state)
    config = config_with(tmp_path, {"push-endpoint-https": [exception]})
    code, out, _ = analyze(state, "--policy-config", config, "-f", "json")
    assert code == 2
    message = json.loads(out)["error"]["message"]
    assert "push-endpoint-https" in message and "exceptions" in message and expected in message


def test_two_exceptions_for_one_resource_are_exit_2(legacy_state, tmp_path: Path) -> None:
    """Issue 35: the later of two exceptions for one resource no longer wins silently."""
    state = write(tmp_path / "legacy.json", legacy_state)
    config = config_with(
        tmp_path,
        {
            "push-endpoint-https": [
                {"resource": ORDERS, "reason": "until the move", "expires": days(9)},
                {"resource": ORDERS, "reason": "extended", "expires": days(90)},
            ]
        },
    )
    code, out, _ = analyze(state, "--policy-config", config, "-f", "json")
    assert code == 2
    message = json.loads(out)["error"]["message"]
    assert "push-endpoint-https: exceptions: item 1: names " + ORDERS in message
    assert "one exception per resource and policy" in message
