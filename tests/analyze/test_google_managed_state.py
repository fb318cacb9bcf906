"""Issue 35 item 1 in ``pushguard analyze`` as users run it: a stack state that imported the
subscriptions Google made for a Cloud Build Pub/Sub trigger and a 1st-gen Cloud Function (the
forms of public Terraform exports) passes; its JSON, SARIF and text reports list them as
Google-managed, with a count; a look-alike in the same state is still a violation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from tests.analyze.test_analyze import SARIF_SCHEMA, analyze, write
from tests.analyze.test_audit_of_record import (
    GOOD_PUSH,
    PROJECT,
    STACK,
    SUB_TYPE,
    P,
    _custom,
    state,
)

GCB = "rpc://name:CloudBuildPushEndpoint:gslb:google.pubsub.v1.cloudbuildpushendpoint-prod-global"
HOST = "218a028a94d362d4917be8e338e55333-dot-wd98ee21ff09809b5p-tp.appspot.com"


def gcf(topic: str, host: str = HOST) -> str:
    return (
        f"https://{host}/_ah/push-handlers/pubsub/projects/{P}/topics/{topic}?pubsub_trigger=true"
    )


def urn(name: str) -> str:
    return f"urn:pulumi:{STACK}::{PROJECT}::{SUB_TYPE}::{name}"


def imported(name: str, endpoint: str, topic: str) -> dict[str, Any]:
    """A subscription ``pulumi import`` brought into the stack: its inputs are what it is."""
    inputs = {
        "name": name,
        "project": P,
        "topic": f"projects/{P}/topics/{topic}",
        "ackDeadlineSeconds": 600,
        "pushConfig": {"pushEndpoint": endpoint, "attributes": {"x-goog-version": "v1"}},
    }
    return _custom(
        urn(name), SUB_TYPE, inputs, {**inputs, "id": f"projects/{P}/subscriptions/{name}"}
    )


GOOGLES = [
    imported("gcb-deploy-on-release", GCB, "releases"),
    imported(
        "gcf-portfolio-logger-europe-west1-portfolio-logger-v1",
        gcf("portfolio-logger-v1"),
        "portfolio-logger-v1",
    ),
]
LOOK_ALIKE = imported(
    "gcf-evil-europe-west1-portfolio-logger-v1",
    gcf("portfolio-logger-v1", host=f"{HOST}.evil.example"),
    "portfolio-logger-v1",
)


def test_a_state_that_imported_googles_subscriptions_passes(tmp_path: Path) -> None:
    path = write(tmp_path, "prod.json", state(GOOD_PUSH, extra=GOOGLES))
    code, out, err = analyze(path, "-f", "json")
    assert code == 0, out + err
    report = json.loads(out)
    (stack,) = report["stacks"]
    managed = {m["urn"]: m for m in stack["googleManaged"]}
    assert set(managed) == {r["urn"] for r in GOOGLES}
    assert not [v for v in stack["violations"] if v["urn"] in managed]
    assert not [v for v in stack["violations"] if v["level"] == "mandatory"]
    assert managed[urn("gcb-deploy-on-release")]["product"] == "Cloud Build"
    gcf_urn = urn("gcf-portfolio-logger-europe-west1-portfolio-logger-v1")
    assert managed[gcf_urn]["product"] == "Cloud Functions (1st gen)"
    assert "the Pub/Sub function 'portfolio-logger' in europe-west1" in managed[gcf_urn]["reason"]
    assert stack["summary"]["googleManaged"] == 2
    assert report["summary"]["googleManaged"] == 2
    assert not [n for n in stack["notChecked"] if n["urn"] in managed]


def test_a_look_alike_in_the_same_state_is_a_violation(tmp_path: Path) -> None:
    path = write(tmp_path, "prod.json", state(GOOD_PUSH, extra=[*GOOGLES, LOOK_ALIKE]))
    code, out, err = analyze(path, "-f", "json")
    assert code == 1, out + err
    (stack,) = json.loads(out)["stacks"]
    found = {(v["policy"], v["level"], v["urn"]) for v in stack["violations"]}
    assert ("push-auth-oidc", "mandatory", LOOK_ALIKE["urn"]) in found
    assert not [v for v in stack["violations"] if v["urn"] in {r["urn"] for r in GOOGLES}]
    assert LOOK_ALIKE["urn"] not in {m["urn"] for m in stack["googleManaged"]}


def test_text_and_sarif_show_them_with_a_count(tmp_path: Path) -> None:
    path = write(tmp_path, "prod.json", state(GOOD_PUSH, extra=GOOGLES))
    code, text, _ = analyze(path)
    assert code == 0
    assert "Google-managed, not judged (2)" in text
    assert "2 Google-managed subscription(s) not judged" in text
    code, sarif, _ = analyze(path, "-f", "sarif")
    log = json.loads(sarif)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(log)
    (run,) = log["runs"]
    assert not [r for r in run["results"] if r["level"] == "error"]
    (invocation,) = run["invocations"]
    notes = [
        n
        for n in invocation["toolExecutionNotifications"]
        if n.get("descriptor", {}).get("id") == "google-managed"
    ]
    assert {n["properties"]["product"] for n in notes} == {
        "Cloud Build",
        "Cloud Functions (1st gen)",
    }
    assert invocation["properties"]["googleManaged"] == 2
