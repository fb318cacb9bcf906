"""Follow-ups on issue 25 through `pushguard preview` as users run it: the ways a new user got a
bad push subscription past the gate, each in one program previewed once for the module (the
exit-2 cases in two small runs of their own).

- keys spelled otherwise than the schema (``push_config``, ``PushConfig``, mixed, a snake_case
  ``enable_exactly_once_delivery``, a transform writing snake_case), read as the Terraform bridge
  reads them on the bridged routes, refused on Google Cloud Native and Config Connector, and two
  disagreeing spellings refused;
- a Config Connector ``PubSubSubscriptionPatch`` (pulumi-kubernetes' ``CustomResourcePatch``);
- ``kubernetes:yaml:decode`` (behind ``yaml.ConfigFile``/``ConfigGroup``) answered offline, so
  the decoded objects are checked; ``kubernetes:helm:template`` fails the run;
- a Config Connector namespace from the kubeconfig context, and an explicit namespace whose
  project is unknown staying not checked despite ``defaultProject``;
- an unmapped subscription type failing the run (exit 2) naming it;
- findings on a raw ``pulumi.CustomResource`` located at the program's line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.preview.mocks import PROJECT_VARIABLES

PROJECT = "acme-web"
NUMBERS = {PROJECT: "111111111111", "acme-vault": "222222222222"}
SA = f"push@{PROJECT}.iam.gserviceaccount.com"
RUN = f"https://orders-{NUMBERS[PROJECT]}.europe-west1.run.app/push"
KCC = "kubernetes:pubsub.cnrm.cloud.google.com/v1beta1:PubSubSubscription"
GCP = "gcp:pubsub/subscription:Subscription"
TF = "google:index/pubsubSubscription:PubsubSubscription"

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: vault-ns}}]
current-context: x
"""

DECODED = """---
# an empty document, skipped as the provider does
---
apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubSubscription
metadata:
  name: decoded
  annotations: {cnrm.cloud.google.com/project-id: acme-web}
spec:
  topicRef: {name: orders}
  pushConfig:
    pushEndpoint: "http://decoded.example.com/push"
"""

PROGRAM = f"""import pulumi
R = pulumi.CustomResource
SA, RUN = {SA!r}, {RUN!r}
OK = {{"pushEndpoint": RUN, "oidcToken": {{"serviceAccountEmail": SA, "audience": "a"}}}}
GCP, TF, KCC = {GCP!r}, {TF!r}, {KCC!r}
def tf(name, **props):
    R(TF, name, {{"project": {PROJECT!r}, "name": name, "topic": "orders", **props}})

R(GCP, "gcp-snake", {{"name": "gcp-snake", "topic": "orders",
    "push_config": {{"push_endpoint": "http://snake.example.com/push"}}}})
tf("tf-pascal", PushConfig={{"PushEndpoint": "http://pascal.example.com/push"}})
tf("tf-once", pushConfig=OK, enable_exactly_once_delivery=True)
tf("tf-mixed", pushConfig={{"pushEndpoint": RUN,
    "oidc_token": {{"service_account_email": "x@acme-other.iam.gserviceaccount.com"}}}})
tf("tf-conflict", pushConfig=OK, push_config={{"push_endpoint": "http://two.example.com/p"}})
tf("tf-ok", push_config={{"push_endpoint": RUN, "oidc_token": {{
    "service_account_email": SA, "audience": "a"}}}}, labels={{"team_name": "x", "teamName": "y"}})
R("google-native:pubsub/v1:Subscription", "native-snake", {{"project": {PROJECT!r},
    "subscriptionId": "native-snake", "topic": "projects/{PROJECT}/topics/orders",
    "push_config": {{"push_endpoint": "http://native.example.com/push"}}}})

def to_snake(args):
    props = dict(args.props)
    props.pop("pushConfig", None)
    props["push_config"] = {{"push_endpoint": "http://evil.example.com/push"}}
    return pulumi.ResourceTransformResult(props, args.opts)
R(GCP, "transformed", {{"name": "transformed", "topic": "orders", "pushConfig": OK}},
  pulumi.ResourceOptions(transforms=[to_snake]))

def kcc(name, spec, namespace=None, kind="PubSubSubscription", opts=None, **annotations):
    metadata = {{"name": name, "annotations": annotations}}
    if namespace:
        metadata["namespace"] = namespace
    R(f"kubernetes:pubsub.cnrm.cloud.google.com/v1beta1:{{kind}}", name, {{
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": kind,
        "metadata": metadata, "spec": spec}}, opts)
PID = {{"cnrm.cloud.google.com/project-id": {PROJECT!r}}}
kcc("kcc-snake", {{"topicRef": {{"name": "orders"}},
    "push_config": {{"push_endpoint": "http://kcc.example.com/push"}}}}, **PID)
kcc("patch-http", {{"pushConfig": {{"pushEndpoint": "http://patched.example.com/push"}}}},
    kind="PubSubSubscriptionPatch", **PID)
kcc("patch-ok", {{"pushConfig": OK}}, kind="PubSubSubscriptionPatch", **PID)

decoded = pulumi.runtime.invoke("kubernetes:yaml:decode", {{"text": {DECODED!r},
    "defaultNamespace": "team"}}).value.get("result", [])  # as the SDK reads it
for obj in decoded:
    R(f"kubernetes:{{obj['apiVersion']}}:{{obj['kind']}}", obj["metadata"]["name"], obj)

k8s = pulumi.ProviderResource("kubernetes", "cluster", {{"kubeconfig": {KUBECONFIG!r}}})
R("kubernetes:core/v1:Namespace", "vault-ns", {{"apiVersion": "v1", "kind": "Namespace",
    "metadata": {{"name": "vault-ns",
                 "annotations": {{"cnrm.cloud.google.com/project-id": "acme-vault"}}}}}},
  pulumi.ResourceOptions(provider=k8s))
kcc("kcc-context", {{"topicRef": {{"name": "orders"}}, "pushConfig": {{
    "pushEndpoint": "https://push.acme.example/orders", "oidcToken": {{
    "serviceAccountEmail": "push@acme-vault.iam.gserviceaccount.com", "audience": "a"}}}}}},
    opts=pulumi.ResourceOptions(provider=k8s))
kcc("kcc-elsewhere", {{"topicRef": {{"name": "orders"}}, "pushConfig": {{
    "pushEndpoint": RUN, "oidcToken": {{
    "serviceAccountEmail": "x@acme-other.iam.gserviceaccount.com", "audience": "a"}}}}}},
    namespace="elsewhere")
"""

