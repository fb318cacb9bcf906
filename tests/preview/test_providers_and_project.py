"""Providers by URN and the project resolved as the Google provider resolves it, through
`pushguard preview` as users run it (issue 20: providers keyed by name, the provider's project,
a non-Python project, PULUMI_CONFIG)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Two components each with an explicit provider named "gcp" (same name, parents of different
# types, so different URNs). Both providers exist before any other resource, so a lookup by name
# always finds the last one. Billing's subscription pushes as the account orders made in
# acme-orders.
TWO_PROVIDERS = """
import pulumi
import pulumi_gcp as gcp


class Team(pulumi.ComponentResource):
    def __init__(self, name, project):
        super().__init__(f"acme:index:{name.title()}Team", name, None)
        self.name = name
        self.gcp = gcp.Provider("gcp", project=project, opts=pulumi.ResourceOptions(parent=self))

    def account(self):
        self.sa = gcp.serviceaccount.Account(
            f"{self.name}-push", account_id=f"{self.name}-push",
            opts=pulumi.ResourceOptions(parent=self, provider=self.gcp))

    def subscription(self, email):
        gcp.pubsub.Subscription(
            f"{self.name}-sub", topic=self.name,
            push_config={"push_endpoint": f"https://{self.name}.example.com/push",
                         "oidc_token": {"service_account_email": email,
                                        "audience": "https://push.example.com"}},
            opts=pulumi.ResourceOptions(parent=self, provider=self.gcp))


orders = Team("orders", "acme-orders")
billing = Team("billing", "acme-billing")
orders.account()
orders.subscription(orders.sa.email)
billing.subscription(orders.sa.email)
"""

# A raw push subscription with no project of its own and a custom-domain endpoint.
CUSTOM_DOMAIN = """
import pulumi_gcp as gcp

gcp.pubsub.Subscription(
    "web", topic="web",
    push_config={"push_endpoint": "https://hooks.acme.example/push",
                 "oidc_token": {"service_account_email": "push@acme-web.iam.gserviceaccount.com",
                                "audience": "https://hooks.acme.example"}})
