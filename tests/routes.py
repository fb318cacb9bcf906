"""One scenario per route to a push subscription (issues 25 and 34), shared by the preview,
protocol and analyze tests: the same stack written with Google Cloud Native, Config Connector
and Crossplane (provider-upjet-gcp) through pulumi-kubernetes, the bridged Terraform
``google``/``google-beta`` providers, and Deployment Manager deployments (one per subscription,
the subscription in the deployment's ``target.config.content``, its findings placed on the
deployment's URN).

Each program declares, in its route's own resources:

- ``ok``: a compliant push subscription (https Cloud Run default URL, a push-auth account in the
  subscription's project, an audience) with the Pub/Sub service agent's token-creator grant on the
  account and the account's invoker grant on the service: no finding at all;
- ``http``: an ``http://`` endpoint (``push-endpoint-https``, mandatory);
- ``elsewhere``: a push-auth account of another project (``push-sa-same-project``, mandatory);
- ``perimeter``: a custom domain in a project inside a VPC-SC perimeter
  (``push-vpcsc-default-url``, mandatory);
- ``ungranted``: compliant but for the IAM grants (``push-agent-token-creator`` and
  ``push-invoker-binding``, advisory): the grants of ``ok`` are read from the route's IAM
  resources, not presumed.

Config Connector adds ``unplaced``: no project annotation in a namespace the stack does not declare,
so every project-dependent rule is listed as not checked with the reason; Crossplane's
``unplaced`` sets no ``spec.forProvider.project``, so its project is its ProviderConfig's, which
is in the cluster (:data:`UNPLACED`).

Crossplane's scenario uses the three mapped versions (cluster-scoped v1beta1 with its blocks as
one-element lists, v1beta2, and the namespaced ``pubsub.gcp.m.upbound.io``), an
``initProvider`` that supplies the OIDC token ``forProvider`` leaves out, and the
``crossplane.io/external-name`` annotation. Crossplane's IAM kinds are not mapped (a stack that
grants through them has its grant rules not checked), so its grants are pulumi-gcp resources,
which the stack graph reads whatever route made the subscription.

The programs use ``pulumi.CustomResource`` with the routes' type tokens, which is what the
providers' SDKs (and ``crd2pulumi`` classes) register.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pushguard.rules import RULES

PROJECT = "acme-web"
NUMBERS = {PROJECT: "111111111111", "acme-vault": "222222222222", "acme-shared": "333333333333"}
SA = f"orders-push@{PROJECT}.iam.gserviceaccount.com"
AGENT = f"serviceAccount:service-{NUMBERS[PROJECT]}@gcp-sa-pubsub.iam.gserviceaccount.com"
RUN = f"https://orders-{NUMBERS[PROJECT]}.europe-west1.run.app/push"
SERVICE = f"projects/{PROJECT}/locations/europe-west1/services/orders"
CUSTOM = "https://push.acme.example/orders"
VAULT_SA = "vault-push@acme-vault.iam.gserviceaccount.com"
OTHER_SA = "pusher@acme-shared.iam.gserviceaccount.com"
UNGRANTED_SA = f"other-push@{PROJECT}.iam.gserviceaccount.com"
TOKEN_CREATOR = "roles/iam.serviceAccountTokenCreator"

SETTINGS = {"projectNumbers": NUMBERS, "perimeterProjects": ["acme-vault"]}

MANDATORY = {
    "http": "push-endpoint-https",
    "elsewhere": "push-sa-same-project",
    "perimeter": "push-vpcsc-default-url",
}
"""Subscription -> the mandatory rule it breaks."""
IAM_RULES = ("push-agent-token-creator", "push-invoker-binding")

_HEAD = f"""import pulumi
R = pulumi.CustomResource
SA, AGENT, RUN, CUSTOM = {SA!r}, {AGENT!r}, {RUN!r}, {CUSTOM!r}
VAULT_SA, OTHER_SA, UNGRANTED_SA = {VAULT_SA!r}, {OTHER_SA!r}, {UNGRANTED_SA!r}
def push(endpoint, account):
    return {{"pushEndpoint": endpoint,
             "oidcToken": {{"serviceAccountEmail": account, "audience": "orders"}}}}
"""

NATIVE = (
    _HEAD
    + f"""
