"""Issue 13, secrets: no report format shows a secret value, a query string or userinfo.

End to end through `pushguard preview`: a program that puts a URL with userinfo and a token into
resource inputs, the token audience (whose default is the endpoint), a stack output, a log
message and its own stdout, and a secret value into an input and a log message. None of the
planted secrets may appear in the text, JSON or SARIF report.

The report code (pushguard/preview/report.py and sarif.py) is being restructured; it calls
pushguard.gate.redact when that lands. Until then these tests are expected to fail, strictly:
the first format that redacts turns its test into an unexpected pass, and its marker must go.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.preview.conftest import ROOT

PASSWORD = "hunter2pw-planted"
TOKEN = "s3cr3t-tok-planted"
SECRET = "correct-horse-planted"
CIPHERTEXT = "v1:Y2lwaGVydGV4dC1wbGFudGVk"
ENDPOINT = f"https://svc-user:{PASSWORD}@hooks.example.com/push?token={TOKEN}#{TOKEN}"

PROGRAM = f"""\
import pulumi
import pulumi_gcp as gcp

config = pulumi.Config()
endpoint = config.require("endpoint")
secret = pulumi.Output.secret("{SECRET}")
gcp.pubsub.Subscription("raw", topic="orders", labels={{"k": secret}}, push_config={{
    "push_endpoint": endpoint,
    "oidc_token": {{"service_account_email": "raw-push@acme-orders.iam.gserviceaccount.com",
                   "audience": endpoint}},
}})
pulumi.log.warn(f"pushing to {{endpoint}} with {SECRET}")
print("endpoint:", endpoint)
pulumi.export("endpoint", endpoint)
pulumi.export("key", config.get_secret("key"))
"""

LEAKY_PACK = """\
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def validate(args, report_violation):
    if args.resource_type == "gcp:pubsub/subscription:Subscription":
        endpoint = args.props["pushConfig"]["pushEndpoint"]
        report_violation(f"The endpoint {endpoint} is not on the allow list.")


PolicyPack(
    name="leaky",
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=[ResourceValidationPolicy(
        name="leaky-endpoint", description="Echoes the endpoint it refuses.", validate=validate)],
)
"""


@pytest.mark.parametrize("output_format", ["json", "text", "sarif"])
def test_no_report_format_shows_a_planted_secret(
    preview, make_project, tmp_path: Path, output_format: str
) -> None:
    folder = make_project(
        PROGRAM,
        {
            "dev": {
                "gcp:project": "acme-orders",
                "team:endpoint": ENDPOINT,
                "team:key": {"secure": CIPHERTEXT},
            }
        },
    )
    shown = ""
    for pack in (None, leaky_pack(tmp_path)):
        options = (
            ["--policy-pack", str(pack)]
            if pack
            else ["--policy-config", str(ROOT / "policy-config.json")]
        )
        run = preview(str(folder), "--format", output_format, *options)
        assert run.exit_code == 1, run.stdout + run.stderr
        shown += run.stdout + run.stderr
    assert "hooks.example.com" in shown, "the report is about the endpoint"
    for planted in (PASSWORD, TOKEN, SECRET, CIPHERTEXT, CIPHERTEXT[3:]):
        assert planted not in shown, f"{planted} in the {output_format} report"


def leaky_pack(tmp_path: Path) -> Path:
    pack = tmp_path / "leaky-pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (pack / "__main__.py").write_text(LEAKY_PACK)
    return pack