"""

PROJECT_VARIABLES = (
    "GOOGLE_PROJECT",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "CLOUDSDK_CORE_PROJECT",
)
PERIMETER = {"push-vpcsc-default-url": {"perimeterProjects": ["acme-web"]}}


@pytest.fixture(autouse=True)
def _no_project_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PROJECT_VARIABLES, "PULUMI_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def _policy(tmp_path: Path, config: dict[str, object]) -> str:
    path = tmp_path / "policy-config.json"
    path.write_text(json.dumps(config))
    return str(path)


def _violations(report: dict[str, object], policy: str) -> set[str]:
    found = report["violations"]
    assert isinstance(found, list)
    return {v["urn"].rsplit("::", 1)[1] for v in found if v["policy"] == policy}


def test_same_named_providers_in_two_components_are_told_apart_by_urn(
    preview, make_project, tmp_path: Path
) -> None:
    folder = make_project(TWO_PROVIDERS, {"dev": {}})
    run = preview(str(folder), "-f", "json")
    assert run.exit_code == 1, run.stdout
    assert _violations(run.json(), "push-sa-same-project") == {"billing-sub"}
    sarifs = []
    for attempt in range(3):
        out = tmp_path / f"run{attempt}.sarif"
        again = preview(str(folder), "-f", "sarif", "-o", str(out))
        assert again.exit_code == 1
        sarifs.append(out.read_bytes())
    assert sarifs[0] == sarifs[1] == sarifs[2]


def test_google_project_variable_is_the_default_providers_project(
    preview, make_project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_PROJECT", "acme-web")
    monkeypatch.setenv("CLOUDSDK_CORE_PROJECT", "acme-elsewhere")  # lower precedence
    folder = make_project(CUSTOM_DOMAIN, {"dev": {}})
    run = preview(str(folder), "--policy-config", _policy(tmp_path, PERIMETER), "-f", "json")
    assert run.exit_code == 1, run.stdout
    assert _violations(run.json(), "push-vpcsc-default-url") == {"web"}
    assert any("GOOGLE_PROJECT" in note for note in run.json()["notes"])


def test_stack_config_project_wins_over_the_environment(
    preview, make_project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_PROJECT", "acme-web")
    folder = make_project(CUSTOM_DOMAIN, {"dev": {"gcp:project": "acme-outside"}})
    run = preview(str(folder), "--policy-config", _policy(tmp_path, PERIMETER), "-f", "json")
    # acme-outside is not in the perimeter; the account is in another project though.
    assert _violations(run.json(), "push-vpcsc-default-url") == set()
    assert _violations(run.json(), "push-sa-same-project") == {"web"}


def test_no_project_anywhere_lists_each_project_dependent_rule_as_not_checked(
    preview, make_project, tmp_path: Path
) -> None:
    folder = make_project(CUSTOM_DOMAIN, {"dev": {}})
    run = preview(str(folder), "--policy-config", _policy(tmp_path, PERIMETER), "-f", "json")
    report = run.json()
    assert run.exit_code != 0 or report["notChecked"], run.stdout
    listed = {n["policy"] for n in report["notChecked"] if n["urn"].rsplit("::", 1)[1] == "web"}
    for policy in (
        "push-sa-same-project",
        "push-vpcsc-default-url",
        "push-agent-token-creator",
    ):
        assert policy in listed, (policy, report["notChecked"])
    reasons = [n["reason"] for n in report["notChecked"] if n["policy"] == "push-vpcsc-default-url"]
    assert any("project" in r and "GOOGLE_PROJECT" in r for r in reasons), reasons
    text = preview(str(folder), "--policy-config", _policy(tmp_path, PERIMETER))
    assert "Not checked (" in text.stdout
    assert "push-vpcsc-default-url" in text.stdout.split("Not checked (", 1)[1]


def test_an_esc_environment_import_is_listed_as_unknown_offline(
    preview, make_project, tmp_path: Path
) -> None:
    folder = make_project(CUSTOM_DOMAIN, {"dev": {"gcp:project": "acme-web"}})
    stack_file = folder / "Pulumi.dev.yaml"
    stack_file.write_text(
        json.dumps({"environment": ["acme/gcp-prod"], "config": {"gcp:project": "acme-web"}})
    )
    report = preview(str(folder), "-f", "json").json()
    listed = [u for u in report["unknownOffline"] if u["name"] == "acme/gcp-prod"]
    assert listed and "missing" in listed[0]["message"], report["unknownOffline"]
    assert listed[0]["kind"] == "environment"


@pytest.mark.parametrize("runtime", ["yaml", "go", {"name": "dotnet"}])
def test_a_project_in_another_language_is_a_clear_usage_error(
    preview, tmp_path: Path, runtime: object
) -> None:
    folder = tmp_path / "ts"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(json.dumps({"name": "web", "runtime": runtime}))
    (folder / "Pulumi.dev.yaml").write_text(json.dumps({"config": {}}))
    (folder / "index.ts").write_text("export {};\n")
    run = preview(str(folder))
    assert run.exit_code == 2
    name = runtime["name"] if isinstance(runtime, dict) else runtime
    assert f"runtime: {name}" in run.stderr
    assert "Python" in run.stderr and "pushguard analyze" in run.stderr
    assert "pulumi preview --policy-pack" in run.stderr
    assert "__main__.py" not in run.stderr


READS_CONFIG = """
import pulumi
import pulumi_gcp as gcp

endpoint = pulumi.Config().get("endpoint") or "https://hooks.acme.example/push"
gcp.pubsub.Subscription(
    "web", topic="web",
    push_config={"push_endpoint": endpoint,
                 "oidc_token": {"service_account_email": "push@acme-web.iam.gserviceaccount.com",
                                "audience": "https://hooks.acme.example"}})
"""


def test_pulumi_config_in_the_environment_is_noted_when_it_contributes(
    preview, make_project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"team:endpoint": "http://plain.example/p"}))
    folder = make_project(READS_CONFIG, {"dev": {"gcp:project": "acme-web"}})
    report = preview(str(folder), "-f", "json").json()
    notes = [n for n in report["notes"] if "PULUMI_CONFIG" in n]
    assert notes and "team:endpoint" in notes[0], report["notes"]
    assert "replaces PULUMI_CONFIG" in notes[0]
    # As under the CLI, the program does not see the variable's keys: the https default stands.
    [web] = [r for r in report["resources"] if r["name"] == "web"]
    assert web["inputs"]["pushConfig"]["pushEndpoint"] == "https://hooks.acme.example/push"
    assert report["summary"]["exitCode"] == 0


def test_installed_console_script_with_a_clean_environment_reads_google_project(
    make_project, tmp_path: Path
) -> None:
    script = Path(sys.executable).with_name("pushguard")
    folder = make_project(CUSTOM_DOMAIN, {"dev": {}})
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "GOOGLE_CLOUD_PROJECT": "acme-web",
    }
    done = subprocess.run(
        [
            str(script),
            "preview",
            str(folder),
            "--policy-config",
            _policy(tmp_path, PERIMETER),
            "-f",
            "json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert _violations(json.loads(done.stdout), "push-vpcsc-default-url") == {"web"}
