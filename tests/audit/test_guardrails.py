"""``pushguard audit EXPORT --guardrails DIR`` as a user runs it (issue 38, "Before enforcing,
see what it would deny"): hand-written custom constraints and policies in the formats
``gcloud org-policies set-custom-constraint`` and ``set-policy`` take, evaluated over an export
of four projects in two folders. What each constraint would deny is listed in
``guardrails.jsonl`` and counted in ``summary.json`` and ``report.html``; a policy's scope is
applied as Organization Policy applies it (attachment, inheritance, ``reset``, dry run, tags);
Google's own subscriptions and condition errors are shown, never passed; a folder Google would
refuse is exit 2 before Spark starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pyspark.sql import SparkSession
from typer.testing import CliRunner

from pushguard.cli import app

from . import cai
from .conftest import write_lines

ORG_ID = cai.ORG.split("/")[1]
LAB_FOLDER = "folders/777888"
P1, N1 = "acme-orders", "100000000001"
P2, N2 = "acme-other", "100000000002"
P4, N4 = "acme-lab", "100000000004"
GCB = "rpc://name:CloudBuildPushEndpoint:gslb:google.pubsub.v1.cloudbuildpushendpoint-prod-global"
GCF = (
    "https://b1a05c63d5fde60502bc72cb0127c437-dot-o46fbf1c487424862-tp.appspot.com"
    f"/_ah/push-handlers/pubsub/projects/{P1}/topics/uploads?pubsub_trigger=true"
)


def _sub(project: str, number: str, name: str, endpoint: str | None, **extra: Any) -> dict:
    """A subscription line; ``push=None`` drops ``pushConfig`` altogether, ``eod`` sets
    exactly-once delivery, ``ancestors`` replaces them."""
    account = extra.get("account")
    asset = cai.subscription(project, number, name, endpoint, account)
    data = asset["resource"]["data"]
    if extra.get("no_push_config"):
        del data["pushConfig"]
    if extra.get("eod"):
        data["enableExactlyOnceDelivery"] = True
    if "topic" in extra:
        data["topic"] = f"projects/{project}/topics/{extra['topic']}"
    if "ancestors" in extra:
        asset["ancestors"] = extra["ancestors"]
    return asset


def _export() -> list[dict]:
    sa = f"pusher@{P1}.iam.gserviceaccount.com"
    lab = [f"projects/{N4}", LAB_FOLDER, cai.ORG]
    return [
        cai.organization(),
        cai.folder(),
        cai.project(P1, N1),
        cai.project(P2, N2),
        _sub(P1, N1, "s-http", "http://orders.example/push", account=sa),
        _sub(P1, N1, "s-https-ok", "https://orders-et73rt2k6a-ew.a.run.app/push", account=sa),
        _sub(P1, N1, "s-pull-eod", None, no_push_config=True, eod=True),
        _sub(P1, N1, "s-evil", "https://collector.evil.example/push", account=sa),
        _sub(P1, N1, "gcb-deploy-on-release", GCB, topic="releases"),
        _sub(P1, N1, "gcf-resize-images-europe-west1-uploads", GCF, topic="uploads"),
        _sub(P2, N2, "o-http", "http://other.example/push", account=sa),
        _sub(P2, N2, "o-pull-eod", None, eod=True),
        _sub(P4, N4, "l-pull", None, no_push_config=True, eod=True, ancestors=lab),
        _sub(P4, N4, "l-no-oidc", "http://lab.example/push", ancestors=lab),
    ]


def _constraint(short: str, condition: str, action: str = "DENY") -> dict:
    return {
        "name": f"{cai.ORG}/customConstraints/{short}",
        "resourceTypes": ["pubsub.googleapis.com/Subscription"],
        "methodTypes": ["CREATE", "UPDATE"],
        "condition": condition,
        "actionType": action,
        "displayName": short,
        "description": "hand-written for the test",
    }


CONSTRAINTS = {
    # well written: guards every field it reads
    "https": _constraint(
        "custom.pushHttpsOnly",
        "has(resource.pushConfig) && has(resource.pushConfig.pushEndpoint) && "
        "resource.pushConfig.pushEndpoint != '' && "
        "!resource.pushConfig.pushEndpoint.startsWith('https://')",
    ),
    # careless: no guard for an absent pushConfig, and no way through for Google's own
    "oidc": _constraint(
        "custom.pushOidc",
        "resource.pushConfig.pushEndpoint != '' && !has(resource.pushConfig.oidcToken)",
    ),
    # ALLOW: a subscription is allowed only when the condition holds
    "eod": _constraint(
        "custom.noExactlyOnce",
        "!has(resource.enableExactlyOnceDelivery) || resource.enableExactlyOnceDelivery == false",
        action="ALLOW",
    ),
    "tagged": _constraint(
        "custom.noEvilHosts",
        "has(resource.pushConfig) && has(resource.pushConfig.pushEndpoint) && "
        "resource.pushConfig.pushEndpoint.contains('.evil.example/')",
    ),
    "retry": _constraint(
        "custom.retryBounded",
        "has(resource.retryPolicy) && resource.retryPolicy.maximumBackoff == '600s'",
    ),
    "unused": _constraint("custom.unusedOne", "has(resource.topic)"),
}


def _policy(node: str, short: str, **specs: Any) -> dict:
    return {"name": f"{node}/policies/{short}", **specs}


ENFORCE = {"rules": [{"enforce": True}]}
POLICIES = {
    # on one project, named by its ID
    "https-orders": _policy(f"projects/{P1}", "custom.pushHttpsOnly", spec=ENFORCE),
    # the organisation enforces; the lab folder resets to the default (not enforced)
    "oidc-org": _policy(cai.ORG, "custom.pushOidc", spec=ENFORCE),
    "oidc-lab": _policy(LAB_FOLDER, "custom.pushOidc", spec={"reset": True}),
    # a dry run on the folder, turned off on one project (named by its number)
    "eod-folder": _policy(cai.FOLDER, "custom.noExactlyOnce", dryRunSpec=ENFORCE),
    "eod-other": _policy(
        f"projects/{N2}", "custom.noExactlyOnce", dryRunSpec={"rules": [{"enforce": False}]}
    ),
    # enforced only where a tag says prod
    "tagged-org": _policy(
        cai.ORG,
        "custom.noEvilHosts",
        spec={
            "rules": [
                {"enforce": False},
                {
                    "enforce": True,
                    "condition": {"expression": f"resource.matchTag('{ORG_ID}/env', 'prod')"},
                },
            ]
        },
    ),
    "retry-org": _policy(cai.ORG, "custom.retryBounded", spec=ENFORCE),
}


def write_dir(root: Path, constraints: dict, policies: dict) -> Path:
    for folder, files in (("constraints", constraints), ("policies", policies)):
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (root / folder / f"{name}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def _run(tmp: Path, out: str) -> tuple[int, str, Path]:
    export = tmp / "export.json"
    if not export.exists():
        write_lines(export, _export())
    guardrails = write_dir(tmp / "guardrails", CONSTRAINTS, POLICIES)
    target = tmp / out
    args = ["audit", str(export), "--out", str(target), "--guardrails", str(guardrails)]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output, target


@pytest.fixture(scope="module")
def runs(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple:
    """The same audit twice (the second for determinism)."""
    tmp = tmp_path_factory.mktemp("guardrails")
    return _run(tmp, "out"), _run(tmp, "again")


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "guardrails.jsonl").read_text().splitlines()]


def _of(out: Path, constraint: str) -> dict[str, dict[str, Any]]:
    return {
        r["asset_name"].rsplit("/", 1)[1]: r for r in _rows(out) if r["constraint"] == constraint
    }


def test_a_constraint_lists_exactly_the_subscriptions_it_would_deny(runs) -> None:
    """On the project its policy is attached to (named by ID): the plain-HTTP push there (and
    Cloud Build's rpc: endpoint, which "not https" denies too), not the HTTPS one, not the pull
    ones; the same endpoint in another project is left out."""
    (code, output, out), _ = runs
    assert code in (0, 1), output
    https = _of(out, "custom.pushHttpsOnly")
    assert set(https) == {"s-http", "gcb-deploy-on-release"}, https
    assert https["gcb-deploy-on-release"]["google_managed"] == "Cloud Build"
    assert "google_managed" not in https["s-http"]
    row = https["s-http"]
    assert row["status"] == "denied" and row["mode"] == "enforced"
    assert row["policy"] == f"projects/{P1}/policies/custom.pushHttpsOnly"
    assert row["methods"] == ["CREATE", "UPDATE"] and row["action"] == "DENY"
    assert "next CREATE or UPDATE would be refused" in row["reason"]
    assert row["project_id"] == P1 and row["project_number"] == N1


def test_inheritance_reset_and_dry_run_follow_the_hierarchy(runs) -> None:
    """The organisation's policy reaches the folder's projects, not the lab folder's, which
    resets it; the folder's dry run reaches acme-orders, not acme-other, whose own policy turns
    it off, nor the lab folder's project."""
    (_, _, out), _ = runs
    oidc = _of(out, "custom.pushOidc")
    assert not {"l-pull", "l-no-oidc"} & set(oidc), oidc
    assert {"gcb-deploy-on-release", "o-pull-eod"} <= set(oidc)
    assert oidc["o-pull-eod"]["policy"] == f"{cai.ORG}/policies/custom.pushOidc"
    eod = _of(out, "custom.noExactlyOnce")
    assert set(eod) == {"s-pull-eod"}, eod
    assert eod["s-pull-eod"]["status"] == "denied"
    assert eod["s-pull-eod"]["mode"] == "dry-run"
    assert eod["s-pull-eod"]["policy"] == f"{cai.FOLDER}/policies/custom.noExactlyOnce"
    assert eod["s-pull-eod"]["action"] == "ALLOW"
    assert "logged as a dry-run violation" in eod["s-pull-eod"]["reason"]


def test_a_tag_condition_the_export_cannot_decide_is_unknown(runs) -> None:
    (_, _, out), _ = runs
    tagged = _of(out, "custom.noEvilHosts")
    assert set(tagged) == {"s-evil"}, tagged
    assert tagged["s-evil"]["status"] == "unknown"
    assert f"resource.matchTag('{ORG_ID}/env', 'prod')" in tagged["s-evil"]["reason"]


def test_googles_own_subscriptions_denied_by_a_careless_constraint_are_named(runs) -> None:
    (_, _, out), _ = runs
    oidc = _of(out, "custom.pushOidc")
    gcb, gcf = oidc["gcb-deploy-on-release"], oidc["gcf-resize-images-europe-west1-uploads"]
    assert gcb["status"] == gcf["status"] == "denied"
    assert gcb["google_managed"] == "Cloud Build"
    assert gcf["google_managed"] == "Cloud Functions (1st gen)"
    assert gcb["reason"].startswith("Google-managed (Cloud Build): refusing it breaks")
    assert "google_managed" not in oidc.get("s-http", {})
    summary = json.loads((out / "summary.json").read_text())["guardrails"]
    assert summary["constraints"]["custom.pushOidc"]["google_managed"] == 2


def test_a_condition_that_errs_on_a_pull_subscription_is_an_error_not_a_pass(runs) -> None:
    (_, _, out), _ = runs
    oidc = _of(out, "custom.pushOidc")
    errors = {name for name, r in oidc.items() if r["status"] == "error"}
    assert errors == {"s-pull-eod", "o-pull-eod"}, oidc
    assert "pushConfig" in oidc["s-pull-eod"]["error"]
    assert "pushEndpoint" in oidc["o-pull-eod"]["error"]  # pushConfig {}: no endpoint


def test_summary_report_and_line_count_per_constraint(runs) -> None:
    (_, output, out), _ = runs
    summary = json.loads((out / "summary.json").read_text())["guardrails"]
    constraints = summary["constraints"]
    assert constraints["custom.pushHttpsOnly"]["denied"] == {"enforced": 2}
    assert constraints["custom.pushHttpsOnly"]["google_managed"] == 1
    assert constraints["custom.noExactlyOnce"]["denied"] == {"dry-run": 1}
    assert constraints["custom.noEvilHosts"]["unknown"] == 1
    assert constraints["custom.pushOidc"]["errors"] == 2
    retry, unused = constraints["custom.retryBounded"], constraints["custom.unusedOne"]
    assert not retry["evaluated"] and "resource.retryPolicy" in retry["not_evaluated"]
    assert not unused["evaluated"] and "no policy" in unused["not_evaluated"]
    assert (summary["denied"], summary["unknown"], summary["errors"]) == (5, 1, 2)
    assert "guardrails: 5 denied, 1 unknown, 2 errors over 4 constraints (2 not evaluated" in (
        output
    )
    html = (out / "report.html").read_text()
    assert "<h2>Guardrails: what the custom constraints would deny</h2>" in html
    assert "not evaluated: no policy in policies/ uses it" in html


def test_the_output_is_deterministic(runs) -> None:
    (_, _, out), (code, output, again) = runs
    assert code in (0, 1), output
    first = (out / "guardrails.jsonl").read_bytes()
    assert first and first == (again / "guardrails.jsonl").read_bytes()
    keys = [(r["constraint"], r["asset_name"]) for r in _rows(out)]
    assert keys == sorted(keys)


def _no_java(tmp_path: Path) -> dict[str, str]:
    """This interpreter's folder on PATH and nothing of Java: a run that started Spark fails."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    env["PATH"] = str(Path(sys.executable).parent)
    return env


def test_a_bad_folder_is_exit_2_naming_file_and_field_before_spark(tmp_path: Path) -> None:
    export = write_lines(tmp_path / "export.json", _export())
    good_c, good_p = {"https": CONSTRAINTS["https"]}, {"p": POLICIES["https-orders"]}
    unparsable = {"https": {**CONSTRAINTS["https"], "condition": "resource.name =="}}
    unknown_field = {"https": {**CONSTRAINTS["https"], "enforcement": "yes"}}
    bad_rule = {"p": _policy(cai.ORG, "custom.pushHttpsOnly", spec={"rules": [{"on": True}]})}
    other = {"p": _policy(cai.ORG, "custom.nowhere", spec=ENFORCE)}
    cases = [
        (tmp_path / "missing", "does not exist or is not a folder"),
        (write_dir(tmp_path / "d1", unparsable, good_p), "https.yaml: condition: not CEL"),
        (
            write_dir(tmp_path / "d2", unknown_field, good_p),
            "https.yaml: enforcement: unknown field",
        ),
        (write_dir(tmp_path / "d3", good_c, bad_rule), "p.yaml: spec.rules[0].on: unknown field"),
        (write_dir(tmp_path / "d4", good_c, other), "p.yaml: name: custom.nowhere is not"),
    ]
    malformed = write_dir(tmp_path / "d5", good_c, good_p)
    (malformed / "policies" / "p.yaml").write_text("name: [unclosed\n")
    cases.append((malformed, "p.yaml: is not YAML"))
    script = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from pushguard.cli import app\n"
        "out = []\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    r = CliRunner().invoke(app, ['audit', *args])\n"
        "    out.append([r.exit_code, r.stderr])\n"
        "print(json.dumps(out))\n"
    )
    argv = [
        [str(export), "--out", str(tmp_path / f"o{n}"), "--guardrails", str(folder)]
        for n, (folder, _) in enumerate(cases)
    ]
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(argv)],
        capture_output=True,
        text=True,
        env=_no_java(tmp_path),
        timeout=300,
        check=True,
    )
    for (folder, expected), (code, stderr) in zip(cases, json.loads(done.stdout), strict=True):
        assert code == 2, (folder, stderr)
        assert stderr.startswith("pushguard audit: error: --guardrails: "), stderr
        assert expected in stderr, (expected, stderr)
        assert "java" not in stderr.lower() and "starting Spark" not in stderr, stderr
    assert not any((tmp_path / f"o{n}").exists() for n in range(len(cases)))
