"""Issue 22 through `pushguard preview` as users run it: each violation carries its stable
`findingId` (the same on every run; SARIF's partialFingerprints is that ID), and exceptions in
the policy config are honoured: an excepted finding is shown with its reason and expiry and does
not fail the preview; an expired one fails it again and says the exception expired."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.policy.exceptions import utc_today

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "policy-config.json"
PREFIX = "urn:pulumi:legacy::pushguard-example::gcp:pubsub/subscription:Subscription::"
ORDERS, BILLING, PAYMENTS = (
    PREFIX + n for n in ("legacy-orders", "legacy-billing", "payments-settled")
)


def preview(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(
        app, ["preview", str(ROOT / "stacks"), "-s", "legacy", *map(str, args)]
    )
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def days(n: int) -> str:
    return (utc_today() + timedelta(days=n)).isoformat()


def test_exceptions_and_finding_ids_through_the_preview(tmp_path: Path) -> None:
    code, out = preview("--policy-config", CONFIG, "-f", "json")
    assert code == 1
    plain = {(v["policy"], v["urn"]): v for v in json.loads(out)["violations"]}

    config = json.loads(CONFIG.read_text())
    config["push-endpoint-https"]["exceptions"] = [
        {"resource": ORDERS, "reason": "partner moves in Q1", "expires": days(90)}
    ]
    config["push-sa-same-project"] = {
        "exceptions": [{"resource": BILLING, "reason": "shared account", "expires": days(0)}]
    }
    config["push-vpcsc-default-url"]["exceptions"] = [
        {"resource": PAYMENTS, "reason": "was accepted", "expires": days(-1)}
    ]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out = preview("--policy-config", path, "-f", "json", "-o", tmp_path / "r.json")
    report = json.loads((tmp_path / "r.json").read_text())
    assert code == 1, report  # payments-settled's exception expired yesterday
    found = {(v["policy"], v["urn"]): v for v in report["violations"]}
    # the same findings with the same IDs as without exceptions
    assert {k: v["findingId"] for k, v in found.items()} == {
        k: v["findingId"] for k, v in plain.items()
    }
    assert found[("push-endpoint-https", ORDERS)]["exception"] == {
        "state": "active",
        "reason": "partner moves in Q1",
        "expires": days(90),
    }
    assert found[("push-sa-same-project", BILLING)]["exception"]["state"] == "active"
    expired = found[("push-vpcsc-default-url", PAYMENTS)]
    assert expired["exception"]["state"] == "expired" and expired["level"] == "mandatory"
    assert report["summary"]["mandatory"] == 1
    assert (report["summary"]["excepted"], report["summary"]["expiredExceptions"]) == (2, 1)

    config["push-vpcsc-default-url"]["exceptions"][0]["expires"] = days(7)
    path.write_text(json.dumps(config))
    code, out = preview("--policy-config", path)
    assert code == 0, out
    assert "Excepted (3)" in out
    assert f"excepted until {days(90)}: partner moves in Q1" in out
    assert "3 excepted. Preview passed." in out


def test_a_distant_exception_is_exit_2_naming_it(tmp_path: Path) -> None:
    config = json.loads(CONFIG.read_text())
    config["push-endpoint-https"]["exceptions"] = [
        {"resource": ORDERS, "reason": "forever", "expires": days(400)}
    ]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out = preview("--policy-config", path, "-f", "json")
    assert code == 2
    message = json.loads(out)["error"]["message"]
    assert "push-endpoint-https: exceptions: item 0" in message
    assert "more than 365 days ahead" in message and "exceptionMaxDays" in message