R("google-native:iam/v1:ServiceAccountIamMember", "agent-token", {{
    "name": "projects/{PROJECT}/serviceAccounts/" + SA, "role": {TOKEN_CREATOR!r},
    "member": AGENT}})
R("google-native:run/v2:ServiceIamMember", "invoker", {{
    "name": {SERVICE!r}, "role": "roles/run.invoker", "member": "serviceAccount:" + SA}})
def sub(name, endpoint, account, **extra):
    R("google-native:pubsub/v1:Subscription", name, {{
        "subscriptionId": name, "topic": "projects/{PROJECT}/topics/orders",
        "pushConfig": push(endpoint, account), **extra}})
sub("ok", RUN, SA)
sub("http", "http://hooks.example.com/push", SA)
sub("elsewhere", RUN, OTHER_SA)
sub("perimeter", CUSTOM, VAULT_SA, project="acme-vault")
sub("ungranted", RUN, UNGRANTED_SA)
"""
)

TERRAFORM = (
    _HEAD
    + f"""
R("google:index/serviceAccountIamMember:ServiceAccountIamMember", "agent-token", {{
    "serviceAccountId": "projects/{PROJECT}/serviceAccounts/" + SA, "role": {TOKEN_CREATOR!r},
    "member": AGENT}})
R("google:index/cloudRunV2ServiceIamMember:CloudRunV2ServiceIamMember", "invoker", {{
    "name": "orders", "location": "europe-west1", "role": "roles/run.invoker",
    "member": "serviceAccount:" + SA}})
def sub(name, endpoint, account, package="google", **extra):
    R(package + ":index/pubsubSubscription:PubsubSubscription", name, {{
        "name": name, "topic": "orders", "pushConfig": push(endpoint, account), **extra}})
sub("ok", RUN, SA)
sub("http", "http://hooks.example.com/push", SA)
sub("elsewhere", RUN, OTHER_SA, package="google-beta")
sub("perimeter", CUSTOM, VAULT_SA, package="google-beta", project="acme-vault")
sub("ungranted", RUN, UNGRANTED_SA)
"""
)

KCC = (
    _HEAD
    + f"""
ANNOTATION = "cnrm.cloud.google.com/project-id"
R("kubernetes:core/v1:Namespace", "team", {{"apiVersion": "v1", "kind": "Namespace",
    "metadata": {{"name": "team", "annotations": {{ANNOTATION: {PROJECT!r}}}}}}})
def kcc(group, kind, name, spec, namespace="team", **annotations):
    metadata = {{"name": name, "namespace": namespace}}
    if annotations:
        metadata["annotations"] = {{ANNOTATION: annotations["project"]}}
    api = group + ".cnrm.cloud.google.com/v1beta1"
    R("kubernetes:" + api + ":" + kind, name, {{
        "apiVersion": api, "kind": kind, "metadata": metadata, "spec": spec}})
kcc("iam", "IAMServiceAccount", "orders-push", {{"displayName": "orders push"}})
kcc("iam", "IAMPolicyMember", "agent-token", {{
    "resourceRef": {{"kind": "IAMServiceAccount", "name": "orders-push"}},
    "role": {TOKEN_CREATOR!r}, "member": AGENT}})
kcc("iam", "IAMPartialPolicy", "invokers", {{
    "resourceRef": {{"kind": "RunService", "external": {SERVICE!r}}},
    "bindings": [{{"role": "roles/run.invoker", "members": [
        {{"memberFrom": {{"serviceAccountRef": {{"name": "orders-push"}}}}}}]}}]}})
def sub(name, endpoint, account, **kw):
    kcc("pubsub", "PubSubSubscription", name, {{"topicRef": {{"name": "orders"}},
        "pushConfig": push(endpoint, account)}}, **kw)
sub("ok", RUN, SA)
sub("http", "http://hooks.example.com/push", SA)
sub("elsewhere", RUN, OTHER_SA)
sub("perimeter", CUSTOM, VAULT_SA, project="acme-vault")
sub("ungranted", RUN, UNGRANTED_SA)
sub("unplaced", RUN, SA, namespace="elsewhere")
"""
)

DM_CONFIG = """resources:
- name: %(name)s
  type: %(kind)s
  properties:
    %(id)s
    topic: projects/acme-web/topics/orders
    pushConfig:
      pushEndpoint: %(endpoint)s
      oidcToken:
        serviceAccountEmail: %(account)s
        audience: orders
