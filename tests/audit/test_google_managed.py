"""Issue 35 item 1 through ``pushguard audit`` as a user runs it: the push subscriptions Google
creates for Cloud Build Pub/Sub triggers (``gcb-*``) and 1st-gen Cloud Functions (``gcf-*``)
are reported as ``google-managed`` (never a violation; counted in summary.json, listed in
findings.jsonl and report.html, left out of --stacks' unmanaged count), while anything that
merely looks like one is judged by the rules as usual. The shapes are those of public Terraform
exports of real projects (cited in pushguard/rules/google_managed.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from pushguard.cli import app

from . import cai, states
from .conftest import write_lines

P, N = "acme-builds", "246813579024"
HASH, TENANT = "b1a05c63d5fde60502bc72cb0127c437", "o46fbf1c487424862"
GCB = "rpc://name:CloudBuildPushEndpoint:gslb:google.pubsub.v1.cloudbuildpushendpoint-prod-"
RUN = "https://orders-et73rt2k6a-ew.a.run.app"


def gcf(topic: str, host: str = f"{HASH}-dot-{TENANT}-tp.appspot.com", project: str = P) -> str:
    """The endpoint of a 1st-gen function's subscription, as the public exports show it."""
    return f"https://{host}/_ah/push-handlers/pubsub/projects/{project}/topics/{topic}" + (
        "?pubsub_trigger=true"
    )


