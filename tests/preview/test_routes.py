"""Issue 25 through `pushguard preview` as users run it: a push subscription made with Google
Cloud Native, Config Connector (pulumi-kubernetes) or the bridged Terraform google/google-beta
providers is checked like a pulumi-gcp one (scenarios in :mod:`tests.routes`, every route in one
program, previewed once); an Eventarc trigger's Google-managed endpoint is named as not checked."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from pushguard.cli import app
from pushguard.preview.mocks import PROJECT_VARIABLES
from tests.routes import ROUTES, assert_route_findings, write_policy_config, write_project


@pytest.fixture(scope="module")
def routes_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    """`pushguard preview -f json` of every route's scenario, once for the module."""
    folder = tmp_path_factory.mktemp("routes")
    project = write_project(folder / "project")
    config = write_policy_config(folder)
    with pytest.MonkeyPatch.context() as env:
        for name in PROJECT_VARIABLES:
            env.delenv(name, raising=False)
        result = CliRunner().invoke(
            app, ["preview", str(project), "-f", "json", "--policy-config", str(config)]
        )
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_route_is_checked_like_pulumi_gcp(routes_run, route: str) -> None:
    code, report = routes_run
    assert code == 1
    assert_route_findings(
        route,
        [(v["policy"], v["level"], v["urn"]) for v in report["violations"]],
        [(n["policy"], n["urn"], n["reason"]) for n in report["notChecked"]],
    )


def test_an_eventarc_trigger_to_cloud_run_is_named_as_not_checked(routes_run) -> None:
    """Its endpoint is Google's (issue 34; the triggers' own scenario is in
    tests/preview/test_eventarc.py): listed by the endpoint rule, by no rule that does not judge
    triggers, and never a violation."""
    _, report = routes_run
    entries = [n for n in report["notChecked"] if n["urn"].endswith("::orders-trigger")]
    assert {n["policy"] for n in entries} == {"push-endpoint-https"}
    assert all("Google manages the endpoint" in n["reason"] for n in entries)
    assert not [v for v in report["violations"] if v["urn"].endswith("::orders-trigger")]


def test_the_issues_three_http_subscriptions_fail_the_preview(preview, make_project) -> None:
    program = (
        "import pulumi\n"
        "pulumi.CustomResource('google-native:pubsub/v1:Subscription', 'native-sub', {\n"
        "    'subscriptionId': 'native-sub', 'topic': 'projects/acme-web/topics/orders',\n"
        "    'pushConfig': {'pushEndpoint': 'http://native.example.com/push'}})\n"
        "pulumi.CustomResource(\n"
        "    'kubernetes:pubsub.cnrm.cloud.google.com/v1beta1:PubSubSubscription', 'kcc-sub', {\n"
        "    'apiVersion': 'pubsub.cnrm.cloud.google.com/v1beta1', 'kind': 'PubSubSubscription',\n"
        "    'metadata': {'name': 'kcc-sub',\n"
        "                 'annotations': {'cnrm.cloud.google.com/project-id': 'acme-web'}},\n"
        "    'spec': {'topicRef': {'name': 'orders'},\n"
        "             'pushConfig': {'pushEndpoint': 'http://kcc.example.com/push'}}})\n"
        "pulumi.CustomResource('google:index/pubsubSubscription:PubsubSubscription', 'tf-sub', {\n"
        "    'name': 'tf-sub', 'topic': 'orders',\n"
        "    'pushConfig': {'pushEndpoint': 'http://tf.example.com/push'}})\n"
    )
    run = preview(str(make_project(program, {"dev": {"google-native:project": "acme-web"}})))
    assert run.exit_code == 1, run.stdout + run.stderr
    assert "Policy violations: 6 mandatory" in run.stdout  # http and no OIDC token, each
    for name in ("native-sub", "kcc-sub", "tf-sub"):
        assert f"{name}: The push endpoint uses http://" in run.stdout