"""
"""A Deployment Manager configuration declaring one push subscription (the Pub/Sub REST fields)."""

DEPLOYMENT_MANAGER = (
    _HEAD
    + f"""
DM_CONFIG = {DM_CONFIG!r}
R("gcp:serviceaccount/iAMMember:IAMMember", "dm-agent-token", {{
    "serviceAccountId": "projects/{PROJECT}/serviceAccounts/" + SA, "role": {TOKEN_CREATOR!r},
    "member": AGENT}})
R("gcp:cloudrunv2/serviceIamMember:ServiceIamMember", "dm-invoker", {{
    "name": "orders", "location": "europe-west1", "role": "roles/run.invoker",
    "member": "serviceAccount:" + SA}})
def deployment(name, endpoint, account, kind="pubsub.v1.subscription", project=None):
    ident = "subscription: " + name
    if kind.startswith("gcp-types/"):  # the type provider's spelling, the project in its name
        ident = "name: projects/" + (project or {PROJECT!r}) + "/subscriptions/" + name
    content = DM_CONFIG % dict(name=name, kind=kind, id=ident, endpoint=endpoint,
                               account=account)
    props = {{"name": "dm-" + name, "target": {{"config": {{"content": content}}}}}}
    if project:
        props["project"] = project
    R("gcp:deploymentmanager/deployment:Deployment", name, props)
deployment("ok", RUN, SA)
deployment("http", "http://hooks.example.com/push", SA)
deployment("elsewhere", RUN, OTHER_SA, kind="gcp-types/pubsub-v1:projects.subscriptions")
deployment("perimeter", CUSTOM, VAULT_SA, project="acme-vault")
deployment("ungranted", RUN, UNGRANTED_SA)
"""
)

CROSSPLANE = (
    _HEAD
    + f"""
R("gcp:serviceaccount/iAMMember:IAMMember", "xp-agent-token", {{
    "serviceAccountId": "projects/{PROJECT}/serviceAccounts/" + SA, "role": {TOKEN_CREATOR!r},
    "member": AGENT}})
R("gcp:cloudrunv2/serviceIamMember:ServiceIamMember", "xp-invoker", {{
    "name": {SERVICE!r}, "role": "roles/run.invoker", "member": "serviceAccount:" + SA}})
def xp(name, endpoint, account, api="pubsub.gcp.upbound.io/v1beta2", project={PROJECT!r},
       init=False, **metadata):
    config = push(endpoint, account)
    spec = {{"forProvider": {{"topic": "orders", "pushConfig": config}}}}
    if init:  # the OIDC token given only at creation, as Upjet merges it
        spec["initProvider"] = {{"pushConfig": {{"oidcToken": config.pop("oidcToken")}}}}
    if api == "pubsub.gcp.upbound.io/v1beta1":  # its blocks are one-element lists
        for side in spec.values():
            block = side["pushConfig"]
            side["pushConfig"] = [{{k: [v] if k == "oidcToken" else v for k, v in block.items()}}]
    if project:
        spec["forProvider"]["project"] = project
    R("kubernetes:" + api + ":Subscription", name, {{"apiVersion": api, "kind": "Subscription",
        "metadata": {{"name": "xp-" + name, **metadata}}, "spec": spec}})
xp("ok", RUN, SA, annotations={{"crossplane.io/external-name": "orders-ok"}})
xp("http", "http://hooks.example.com/push", SA, api="pubsub.gcp.upbound.io/v1beta1")
xp("elsewhere", RUN, OTHER_SA, api="pubsub.gcp.m.upbound.io/v1beta1", namespace="team",
   init=True)
xp("perimeter", CUSTOM, VAULT_SA, project="acme-vault", api="pubsub.gcp.upbound.io/v1beta1",
   init=True)
