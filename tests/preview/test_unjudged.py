"""Issue 34 through `pushguard preview` as users run it: the attacker's Crossplane subscription
(``pulumi_kubernetes.apiextensions.CustomResource``, an ``http://`` endpoint, a foreign push-auth
account, a project in a perimeter) is now checked; and a resource of a type no route maps whose
inputs are shaped like a push configuration fails the run (exit 2) naming its type and the
field, whatever the policies' levels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.preview.mocks import PROJECT_VARIABLES
from tests.routes import policy_config

HTTP = "http://hooks.example.com/push"

ATTACK = f"""import pulumi
pulumi.CustomResource("kubernetes:pubsub.gcp.upbound.io/v1beta1:Subscription", "attack", {{
    "apiVersion": "pubsub.gcp.upbound.io/v1beta1", "kind": "Subscription",
    "metadata": {{"name": "attack"}},
    "spec": {{"forProvider": {{"project": "acme-vault", "topic": "orders", "pushConfig": [{{
        "pushEndpoint": "{HTTP}",
        "oidcToken": [{{"serviceAccountEmail": "pusher@acme-shared.iam.gserviceaccount.com"}}],
    }}]}}}},
}})
"""

UNKNOWN_TYPES = f"""import pulumi
R = pulumi.CustomResource
R("kubernetes:example.com/v1:Thing", "thing", {{"apiVersion": "example.com/v1", "kind": "Thing",
    "metadata": {{"name": "thing"}}, "spec": {{"x": [{{"push_endpoint": "{HTTP}"}}]}}}})
R("acme:index/queue:Queue", "queue", {{"name": "orders", "PushConfig": {{"Endpoint": "{HTTP}"}}}})
# not push subscriptions: a component (its children are judged) and an application's settings
pulumi.ComponentResource("acme:index:Wrapper", "wrapper", {{"pushEndpoint": "{HTTP}"}})
R("kubernetes:core/v1:ConfigMap", "settings", {{"apiVersion": "v1", "kind": "ConfigMap",
    "data": {{"pushEndpoint": "{HTTP}"}}}})
"""


def _preview(folder: Path, program: str, **settings: Any) -> tuple[int, dict[str, Any], str]:
    project = folder / "project"
    project.mkdir(parents=True)
    (project / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    (project / "__main__.py").write_text(program)
    (project / "Pulumi.dev.yaml").write_text(json.dumps({"config": {}}))
    config = folder / "policy-config.json"
    config.write_text(json.dumps(policy_config(**settings)))
    runner = CliRunner()
    env = dict.fromkeys(PROJECT_VARIABLES)  # None: unset for the run
    result = runner.invoke(
        app, ["preview", str(project), "-f", "json", "--policy-config", str(config)], env=env
    )
    report = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.exit_code, report, result.stdout + result.stderr


def test_the_attackers_crossplane_subscription_fails_the_preview(tmp_path: Path) -> None:
    """Before: exit 0, nothing reported, not even "not checked"."""
    code, report, text = _preview(tmp_path, ATTACK)
    assert code == 1, text
    found = {v["policy"] for v in report["violations"] if v["level"] == "mandatory"}
    assert found >= {"push-endpoint-https", "push-sa-same-project", "push-vpcsc-default-url"}


def test_a_push_shaped_resource_of_an_unknown_type_fails_the_preview(tmp_path: Path) -> None:
    """Before: exit 0. With every policy advisory: exit 2, each type and field named, and the
    pack's "cannot be checked" findings mandatory."""
    code, report, text = _preview(tmp_path, UNKNOWN_TYPES, enforcementLevel="advisory")
    assert code == 2, text
    error = report["error"]["message"]
    assert "kubernetes:example.com/v1:Thing 'thing' (spec.x[0].push_endpoint)" in error
    assert "acme:index/queue:Queue 'queue' (PushConfig)" in error
    assert "wrapper" not in error and "settings" not in error
    cannot = {v["urn"].rsplit("::", 1)[-1] for v in report["violations"]}
    assert cannot == {"thing", "queue"}
    assert {v["level"] for v in report["violations"]} == {"mandatory"}