SETTINGS = {
    "projectNumbers": NUMBERS,
    "perimeterProjects": ["acme-vault"],
    "defaultProject": PROJECT,
}


def _project(folder: Path, program: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    (folder / "Pulumi.dev.yaml").write_text(json.dumps({"config": {"gcp:project": PROJECT}}))
    (folder / "__main__.py").write_text(program)
    return folder


def _config(folder: Path) -> Path:
    from pushguard.rules import RULES

    path = folder / "policy-config.json"
    path.write_text(json.dumps({rule.id: SETTINGS for rule in RULES}))
    return path


def _preview(folder: Path, program: str) -> tuple[int, dict[str, Any], str]:
    project = _project(folder / "project", program)
    config = _config(folder)
    with pytest.MonkeyPatch.context() as env:
        for name in PROJECT_VARIABLES:
            env.delenv(name, raising=False)
        result = CliRunner().invoke(
            app, ["preview", str(project), "-f", "json", "--policy-config", str(config)]
        )
    report = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.exit_code, report, result.stdout + result.stderr


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    code, report, text = _preview(tmp_path_factory.mktemp("followup"), PROGRAM)
    assert code in (0, 1), text
    return code, report


def _found(report: dict[str, Any], name: str, level: str = "") -> dict[str, str]:
    """policy -> message of the violations (of ``level``, any without) on the resource
    ``name``."""
    return {
        v["policy"]: v["message"]
        for v in report["violations"]
        if v["urn"].endswith(f"::{name}") and v["level"].startswith(level)
    }


def _not_checked(report: dict[str, Any], name: str) -> dict[str, str]:
    return {
        n["policy"]: n["reason"] for n in report["notChecked"] if n["urn"].endswith(f"::{name}")
    }


@pytest.mark.parametrize("name", ["gcp-snake", "tf-pascal", "transformed"])
def test_a_bridged_key_in_another_case_is_read_as_the_bridge_reads_it(run, name: str) -> None:
    _, report = run
    found = _found(report, name)
    assert "The push endpoint uses http://" in found["push-endpoint-https"], found


def test_snake_case_inside_a_camel_case_block_and_at_the_top(run) -> None:
    _, report = run
    assert "acme-other" in _found(report, "tf-mixed")["push-sa-same-project"]
    assert "push-no-exactly-once" in _found(report, "tf-once")


def test_two_spellings_that_disagree_are_refused(run) -> None:
    _, report = run
    message = _found(report, "tf-conflict")["push-endpoint-https"]
    assert "given as both 'pushConfig' and 'push_config'" in message


def test_a_compliant_snake_case_subscription_and_user_label_keys_pass(run) -> None:
    _, report = run
    assert _found(report, "tf-ok", "mandatory") == {}  # labels' keys are data: no conflict


@pytest.mark.parametrize(
    ("name", "spelt", "meant"),
    [
        ("native-snake", "push_config", "pushConfig"),
        ("kcc-snake", "spec.push_config", "pushConfig"),
    ],
)
def test_a_route_that_does_not_rename_refuses_the_misspelt_key(run, name, spelt, meant) -> None:
    _, report = run
    message = _found(report, name)["push-endpoint-https"]
    assert f"{spelt}: 'push_config' is not '{meant}'" in message


def test_a_config_connector_patch_is_checked_like_a_subscription(run) -> None:
    _, report = run
    assert "The push endpoint uses http://" in _found(report, "patch-http")["push-endpoint-https"]
    assert [v for v in report["violations"] if "PubSubSubscriptionPatch" in v["urn"]]
    assert _found(report, "patch-ok", "mandatory") == {}  # unset fields are unknown, not bad


def test_yaml_decode_is_answered_offline_so_decoded_objects_are_checked(run) -> None:
    _, report = run
    assert "uses http://" in _found(report, "decoded")["push-endpoint-https"]
    [record] = [r for r in report["resources"] if r["name"] == "decoded"]
    assert record["inputs"]["metadata"]["namespace"] == "team"  # defaultNamespace applied


def test_the_namespace_comes_from_the_providers_kubeconfig_context(run) -> None:
    _, report = run
    assert "push-vpcsc-default-url" in _found(report, "kcc-context")  # acme-vault, perimeter


def test_an_explicit_namespace_of_unknown_project_is_not_judged_in_default_project(run) -> None:
    _, report = run
    assert "push-sa-same-project" not in _found(report, "kcc-elsewhere")
    reasons = _not_checked(report, "kcc-elsewhere")
    assert "namespace 'elsewhere' is not declared" in reasons["push-sa-same-project"]
    assert all("defaultProject" not in reason for reason in reasons.values()), reasons


def test_a_raw_custom_resource_is_located_at_the_stack_config(run) -> None:
    """The SDK sends no source position for ``pulumi.CustomResource(...)`` made directly
    (``_get_stack_trace`` in ``pulumi/runtime/resource.py`` looks for the concrete class's
    ``__init__`` frame and finds none), so the engine does not know the line, as the Pulumi CLI
    does not: the finding is placed at the stack's config file, never at a wrong line."""
    _, report = run
    [native] = [v for v in report["violations"] if v["urn"].endswith("::native-snake")][:1]
    assert Path(native["location"]["path"]).name == "Pulumi.dev.yaml"
    assert native["location"]["line"] == 1


UNREADABLE = f"""import pulumi
pulumi.CustomResource("google-native:pubsub/v1beta2:Subscription", "b2", {{
    "project": {PROJECT!r}, "subscriptionId": "b2", "topic": "t",
    "pushConfig": {{"pushEndpoint": "http://example.com/x"}}}})
pulumi.CustomResource("gcp:eventarc/trigger:Trigger", "trigger", {{"location": "europe-west1"}})
"""

HELM = """import pulumi
objects = pulumi.runtime.invoke("kubernetes:helm:template", {"jsonOpts": "{}"}).value
"""


def test_an_unmapped_subscription_type_fails_the_preview_naming_it(tmp_path: Path) -> None:
    code, report, text = _preview(tmp_path, UNREADABLE)
    assert code == 2, text
    assert "google-native:pubsub/v1beta2:Subscription" in report["error"]["message"]
    assert "eventarc" not in report["error"]["message"]  # Google manages a trigger's subscription


def test_a_helm_chart_fails_the_preview_naming_the_function(tmp_path: Path) -> None:
    code, report, text = _preview(tmp_path, HELM)
    assert code == 2, text
    assert "kubernetes:helm:template" in report["error"]["message"]
