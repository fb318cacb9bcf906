"""Resource names are shown, never their secrets: a name built from a URL with a password (or a
query token) is redacted in every report, consistently, so findings still point at it."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

PUSHGUARD = Path(sys.executable).with_name("pushguard")
NAME = "https://bob:hunter2@hooks.example.com/x?token=s3cr3t"
PROGRAM = (
    "import pulumi_gcp as gcp\n"
    f"gcp.pubsub.Subscription({NAME!r}, name='orders', topic='orders', push_config={{\n"
    "    'push_endpoint': 'http://hooks.example.com/push',\n"
    "    'oidc_token': {'service_account_email': 'p@acme-orders.iam.gserviceaccount.com'}})\n"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("names")
    (folder / "Pulumi.yaml").write_text("name: team\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  gcp:project: acme-orders\n")
    (folder / "__main__.py").write_text(PROGRAM)
    return folder


@pytest.mark.parametrize("report_format", ["text", "json", "sarif"])
def test_a_name_with_credentials_is_redacted_in_every_report(
    project: Path, report_format: str
) -> None:
    run = subprocess.run(
        [str(PUSHGUARD), "preview", "--stack", "dev", "-f", report_format],
        check=False,
        capture_output=True,
        text=True,
        cwd=project,
    )
    assert run.returncode == 1, run.stderr
    assert "hunter2" not in run.stdout and "s3cr3t" not in run.stdout
    if report_format == "json":
        report = json.loads(run.stdout)
        [violation] = [v for v in report["violations"] if v["policy"] == "push-endpoint-https"]
        assert violation["urn"] in {r["urn"] for r in report["resources"]}
        assert violation["location"]["path"].endswith("__main__.py")


REASON = "partner moves off https://bob:hunter2@old.example.com/hook?token=s3cr3t by June"


@pytest.mark.parametrize("report_format", ["text", "json", "sarif"])
def test_an_exception_reason_is_redacted_like_every_other_text(
    project: Path, tmp_path: Path, report_format: str
) -> None:
    """Issue 22: a reason is free text from the policy config; a URL with credentials in it is
    shown without them, as in messages."""
    expires = (date.today() + timedelta(days=30)).isoformat()
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "push-endpoint-https": {
                    "exceptions": [
                        {
                            "resource": "projects/acme-orders/subscriptions/orders",
                            "reason": REASON,
                            "expires": expires,
                        }
                    ]
                }
            }
        )
    )
    run = subprocess.run(
        [
            *(str(PUSHGUARD), "preview", "--stack", "dev", "-f", report_format),
            *("--policy-config", str(config)),
        ],
        check=False,
        capture_output=True,
        text=True,
        cwd=project,
    )
    assert run.returncode in (0, 1), run.stderr
    assert "hunter2" not in run.stdout and "s3cr3t" not in run.stdout, run.stdout
    assert "old.example.com" in run.stdout, "the reason is shown, redacted"
    if report_format == "json":
        report = json.loads(run.stdout)
        [violation] = [v for v in report["violations"] if v["policy"] == "push-endpoint-https"]
        assert violation["exception"]["state"] == "active"
        assert "hunter2" not in violation["exception"]["reason"]
