"""Issue 34 through `pushguard preview` as users run it: a Deployment Manager deployment's push
subscriptions are checked, each one's findings on the deployment; a deployment whose
configuration cannot be read offline (a template import, a reference in the push endpoint, YAML
that does not parse, a push config set by an action, a configuration known only at deployment)
fails the preview (exit 2) naming why, and the pack reports it as a mandatory violation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.preview.mocks import PROJECT_VARIABLES
from tests.deployment_manager import (
    DEPLOYMENT,
    PROJECT,
    TWO_SUBSCRIPTIONS,
    UNREADABLE,
    program,
    target,
    urn,
)
from tests.routes import write_policy_config


def _preview(
    folder: Path, text: str, config: dict[str, Any] | None = None
) -> tuple[int, dict[str, Any], str]:
    project = folder / "project"
    project.mkdir(parents=True)
    (project / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    (project / "__main__.py").write_text(text)
    stack = {"gcp:project": PROJECT, **(config or {})}
    (project / "Pulumi.dev.yaml").write_text(json.dumps({"config": stack}))
    policy = write_policy_config(folder)
    with pytest.MonkeyPatch.context() as env:
        for name in PROJECT_VARIABLES:
            env.delenv(name, raising=False)
        result = CliRunner().invoke(
            app, ["preview", str(project), "-f", "json", "--policy-config", str(policy)]
        )
    report = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.exit_code, report, result.stdout + result.stderr


def _cannot_be_checked(report: dict[str, Any], name: str) -> dict[str, str]:
    """policy -> level of the pack's "cannot be checked" violations on deployment ``name``."""
    return {
        v["policy"]: v["level"]
        for v in report["violations"]
        if v["urn"] == urn(name) and "cannot be checked" in v["message"]
    }


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_a_deployment_pushguard_cannot_read_fails_the_preview(tmp_path: Path, case: str) -> None:
    inputs, why = UNREADABLE[case]
    code, report, text = _preview(tmp_path, program({"orders": inputs}))
    assert code == 2, text
    message = report["error"]["message"]
    assert f"{DEPLOYMENT} 'orders'" in message and why in message, message
    found = _cannot_be_checked(report, "orders")
    assert found.get("push-endpoint-https") == "mandatory", report["violations"]
    assert found.get("push-sa-same-project") == "mandatory"


SECRET_CONFIG = f"""import pulumi
content = pulumi.Config().require_secret("dmConfig")
pulumi.CustomResource({DEPLOYMENT!r}, "orders", {{"target": {{"config": {{"content": content}}}}}})
"""


def test_a_configuration_not_known_offline_fails_the_preview(tmp_path: Path) -> None:
    """A `secure:` stack config value cannot be decrypted offline: the deployment's
    configuration, and so its subscriptions, are not known."""
    secret = {"team:dmConfig": {"secure": "v1:AAAAENpYWhlcnRleHQtb2YtdGhlLWNvbmZpZw=="}}
    code, report, text = _preview(tmp_path, SECRET_CONFIG, secret)
    assert code == 2, text
    assert "target.config.content is not known offline" in report["error"]["message"]
    assert _cannot_be_checked(report, "orders").get("push-endpoint-https") == "mandatory"


QUIET = """resources:
- name: orders-topic
  type: pubsub.v1.topic
  properties:
    topic: orders
"""


def test_each_subscription_of_a_deployment_is_a_finding_of_its_own(tmp_path: Path) -> None:
    deployments = {"orders": target(TWO_SUBSCRIPTIONS), "topics": target(QUIET)}
    code, report, text = _preview(tmp_path, program(deployments))
    assert code == 1, text
    https = [v for v in report["violations"] if v["policy"] == "push-endpoint-https"]
    assert {v["urn"] for v in https} == {urn("orders")}, https  # on the deployment
    named = sorted(v["message"].rsplit("\n", 1)[-1].split(":", 1)[0] for v in https)
    assert named == ["orders/first", "orders/second"]
    assert len({v["findingId"] for v in https}) == 2
    assert not [v for v in report["violations"] if v["urn"] == urn("topics")]