def sub(
    name: str,
    endpoint: str,
    topic: str,
    account: str | None = None,
    attributes: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A subscription of project P on ``topic`` (its ID), as a CAI export line."""
    asset = cai.subscription(P, N, name, endpoint, account)
    data = asset["resource"]["data"]
    data["topic"] = f"projects/{P}/topics/{topic}"
    if attributes:
        data["pushConfig"]["attributes"] = attributes
    return asset


GOOGLES = {
    # name: (endpoint, topic, OIDC account, product)
    "gcb-deploy-on-release": (f"{GCB}global", "releases", None, "Cloud Build"),
    "gcb-nightly-build": (
        f"{GCB}europe-west1",
        "nightly",
        f"builder@{P}.iam.gserviceaccount.com",  # the trigger's serviceAccountEmail
        "Cloud Build",
    ),
    "gcf-resize-images-europe-west1-uploads": (gcf("uploads"), "uploads", None, "Cloud Functions"),
    "gcf-update_processed_data-processed": (gcf("processed"), "processed", None, "Cloud Functions"),
}
EVENTARC = "eventarc-europe-west1-orders-708717-sub-242"
"""Eventarc's subscription as the public cloud-city-cal export shows it: judged, and clean."""

LOOK_ALIKES = {
    # name: (endpoint, topic, the violation the rules find)
    "gcf-x-europe-west1-uploads": (
        gcf("uploads", host=f"{HASH}-dot-{TENANT}-tp.appspot.com.evil.example"),
        "uploads",
        "push-auth-oidc",
    ),
    "gcb-exfil": ("https://collector.evil.example/push", "releases", "push-auth-oidc"),
    "gcb-other-target": (
        "rpc://name:EvilPushEndpoint:gslb:google.pubsub.v1.cloudbuildpushendpoint-prod-global",
        "releases",
        "push-endpoint-https",
    ),
    "gcb-suffixed": (f"{GCB}global.evil.example", "releases", "push-endpoint-https"),
    "gcf-userinfo-europe-west1-uploads": (
        gcf("uploads", host=f"{HASH}-dot-{TENANT}-tp.appspot.com@evil.example"),
        "uploads",
        "push-endpoint-https",
    ),
    "gcf-encoded-europe-west1-uploads": (
        gcf("uploads", host=f"{HASH}-dot-{TENANT}-tp%2eappspot.com"),
        "uploads",
        "push-endpoint-https",
    ),
    "gcf-upper-europe-west1-uploads": (
        gcf("uploads").replace("tp.appspot.com", "TP.APPSPOT.COM"),
        "uploads",
        "push-auth-oidc",
    ),
    "gcf-port-europe-west1-uploads": (
        gcf("uploads", host=f"{HASH}-dot-{TENANT}-tp.appspot.com:8443"),
        "uploads",
        "push-auth-oidc",
    ),
    "gcf-another-topic-europe-west1-uploads": (gcf("payments"), "uploads", "push-auth-oidc"),
    "eventarc-europe-west1-exfil-1-sub-1": (
        "https://collector.evil.example/push",
        "orders",
        "push-auth-oidc",
    ),
}


def _googles_export() -> list[dict]:
    compute = f"{N}-compute@developer.gserviceaccount.com"
    eventarc = sub(
        EVENTARC,
        f"{RUN}?__GCP_CloudEventsMode=CUSTOM_PUBSUB_projects%2F{P}%2Ftopics%2Forders",
        "orders",
        compute,
    )
    eventarc["resource"]["data"]["pushConfig"]["oidcToken"]["audience"] = RUN
    assets = [cai.folder(), cai.project(P, N), eventarc]
    for name, (endpoint, topic, account, _) in GOOGLES.items():
        attributes = {"x-goog-version": "v1"} if name.startswith("gcf") else None
        assets.append(sub(name, endpoint, topic, account, attributes))
    return assets


def _audit(tmp: Path, assets: list[dict], *extra: str) -> tuple[int, str, Path]:
    export = write_lines(tmp / "export.json", assets)
    out = tmp / "out"
    result = CliRunner().invoke(app, ["audit", str(export), "--out", str(out), *extra])
    return result.exit_code, result.output, out


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def googles(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """Google's own subscriptions and Eventarc's, with a stack that manages only the Eventarc
    one (``--stacks``)."""
    tmp = tmp_path_factory.mktemp("google-managed")
    stack = states.Stack("orders", "prod")
    compute = f"{N}-compute@developer.gserviceaccount.com"
    stack.subscription(P, "unrelated", states.push_config(f"{RUN}/push", compute, RUN))
    state = states.write(tmp / "prod.json", stack.export())
    return _audit(tmp, _googles_export(), "--stacks", str(state))


def test_googles_own_subscriptions_are_not_violations(googles) -> None:
    """Nothing mandatory: Google's are set aside, and Eventarc's, which the rules judge as any
    (it pushes to the trigger's destination with the trigger's account), is clean."""
    code, output, out = googles
    rows = _rows(out)
    judged = {r["asset_name"].rsplit("/", 1)[1]: r for r in rows if r["status"] == "violation"}
    assert not set(judged) & set(GOOGLES), judged
    assert code == 0, output
    assert "4 Google-managed (not judged)" in output
    eventarc = [r for r in rows if r["asset_name"].endswith(f"/{EVENTARC}")]
    assert eventarc, "the rules ran on Eventarc's subscription"
    assert not [r for r in eventarc if r["status"] == "google-managed"]
    assert not [r for r in eventarc if r.get("level") == "mandatory"]


def test_each_is_one_row_naming_the_product_and_trigger_or_function(googles) -> None:
    _, _, out = googles
    managed = {
        r["asset_name"].rsplit("/", 1)[1]: r for r in _rows(out) if r["status"] == "google-managed"
    }
    assert set(managed) == set(GOOGLES)
    assert managed["gcb-deploy-on-release"]["evidence"] == {
        "product": "Cloud Build",
        "trigger": "deploy-on-release",
        "region": "global",
    }
    assert managed["gcf-resize-images-europe-west1-uploads"]["evidence"] == {
        "product": "Cloud Functions (1st gen)",
        "function": "resize-images",
        "region": "europe-west1",
    }
    assert managed["gcf-update_processed_data-processed"]["evidence"] == {
        "product": "Cloud Functions (1st gen)",
        "function": "update_processed_data",
    }
    for row in managed.values():
        assert "rule_id" not in row and "level" not in row  # null: no rule, no level
        assert row["message"].startswith("Google-managed: created and configured by ")
        assert row["finding_id"].startswith("pg1-")


def test_the_summary_and_report_count_them(googles) -> None:
    _, _, out = googles
    summary = json.loads((out / "summary.json").read_text())
    assert summary["findings"]["google_managed"] == 4
    assert summary["findings"]["google_managed_by_product"] == {
        "Cloud Build": 2,
        "Cloud Functions (1st gen)": 2,
    }
    assert summary["findings"]["violations_by_level"].get("mandatory", 0) == 0
    html = (out / "report.html").read_text()
    assert "<b>4</b>Google-managed" in html
    assert "<h2>Google-managed subscriptions</h2>" in html
    assert "for the Pub/Sub trigger &#x27;deploy-on-release&#x27; in global" in html
    assert "for the Pub/Sub function &#x27;resize-images&#x27; in europe-west1" in html


def test_stacks_do_not_count_googles_subscriptions_as_unmanaged(googles) -> None:
    _, _, out = googles
    rows = _rows(out)
    unmanaged = {
        r["asset_name"].rsplit("/", 1)[1] for r in rows if r.get("rule_id") == "push-unmanaged"
    }
    assert unmanaged == {EVENTARC}, "Eventarc's is judged as any; Google's are Google's"
    stacks = json.loads((out / "summary.json").read_text())["stacks"]
    assert stacks["unmanaged"] == 1 and stacks["by_project"][P]["unmanaged"] == 1


def test_look_alikes_are_judged_as_usual(spark: SparkSession, tmp_path: Path) -> None:
    assets = [cai.folder(), cai.project(P, N)]
    assets += [sub(name, e, topic) for name, (e, topic, _) in LOOK_ALIKES.items()]
    # Google's form with a token: not what Cloud Functions makes, so judged (and it may pass)
    assets.append(
        sub(
            "gcf-token-europe-west1-uploads",
            gcf("uploads"),
            "uploads",
            f"x@{P}.iam.gserviceaccount.com",
        )
    )
    code, output, out = _audit(tmp_path, assets)
    rows = _rows(out)
    assert code == 1, output
    assert not [r for r in rows if r["status"] == "google-managed"], "none is Google's"
    found = {
        (r["asset_name"].rsplit("/", 1)[1], r["rule_id"])
        for r in rows
        if r["status"] == "violation"
    }
    for name, (_, _, rule) in LOOK_ALIKES.items():
        assert (name, rule) in found, (name, sorted(found))
    assert json.loads((out / "summary.json").read_text())["findings"]["google_managed"] == 0
    assert "Google-managed" not in output