xp("ungranted", RUN, UNGRANTED_SA)
xp("unplaced", RUN, SA, project=None)
"""
)

_KCC_SUB = "kubernetes:pubsub.cnrm.cloud.google.com/v1beta1:PubSubSubscription"
_DM = "gcp:deploymentmanager/deployment:Deployment"
_XP = "kubernetes:pubsub.gcp.{}upbound.io/{}:Subscription"
ROUTES: dict[str, tuple[str, dict[str, str], dict[str, str]]] = {
    "google-native": (
        NATIVE,
        {"google-native:project": PROJECT},
        {n: "google-native:pubsub/v1:Subscription" for n in (*MANDATORY, "ok", "ungranted")},
    ),
    "terraform": (
        TERRAFORM,
        {"google:project": PROJECT, "google-beta:project": PROJECT},
        {
            "ok": "google:index/pubsubSubscription:PubsubSubscription",
            "http": "google:index/pubsubSubscription:PubsubSubscription",
            "elsewhere": "google-beta:index/pubsubSubscription:PubsubSubscription",
            "perimeter": "google-beta:index/pubsubSubscription:PubsubSubscription",
            "ungranted": "google:index/pubsubSubscription:PubsubSubscription",
        },
    ),
    "config-connector": (
        KCC,
        {},
        {n: _KCC_SUB for n in (*MANDATORY, "ok", "ungranted", "unplaced")},
    ),
    "deployment-manager": (
        DEPLOYMENT_MANAGER,
        {"gcp:project": PROJECT},
        {n: _DM for n in (*MANDATORY, "ok", "ungranted")},
    ),
    "crossplane": (
        CROSSPLANE,
        {},
        {
            "ok": _XP.format("", "v1beta2"),
            "http": _XP.format("", "v1beta1"),
            "elsewhere": _XP.format("m.", "v1beta1"),
            "perimeter": _XP.format("", "v1beta1"),
            "ungranted": _XP.format("", "v1beta2"),
            "unplaced": _XP.format("", "v1beta2"),
        },
    ),
}
"""Route -> (program, stack config, subscription name -> its type token)."""

UNPLACED = {
    "config-connector": "namespace 'elsewhere' is not declared",
    "crossplane": "its ProviderConfig 'default', which is in the cluster",
}
"""Route -> what the reason of its ``unplaced`` subscription's not-checked rules says."""


def urn_of(route: str, name: str, project: str = "team", stack: str = "dev") -> str:
    return f"urn:pulumi:{stack}::{project}::{ROUTES[route][2][name]}::{name}"


def policy_config(**extra: Any) -> dict[str, Any]:
    """``policy-config.json`` for the scenarios: project numbers and the perimeter project."""
    return {rule.id: {**SETTINGS, **extra} for rule in RULES}


def write_policy_config(folder: Path, **extra: Any) -> Path:
    path = folder / "policy-config.json"
    path.write_text(json.dumps(policy_config(**extra)))
    return path


UNMAPPED = (
    "R('gcp:eventarc/trigger:Trigger', 'orders-trigger', {'location': 'europe-west1',\n"
    "    'destination': {'cloudRunService': {'service': 'orders'}}})\n"
)
"""An Eventarc trigger to Cloud Run: Eventarc creates and manages its push subscription, whose
endpoint is Google's (listed as not checked; tests/eventarc.py has the triggers' own scenario)."""


def all_routes() -> tuple[str, dict[str, str]]:
    """One program declaring every route's scenario (the same names under different types are
    different URNs) and :data:`UNMAPPED`, with the union of their stack config."""
    program = "".join(ROUTES[route][0] for route in sorted(ROUTES)) + UNMAPPED
    config = {k: v for route in sorted(ROUTES) for k, v in ROUTES[route][1].items()}
    return program, config


def write_project(folder: Path, route: str | None = None) -> Path:
    """The route's program (every route's: :func:`all_routes`, without ``route``) as a Pulumi
    project (stack ``dev``) in ``folder``."""
    program, config = all_routes() if route is None else ROUTES[route][:2]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    (folder / "__main__.py").write_text(program)
    (folder / "Pulumi.dev.yaml").write_text(json.dumps({"config": config}))
    return folder


