"""Issue 20, parts 3 and 6, through `pushguard preview` as users run it.

A push endpoint computed from a Cloud Run service's URL, and the computed outputs of a plain data
source (``gcp.cloudfunctions.get_function(...)``), are not known at preview. The gate says so (a
"can't run during preview" advisory, a violation with ``unknownAtPreview: enforce``, or a
mandatory violation it can decide anyway), never a pass and never a pull subscription.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pushguard.rules import RULES
from tests.preview.conftest import Invocation

SUB = "urn:pulumi:dev::team::gcp:pubsub/subscription:Subscription::"
SA = "push@acme-orders.iam.gserviceaccount.com"
OIDC = f"'oidc_token': {{'service_account_email': '{SA}', 'audience': 'orders'}}"
SERVICE = (
    "import pulumi\n"
    "import pulumi_gcp as gcp\n"
    "svc = gcp.cloudrunv2.Service('orders', location='europe-west1',\n"
    "    template={'containers': [{'image': 'europe-docker.pkg.dev/acme/orders'}]})\n"
)


def subscription(endpoint: str, *, oidc: bool = True, name: str = "orders") -> str:
    auth = f", {OIDC}" if oidc else ""
    return (
        f"gcp.pubsub.Subscription('{name}', topic='orders',\n"
        f"    push_config={{'push_endpoint': {endpoint}{auth}}})\n"
    )


def config(tmp_path: Path, **settings: Any) -> str:
    path = tmp_path / "policy-config.json"
    path.write_text(json.dumps({rule.id: dict(settings) for rule in RULES}))
    return str(path)


def run(
    preview: Callable[..., Invocation], folder: Path, policy_config: str | None = None
) -> tuple[int, dict[str, Any]]:
    args = [str(folder), "-f", "json"]
    if policy_config:
        args += ["--policy-config", policy_config]
    result = preview(*args)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    return result.exit_code, result.json()


def cant_run(report: dict[str, Any], policy: str, name: str) -> list[dict[str, Any]]:
    return [
        v
        for v in report["violations"]
        if v["policy"] == policy
        and v["urn"] == SUB + name
        and v["level"] == "advisory"
        and "during preview" in v["message"]
    ]


def flagged(report: dict[str, Any], policy: str, name: str) -> bool:
    """The report says the rule is not decided for the subscription ``name`` (of any route's
    type): a violation of it, a "can't run during preview" diagnostic, or a not-checked entry."""
    mine = f"::{name}"
    return any(
        v["policy"] == policy and v["urn"].endswith(mine) for v in report["violations"]
    ) or any(n["policy"] == policy and n["urn"].endswith(mine) for n in report["notChecked"])


# --- part 3: values derived from a Cloud Run URL ----------------------------------------------

DERIVED = {
    "apply-http": "svc.uri.apply(lambda u: 'http://' + u[len('https://'):] + '/push')",
    "concat-relay": "pulumi.Output.concat('http://relay.example/fwd?to=', svc.uri)",
    "format-path": "pulumi.Output.format('{0}/push', svc.uri)",
}


@pytest.mark.parametrize("endpoint", DERIVED.values(), ids=DERIVED.keys())
def test_an_endpoint_derived_from_a_cloud_run_uri_cannot_run_at_preview(
    preview, make_project, endpoint: str
) -> None:
    code, report = run(preview, make_project(SERVICE + subscription(endpoint)))
    [found] = cant_run(report, "push-endpoint-https", "orders")
    assert "not known" in found["message"]
    assert "gcp:cloudrunv2/service:Service 'orders'" in found["message"]
    assert code == 0  # warn (the default): advisory


@pytest.mark.parametrize("endpoint", DERIVED.values(), ids=DERIVED.keys())
def test_with_enforce_an_endpoint_derived_from_a_cloud_run_uri_fails_the_preview(
    preview, make_project, tmp_path: Path, endpoint: str
) -> None:
    folder = make_project(SERVICE + subscription(endpoint))
    code, report = run(preview, folder, config(tmp_path, unknownAtPreview="enforce"))
    assert code == 1
    https = [v for v in report["violations"] if v["policy"] == "push-endpoint-https"]
    assert [(v["level"], v["urn"]) for v in https] == [("mandatory", SUB + "orders")]
    assert "could not be verified" in https[0]["message"]


def test_a_custom_domain_built_from_the_uri_in_a_perimeter_project_is_not_passed(
    preview, make_project, tmp_path: Path
) -> None:
    endpoint = "svc.uri.apply(lambda u: 'https://push.orders.example/' + u.split('//')[1])"
    folder = make_project(SERVICE + subscription(endpoint))
    code, report = run(preview, folder, config(tmp_path, perimeterProjects=["acme-orders"]))
    assert cant_run(report, "push-vpcsc-default-url", "orders")
    code, report = run(
        preview,
        folder,
        config(tmp_path, perimeterProjects=["acme-orders"], unknownAtPreview="enforce"),
    )
    assert code == 1
    assert any(
        v["policy"] == "push-vpcsc-default-url" and v["level"] == "mandatory"
        for v in report["violations"]
    )


def test_the_service_uri_itself_is_reported_as_undecided_too(preview, make_project) -> None:
    """The engine sends ``svc.uri`` and a value computed from it alike (an unknown with a
    property dependency on the service), so neither is presumed; the reason names the service."""
    code, report = run(preview, make_project(SERVICE + subscription("svc.uri")))
    assert code == 0
    [found] = cant_run(report, "push-endpoint-https", "orders")
    assert "gcp:cloudrunv2/service:Service 'orders'" in found["message"]


def test_a_known_run_app_endpoint_still_passes_without_a_diagnostic(preview, make_project) -> None:
    endpoint = "'https://orders-3kq2x7ab9c-ew.a.run.app/push'"
    code, report = run(preview, make_project(SERVICE + subscription(endpoint)))
    assert code == 0
    assert not [v for v in report["violations"] if v["policy"] == "push-endpoint-https"]


# --- part 6: plain data sources ----------------------------------------------------------------

FUNCTION = (
    "import pulumi_gcp as gcp\n"
    "fn = gcp.cloudfunctions.get_function(name='orders', region='europe-west1')\n"
)


def test_a_plain_data_source_url_is_unknown_not_absent(preview, make_project) -> None:
    """Without an OIDC account the subscription breaks push-auth-oidc: judged as a push
    subscription (its endpoint is unknown), not as a pull one."""
    code, report = run(
        preview, make_project(FUNCTION + subscription("fn.https_trigger_url", oidc=False))
    )
    [sub] = [r for r in report["resources"] if r["urn"] == SUB + "orders"]
    assert "[unknown]" in sub["inputs"]["pushConfig"]["pushEndpoint"]
    assert any(v["policy"] == "push-auth-oidc" for v in report["violations"]), report
    assert code == 1
    listed = [(u["kind"], u["name"]) for u in report["unknownOffline"]]
    assert ("dataSource", "gcp:cloudfunctions/getFunction:getFunction") in listed, listed


def test_a_url_derived_from_a_plain_data_source_cannot_run_at_preview(
    preview, make_project
) -> None:
    endpoint = "fn.https_trigger_url.replace('https://', 'http://')"
    _, report = run(preview, make_project(FUNCTION + subscription(endpoint)))
    assert cant_run(report, "push-endpoint-https", "orders"), report["violations"]


def test_a_plain_cloud_run_data_source_uri_feeds_the_component(preview, make_project) -> None:
    program = (
        "import pulumi_gcp as gcp\n"
        "from pushguard.components import PushSubscription\n"
        "svc = gcp.cloudrunv2.get_service(name='orders', location='europe-west1')\n"
        "PushSubscription('orders', {'topic': 'orders', 'push_endpoint': svc.uri + '/push',\n"
        "    'target': {'kind': 'cloud-run', 'name': 'orders', 'location': 'europe-west1'},\n"
        "    'audience': 'orders'})\n"
    )
    code, report = run(preview, make_project(program))
    [sub] = [r for r in report["resources"] if r["type"] == "gcp:pubsub/subscription:Subscription"]
    assert report["resources"] and code == 0, report.get("error")
    assert sub["inputs"]["pushConfig"]["pushEndpoint"] in ("[unknown]", "[secret]")
    https = [v for v in report["violations"] if v["policy"] == "push-endpoint-https"]
    assert [(v["urn"], v["level"]) for v in https] == [(sub["urn"], "advisory")]
    assert "during preview" in https[0]["message"]


# --- the table: a mandatory violation registered through a derived value or a data source -------

CORPUS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "run-uri-apply-http": (
        SERVICE + subscription(DERIVED["apply-http"]),
        "push-endpoint-https",
        {},
    ),
    "run-uri-concat-relay": (
        SERVICE + subscription(DERIVED["concat-relay"]),
        "push-endpoint-https",
        {},
    ),
    "run-urls-apply-http": (
        SERVICE + subscription("svc.urls.apply(lambda u: u[0].replace('https', 'http'))"),
        "push-endpoint-https",
        {},
    ),
    "run-uri-custom-domain-in-perimeter": (
        SERVICE + subscription("svc.uri.apply(lambda u: 'https://push.example/')"),
        "push-vpcsc-default-url",
        {"perimeterProjects": ["acme-orders"]},
    ),
    "function-v1-url-http": (
        "import pulumi\nimport pulumi_gcp as gcp\n"
        "fn = gcp.cloudfunctions.Function('orders', runtime='python311', entry_point='m',\n"
        "    trigger_http=True, region='europe-west1')\n"
        + subscription("fn.https_trigger_url.apply(lambda u: 'http' + u[5:])"),
        "push-endpoint-https",
        {},
    ),
    "plain-get-function-no-oidc": (
        FUNCTION + subscription("fn.https_trigger_url", oidc=False),
        "push-auth-oidc",
        {},
    ),
    "plain-get-function-http": (
        FUNCTION + subscription("'http://' + fn.https_trigger_url[8:]"),
        "push-endpoint-https",
        {},
    ),
    "plain-get-service-no-oidc": (
        "import pulumi_gcp as gcp\n"
        "svc = gcp.cloudrunv2.get_service(name='orders', location='europe-west1')\n"
        + subscription("svc.uri", oidc=False),
        "push-auth-oidc",
        {},
    ),
    "plain-get-service-custom-domain-in-perimeter": (
        "import pulumi_gcp as gcp\n"
        "svc = gcp.cloudrunv2.get_service(name='orders', location='europe-west1')\n"
        + subscription("'https://push.example/' + svc.name"),
        "push-vpcsc-default-url",
        {"perimeterProjects": ["acme-orders"]},
    ),
    "plain-get-service-uri-in-perimeter": (
        "import pulumi_gcp as gcp\n"
        "svc = gcp.cloudrunv2.get_service(name='orders', location='europe-west1')\n"
        + subscription("svc.uri.replace('a.run.app', 'orders.example')"),
        "push-vpcsc-default-url",
        {"perimeterProjects": ["acme-orders"]},
    ),
}


# The same through the other routes to a push subscription (issue 25): a service's URL known only
# after it is created, and a project not known offline.
_ROUTED = (
    "import pulumi\n"
    "class R(pulumi.CustomResource):\n"
    "    uri: pulumi.Output[str]\n"
    "    status: pulumi.Output[dict]\n"
    "OIDC = {'serviceAccountEmail': 'push@acme-orders.iam.gserviceaccount.com'}\n"
)
CORPUS |= {
    "native-run-uri-apply-http": (
        _ROUTED + "svc = R('google-native:run/v2:Service', 'orders', {'location': 'europe-west1',\n"
        "    'template': {'containers': [{'image': 'orders'}]}, 'uri': None})\n"
        "R('google-native:pubsub/v1:Subscription', 'orders', {'subscriptionId': 'orders',\n"
        "    'topic': 'projects/acme-orders/topics/orders', 'pushConfig': {\n"
        "    'pushEndpoint': svc.uri.apply(lambda u: 'http://' + u[8:]), 'oidcToken': OIDC}})\n",
        "push-endpoint-https",
        {},
    ),
    "terraform-run-uri-custom-domain-in-perimeter": (
        _ROUTED + "svc = R('google:index/cloudRunV2Service:CloudRunV2Service', 'orders', {\n"
        "    'location': 'europe-west1', 'project': 'acme-orders', 'uri': None})\n"
        "R('google-beta:index/pubsubSubscription:PubsubSubscription', 'orders', {\n"
        "    'topic': 'orders', 'project': 'acme-orders', 'pushConfig': {\n"
        "    'pushEndpoint': svc.uri.apply(lambda u: 'https://push.example/'),\n"
        "    'oidcToken': OIDC}})\n",
        "push-vpcsc-default-url",
        {"perimeterProjects": ["acme-orders"]},
    ),
    "kcc-run-status-uri-apply-http": (
        _ROUTED + "svc = R('kubernetes:run.cnrm.cloud.google.com/v1beta1:RunService', 'orders', {\n"
        "    'apiVersion': 'run.cnrm.cloud.google.com/v1beta1', 'kind': 'RunService',\n"
        "    'metadata': {'name': 'orders'}, 'spec': {'location': 'europe-west1'},\n"
        "    'status': None})\n"
        "R('kubernetes:pubsub.cnrm.cloud.google.com/v1beta1:PubSubSubscription', 'orders', {\n"
        "    'apiVersion': 'pubsub.cnrm.cloud.google.com/v1beta1', 'kind': 'PubSubSubscription',\n"
        "    'metadata': {'name': 'orders',\n"
        "                 'annotations': {'cnrm.cloud.google.com/project-id': 'acme-orders'}},\n"
        "    'spec': {'topicRef': {'name': 'orders'}, 'pushConfig': {\n"
        "        'pushEndpoint': svc.status.apply(lambda s: 'http://' + s['uri'][8:]),\n"
        "        'oidcToken': OIDC}}})\n",
        "push-endpoint-https",
        {},
    ),
}


@pytest.mark.parametrize(("program", "policy", "settings"), CORPUS.values(), ids=CORPUS.keys())
def test_a_violation_through_a_derived_value_or_a_data_source_is_never_a_quiet_pass(
    preview, make_project, tmp_path: Path, program: str, policy: str, settings: dict[str, Any]
) -> None:
    folder = make_project(program)
    code, report = run(preview, folder, config(tmp_path, **settings))
    assert code == 1 or flagged(report, policy, "orders"), (
        code,
        report["violations"],
        report["notChecked"],
    )
    enforce = config(tmp_path, unknownAtPreview="enforce", **settings)
    if ".get_" not in program:
        code, report = run(preview, folder, enforce)
        assert code == 1, (report["violations"], report["notChecked"])
        return
    # A data source the real preview would call is unknown offline: with enforce the run is
    # incomplete (exit 2, naming it), and the report still carries the violation.
    result = preview(str(folder), "-f", "json", "--policy-config", enforce)
    report = result.json()
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "unknownAtPreview is enforce" in report["error"]["message"]
    assert any(u["kind"] == "dataSource" for u in report["unknownOffline"])
    assert any(v["policy"] == policy and v["level"] == "mandatory" for v in report["violations"])
