"""Issue 34 item 4: one program of Eventarc triggers on every route the pack reads them
(pulumi-gcp, Google Cloud Native, Config Connector through pulumi-kubernetes), shared by the
preview, protocol and analyze tests.

Each route declares, in its own resources:

- ``*-attacker``: an HTTP endpoint destination ``http://10.0.0.5/push`` and a service account of
  another project: ``push-endpoint-https`` and ``push-sa-same-project`` (both mandatory) fail it;
- ``*-ok``: an ``https://`` endpoint inside the VPC network (an internal name, a private address)
  and an account of the trigger's project: nothing at all, not even a "not checked" entry (for
  Config Connector, the account is an ``IAMServiceAccount`` of the stack, named by reference);
- ``*-run``: a Cloud Run destination: its endpoint is Google's, so ``push-endpoint-https`` lists
  it as not checked (Google manages it); its account (the trigger's project) passes;

and pulumi-gcp adds ``gcp-run-elsewhere`` (a Cloud Run destination whose account is of another
project: ``push-sa-same-project`` fails it whatever the destination) and ``gcp-token`` (a shared
secret in the endpoint's query string: ``push-no-query-token``, advisory).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pushguard.rules import RULES

PROJECT = "acme-web"
NUMBERS = {PROJECT: "111111111111", "acme-shared": "333333333333"}
SA = f"orders-events@{PROJECT}.iam.gserviceaccount.com"
OTHER_SA = "pusher@acme-shared.iam.gserviceaccount.com"
CONFIG = {"gcp:project": PROJECT, "google-native:project": PROJECT}

TRIGGER_RULES = {"push-endpoint-https", "push-no-query-token", "push-sa-same-project"}
"""The rules that judge an Eventarc trigger; no other policy may say anything about one."""

GCP = "gcp:eventarc/trigger:Trigger"
NATIVE = "google-native:eventarc/v1:Trigger"
KCC = "kubernetes:eventarc.cnrm.cloud.google.com/v1beta1:EventarcTrigger"

PROGRAM = f"""import pulumi
R = pulumi.CustomResource
SA, OTHER_SA = {SA!r}, {OTHER_SA!r}
ATTACHMENT = "projects/{PROJECT}/regions/europe-west1/networkAttachments/orders"
CRITERIA = [{{"attribute": "type", "value": "google.cloud.pubsub.topic.v1.messagePublished"}}]
def http(uri):
    return {{"httpEndpoint": {{"uri": uri}}, "networkConfig": {{"networkAttachment": ATTACHMENT}}}}
RUN = {{"cloudRunService": {{"service": "orders", "region": "europe-west1"}}}}
def gcp(name, destination, account):
    R({GCP!r}, name, {{"location": "europe-west1", "matchingCriterias": CRITERIA,
        "destination": destination, "serviceAccount": account}})
gcp("gcp-attacker", http("http://10.0.0.5/push"), OTHER_SA)
gcp("gcp-ok", http("https://orders.acme.internal/push"), SA)
gcp("gcp-run", RUN, SA)
gcp("gcp-run-elsewhere", RUN, OTHER_SA)
gcp("gcp-token", http("https://10.0.0.7/push?token=hunter2"), SA)
def native(name, destination, account):
    R({NATIVE!r}, name, {{"triggerId": name, "location": "europe-west1",
        "eventFilters": CRITERIA, "destination": destination, "serviceAccount": account}})
native("native-attacker", http("http://10.0.0.5/push"), OTHER_SA)
native("native-ok", http("https://10.0.0.6/push"), SA)
native("native-run", {{"cloudRun": RUN["cloudRunService"]}}, SA)
ANNOTATION = "cnrm.cloud.google.com/project-id"
R("kubernetes:core/v1:Namespace", "team", {{"apiVersion": "v1", "kind": "Namespace",
    "metadata": {{"name": "team", "annotations": {{ANNOTATION: {PROJECT!r}}}}}}})
R("kubernetes:iam.cnrm.cloud.google.com/v1beta1:IAMServiceAccount", "orders-events", {{
    "apiVersion": "iam.cnrm.cloud.google.com/v1beta1", "kind": "IAMServiceAccount",
    "metadata": {{"name": "orders-events", "namespace": "team",
                 "annotations": {{ANNOTATION: {PROJECT!r}}}}}, "spec": {{}}}})