def assert_route_findings(
    route: str,
    violations: Iterable[tuple[str, str, str]],
    not_checked: Iterable[tuple[str, str, str]],
    *,
    project: str = "team",
) -> None:
    """What every enforcement point must find for ``route``'s scenario: ``violations`` as
    ``(policy, level, urn)``, ``not_checked`` as ``(policy, urn, reason)``."""
    found = set(violations)
    unchecked = list(not_checked)

    def at(name: str) -> set[tuple[str, str]]:
        urn = urn_of(route, name, project)
        # Every route grants the same invoker binding, so in the stack of all routes together
        # push-shared-iam-binding rightly finds it held several times; it is not a route's matter.
        return {
            (policy, level)
            for policy, level, u in found
            if u == urn and policy != "push-shared-iam-binding"
        }

    assert at("ok") == set(), (route, "ok", at("ok"))
    # The service behind "ok" (orders) is not declared in the scenario: only the stack's own
    # invoker grant on it is seen, so whether it is public is not checked (never passed).
    ok = [n for n in unchecked if n[1] == urn_of(route, "ok", project)]
    assert [policy for policy, _, _ in ok] == ["push-target-requires-auth"], ok
    assert "IAM policy of orders is not in the stack" in ok[0][2], ok
    for name, policy in MANDATORY.items():
        assert (policy, "mandatory") in at(name), (route, name, at(name))
    assert {(rule, "advisory") for rule in IAM_RULES} <= at("ungranted"), at("ungranted")
    if "unplaced" in ROUTES[route][2]:
        urn = urn_of(route, "unplaced", project)
        reasons = {policy: reason for policy, u, reason in unchecked if u == urn}
        assert "push-sa-same-project" in reasons, unchecked
        assert UNPLACED[route] in reasons["push-sa-same-project"], reasons
        assert not any(level == "mandatory" for _, level in at("unplaced")), at("unplaced")


def deployed_state(
    records: Iterable[Any], config: Mapping[str, str], project: str = "team", stack: str = "dev"
) -> dict[str, Any]:
    """A ``pulumi stack export`` document (version 3) of resources created under the mocks in
    up mode (``records``: :class:`~pushguard.gate.result.ResourceRecord`): the stack, one
    default provider per package configured from ``config`` (``package:key``), the resources
    with their inputs, outputs, provider reference and property dependencies."""
    root = f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"
    listed = list(records)
    entries: list[dict[str, Any]] = [{"urn": root, "custom": False, "type": "pulumi:pulumi:Stack"}]
    providers: dict[str, str] = {}
    for record in listed:
        package = record.type.split(":", 1)[0]
        if package in providers or not record.custom:
            continue
        urn = f"urn:pulumi:{stack}::{project}::pulumi:providers:{package}::default"
        props = provider_config(config, package)
        providers[package] = f"{urn}::{package}-provider-id"
        entries.append(
            {"urn": urn, "custom": True, "id": f"{package}-provider-id",
             "type": f"pulumi:providers:{package}", "inputs": props, "outputs": props}
        )  # fmt: skip
    for record in listed:
        package = record.type.split(":", 1)[0]
        entries.append(
            {
                "urn": record.urn,
                "custom": record.custom,
                "id": f"{record.name}-id",
                "type": record.type,
                "inputs": dict(record.inputs),
                "outputs": dict(record.outputs),
                "parent": record.parent or root,
                # a (local) component has no provider: Pulumi records none
                "provider": record.provider or (record.custom and providers.get(package)) or "",
                "propertyDependencies": {
                    k: list(v) for k, v in record.property_dependencies.items()
                },
            }
        )
    return {"version": 3, "deployment": {"manifest": {"version": "v3.209.0"}, "resources": entries}}


def deployed(route: str | None = None) -> list[Any]:
    """The records of ``route``'s program (every route's without one) run under the mocks as
    ``pulumi up`` runs it (every output known), project ``team``, stack ``dev``."""
    from pushguard.preview.mocks import GcpMocks
    from tests.mock_runtime.engine import run_program

    program, config = all_routes() if route is None else ROUTES[route][:2]
    providers: dict[str, dict[str, str]] = {}
    for key, value in config.items():
        package, _, name = key.partition(":")
        providers.setdefault(package, {})[name] = value
    mocks = GcpMocks(project_numbers=NUMBERS, providers=providers, environ={})
    code = compile(program, "__main__.py", "exec")
    run = run_program(
        lambda: exec(code, {"__name__": "__main__"}),
        mocks,
        project="team",
        stack="dev",
        config=config,
        preview=False,
    )
    return run.records


def provider_config(config: Mapping[str, str], package: str) -> dict[str, str]:
    """The default provider's configuration of ``package`` from stack config ``config``."""
    return {k.partition(":")[2]: v for k, v in config.items() if k.partition(":")[0] == package}