KCC_HTTP = {{"httpEndpoint": {{"uri": "http://10.0.0.5/push"}},
    "networkConfig": {{"networkAttachmentRef": {{"external": ATTACHMENT}}}}}}
def kcc(name, destination, account):
    R({KCC!r}, name, {{
        "apiVersion": "eventarc.cnrm.cloud.google.com/v1beta1", "kind": "EventarcTrigger",
        "metadata": {{"name": name, "namespace": "team"}},
        "spec": {{"projectRef": {{"external": "projects/{PROJECT}"}}, "location": "europe-west1",
                  "matchingCriteria": CRITERIA, "destination": destination,
                  "serviceAccountRef": account}}}})
kcc("kcc-attacker", KCC_HTTP, {{"external": OTHER_SA}})
kcc("kcc-ok", {{**KCC_HTTP, "httpEndpoint": {{"uri": "https://orders.acme.internal/push"}}}},
    {{"name": "orders-events"}})
kcc("kcc-run", {{"cloudRunService": {{"region": "europe-west1",
    "serviceRef": {{"external": "projects/{PROJECT}/locations/europe-west1/services/orders"}}}}}},
    {{"name": "orders-events"}})
"""

TRIGGERS = {
    **{n: GCP for n in ("gcp-attacker", "gcp-ok", "gcp-run", "gcp-run-elsewhere", "gcp-token")},
    **{n: NATIVE for n in ("native-attacker", "native-ok", "native-run")},
    **{n: KCC for n in ("kcc-attacker", "kcc-ok", "kcc-run")},
}
"""Trigger name -> its type token."""

ATTACKER = {("push-endpoint-https", "mandatory"), ("push-sa-same-project", "mandatory")}
EXPECTED = {
    **{f"{route}-attacker": ATTACKER for route in ("gcp", "native", "kcc")},
    "gcp-run-elsewhere": {("push-sa-same-project", "mandatory")},
    "gcp-token": {("push-no-query-token", "advisory")},
}
"""Trigger name -> the ``(policy, level)`` violations it must have (every other: none)."""

GOOGLE_MANAGED = {"gcp-run", "gcp-run-elsewhere", "native-run", "kcc-run"}
"""The triggers whose endpoint Google manages: listed as not checked by push-endpoint-https."""


def urn_of(name: str) -> str:
    return f"urn:pulumi:dev::team::{TRIGGERS[name]}::{name}"


def policy_config() -> dict[str, Any]:
    """``policy-config.json`` for the scenario: project numbers under every policy."""
    return {rule.id: {"projectNumbers": NUMBERS} for rule in RULES}


def assert_trigger_findings(
    violations: Iterable[tuple[str, str, str]], not_checked: Iterable[tuple[str, str, str]]
) -> None:
    """What every enforcement point must say of the triggers: ``violations`` as ``(policy,
    level, urn)``, ``not_checked`` as ``(policy, urn, reason)``; nothing by a rule that does not
    judge triggers, nothing on a compliant trigger."""
    found, unchecked = list(violations), list(not_checked)
    for name in TRIGGERS:
        urn = urn_of(name)
        got = {(policy, level) for policy, level, u in found if u == urn}
        assert got == EXPECTED.get(name, set()), (name, got)
        listed = {policy: reason for policy, u, reason in unchecked if u == urn}
        if name in GOOGLE_MANAGED:
            assert set(listed) == {"push-endpoint-https"}, (name, listed)
            assert "Google manages the endpoint" in listed["push-endpoint-https"], listed
            assert "Cloud Run service destination" in listed["push-endpoint-https"], listed
        else:
            assert listed == {}, (name, listed)


def deployed() -> list[Any]:
    """The program's records under the mocks as ``pulumi up`` runs it (every output known)."""
    from pushguard.preview.mocks import GcpMocks
    from tests.mock_runtime.engine import run_program

    providers: dict[str, dict[str, str]] = {}
    for key, value in CONFIG.items():
        package, _, name = key.partition(":")
        providers.setdefault(package, {})[name] = value
    mocks = GcpMocks(project_numbers=NUMBERS, providers=providers, environ={})
    code = compile(PROGRAM, "__main__.py", "exec")
    run = run_program(
        lambda: exec(code, {"__name__": "__main__"}),
        mocks,
        project="team",
        stack="dev",
        config=CONFIG,
        preview=False,
    )
    return run.records
