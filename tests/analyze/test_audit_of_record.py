"""Issue 27: ``pushguard analyze`` as an organisation's audit of record.

Hand-written states in the shape ``pulumi stack export`` writes (Pulumi's apitype, see
tests/analyze/exports.py), run through the command as users run it (``pushguard analyze``;
typer's CliRunner in process, the console script where a process is needed): a secret is never
presumed, backend folders are skipped only at a backend's root, one bad file never hides the
others, resource references reach the pack as the CLI marshals them, malformed outputs are a
diagnostic, no fragment of a secret is printed, and the pack never outlives a killed analyze.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.analyze.exports import SECRET, SIG, TIME, dumps
from tests.analyze.test_analyze import analyze, write

P = "acme-orders"
STACK, PROJECT = "prod", "team"
ROOT = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{STACK}"
PROVIDER = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:providers:gcp::default_10_2_0"
PROVIDER_ID = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SERVICE = f"urn:pulumi:{STACK}::{PROJECT}::gcp:cloudrunv2/service:Service::orders"
ACCOUNT = f"urn:pulumi:{STACK}::{PROJECT}::gcp:serviceaccount/account:Account::push"
SUB_TYPE = "gcp:pubsub/subscription:Subscription"
SUB = f"urn:pulumi:{STACK}::{PROJECT}::{SUB_TYPE}::orders"
EMAIL = f"push@{P}.iam.gserviceaccount.com"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"  # Pulumi's resource reference signature

ENFORCE = {
    "push-endpoint-https": {"enforcementLevel": "mandatory", "unknownAtPreview": "enforce"},
    "push-sa-same-project": {"enforcementLevel": "mandatory", "unknownAtPreview": "enforce"},
    "push-vpcsc-default-url": {"unknownAtPreview": "enforce"},
}


def encrypted() -> dict[str, str]:
    return {SIG: SECRET, "ciphertext": "v1:QUJDREVGR0hJSktMTU5PUA=="}


def _custom(
    urn: str,
    type_: str,
    inputs: dict[str, Any],
    outputs: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    return {
        "urn": urn,
        "custom": True,
        "id": urn.rsplit("::", 1)[1],
        "type": type_,
        "inputs": inputs,
        "outputs": outputs if outputs is not None else inputs,
        "parent": ROOT,
        "provider": f"{PROVIDER}::{PROVIDER_ID}",
        **fields,
    }


def state(
    push_config: Any,
    *,
    version: int = 3,
    deps: bool = True,
    outputs_push_config: Any = None,
    stack_outputs: dict[str, Any] | None = None,
    extra: list[dict[str, Any]] | None = None,
    stack: str = STACK,
) -> dict[str, Any]:
    """A stack with a Cloud Run service, a service account and one push subscription whose
    ``pushConfig`` is ``push_config`` (its outputs ``outputs_push_config``, default the same)."""
    settings = {"project": P, "region": "europe-west1"}
    sub_in = {
        "name": "orders",
        "project": P,
        "topic": f"projects/{P}/topics/orders",
        "pushConfig": push_config,
    }
    sub_out = {
        **sub_in,
        "id": f"projects/{P}/subscriptions/orders",
        "pushConfig": push_config if outputs_push_config is None else outputs_push_config,
    }
    links: dict[str, Any] = {}
    if deps:
        links = {"dependencies": [SERVICE, ACCOUNT]}
        if version >= 3:
            links["propertyDependencies"] = {"pushConfig": [SERVICE, ACCOUNT]}
    resources = [
        {
            "urn": ROOT,
            "custom": False,
            "type": "pulumi:pulumi:Stack",
            "outputs": stack_outputs or {},
        },
        {
            "urn": PROVIDER,
            "custom": True,
            "id": PROVIDER_ID,
            "type": "pulumi:providers:gcp",
            "inputs": settings,
            "outputs": settings,
        },
        _custom(
            SERVICE,
            "gcp:cloudrunv2/service:Service",
            {"name": "orders", "location": "europe-west1", "project": P},
            {
                "name": "orders",
                "location": "europe-west1",
                "project": P,
                "uri": "https://orders-x7k2-ew.a.run.app",
            },
        ),
        _custom(
            ACCOUNT,
            "gcp:serviceaccount/account:Account",
            {"accountId": "push", "project": P},
            {
                "accountId": "push",
                "project": P,
                "email": EMAIL,
                "name": f"projects/{P}/serviceAccounts/{EMAIL}",
            },
        ),
        _custom(SUB, SUB_TYPE, sub_in, sub_out, **links),
        *(extra or []),
    ]
    text = json.dumps(resources).replace(f"urn:pulumi:{STACK}::", f"urn:pulumi:{stack}::")
    text = text.replace(f"{PROJECT}-{STACK}", f"{PROJECT}-{stack}")
    manifest = {"time": TIME, "magic": "", "version": "v3.209.0"}
    return {"version": version, "deployment": {"manifest": manifest, "resources": json.loads(text)}}


GOOD_PUSH = {
    "pushEndpoint": "https://orders-x7k2-ew.a.run.app/push",
    "oidcToken": {"serviceAccountEmail": EMAIL, "audience": "orders"},
}


def violations(report: dict[str, Any], stack: int = 0) -> dict[str, str]:
    return {v["policy"]: v["level"] for v in report["stacks"][stack]["violations"]}


# --- 1. a secret is never presumed -------------------------------------------------------------


@pytest.mark.parametrize("version", [3, 2])
def test_an_encrypted_push_config_is_never_presumed_from_its_dependencies(
    tmp_path: Path, version: int
) -> None:
    path = write(tmp_path, "prod.json", state(encrypted(), version=version))
    config = write(tmp_path, "enforce.json", ENFORCE)
    code, out, _ = analyze(path, "--policy-config", config, "-f", "json")
    report = json.loads(out)
    found = violations(report)
    assert code == 2, "a value the state does not show, under enforce: not checked"
    # The account behind the secret is not invented from the stack's only service account.
    assert found["push-sa-same-project"] == "mandatory"
    assert found["push-endpoint-https"] == "mandatory"
    assert EMAIL not in out
    # Without enforce: not decided, with the reason and how to analyse it.
    code, out, _ = analyze(path, "-f", "json")
    report = json.loads(out)
    undecided = [v for v in report["stacks"][0]["violations"] if "not checked" in v["message"]]
    assert {v["policy"] for v in undecided} >= {
        "push-sa-same-project",
        "push-auth-oidc",
        "push-endpoint-https",
    }
    for v in undecided:
        assert "--show-secrets" in v["message"] and "secrets provider" in v["message"], v
    assert EMAIL not in out


# --- 2. backend folders are skipped only at a backend's root ----------------------------------


def test_an_organisation_named_backups_is_analysed_and_skipped_files_are_listed(
    tmp_path: Path,
) -> None:
    good = state(GOOD_PUSH)
    write(tmp_path, "state/acme/backups/prod.json", good)
    write(tmp_path, "state/acme/history/prod.json", state(GOOD_PUSH, stack="hist"))
    backend = tmp_path / "state/acme/backend"
    write(backend, ".pulumi/stacks/team/prod.json", state(GOOD_PUSH, stack="live"))
    write(backend, ".pulumi/backups/team/prod/prod.1.json", good)
    write(backend, ".pulumi/history/team/prod/prod-1.checkpoint.json", good)
    code, out, _ = analyze(tmp_path / "state", "-f", "json")
    report = json.loads(out)
    assert sorted(s["stack"] for s in report["stacks"]) == ["hist", "live", "prod"]
    skipped = {Path(s["path"]).name: s["reason"] for s in report["skipped"]}
    assert set(skipped) == {"prod.1.json", "prod-1.checkpoint.json"}
    assert all("backend" in reason for reason in skipped.values())
    assert code == 0


# --- 3. one bad file never hides the others ---------------------------------------------------


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


def test_a_too_deep_or_inflating_file_is_named_and_the_others_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The limit is 1 GiB; the test lowers it to 8 MiB to inflate a bomb of 16 MiB, not 1 GiB.
    monkeypatch.setattr("pushguard.state.files.MAX_STATE_BYTES", 8 << 20)  # read there
    deep = state(GOOD_PUSH, stack="deep")
    deep["deployment"]["resources"][0]["outputs"] = {"deep": "DEEP"}
    nested = '{"a": ' * 20_000 + '"leaf"' + "}" * 20_000  # past json.dumps's own recursion
    write(tmp_path, "states/deep.json", json.dumps(deep).replace('"DEEP"', nested))
    # A gzip that inflates past the limit: 16 MiB of spaces compress to 16 KiB.
    bomb = tmp_path / "states/bomb.json.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as out:
        out.write(b'{"version": 3, "deployment": {"resources": [')
        out.write(b" " * (16 << 20))
    write(tmp_path, "states/good.json", state(GOOD_PUSH, stack="good"))
    report_file = tmp_path / "report.json"
    code, _, err = analyze(tmp_path / "states", "-f", "json", "-o", report_file)
    report = json.loads(report_file.read_text())
    assert code == 2
    assert [s["stack"] for s in report["stacks"]] == ["good"]
    unreadable = {Path(u["path"]).name: u["message"] for u in report["unreadable"]}
    assert set(unreadable) == {"deep.json", "bomb.json.gz"}
    assert "nested deeper than" in unreadable["deep.json"]
    assert "inflates" in unreadable["bomb.json.gz"]
    assert "deep.json" in err and "bomb.json.gz" in err


# --- 4. resource references and deep values ---------------------------------------------------


def test_resource_references_and_deep_values_are_not_findings(tmp_path: Path) -> None:
    reference = {
        RESOURCE_SIG_KEY: RESOURCE_SIG,
        "urn": SERVICE,
        "id": "orders",
        "packageVersion": "8.10.0",
    }
    extra = [
        _custom(
            f"urn:pulumi:{STACK}::{PROJECT}::gcp:storage/bucket:Bucket::deep",
            "gcp:storage/bucket:Bucket",
            {"labels": _nested(200)},
        )
    ]
    document = state(GOOD_PUSH, stack_outputs={"service": reference}, extra=extra)
    code, out, _ = analyze(write(tmp_path, "prod.json", document), "-f", "json")
    report = json.loads(out)
    assert code == 0, report["stacks"][0]["violations"]
    assert not [v for v in report["stacks"][0]["violations"] if v["level"] == "mandatory"]
    assert "could not decode" not in out


RESOURCE_SIG_KEY = SIG


# --- 5. malformed outputs are a diagnostic ----------------------------------------------------


@pytest.mark.parametrize(
    "outputs",
    [
        [GOOD_PUSH, {"pushEndpoint": "http://evil.example/push"}],
        {**GOOD_PUSH, "oidcToken": EMAIL},
    ],
    ids=["two-push-configs", "oidc-token-string"],
)
def test_malformed_outputs_are_a_diagnostic_naming_the_property(
    tmp_path: Path, outputs: Any
) -> None:
    path = write(tmp_path, "prod.json", state(GOOD_PUSH, outputs_push_config=outputs))
    code, out, _ = analyze(path, "-f", "json")
    report = json.loads(out)
    messages = [v["message"] for v in report["stacks"][0]["violations"]]
    assert code != 0, messages
    assert any("pushConfig" in m for m in messages), messages


# --- 6. no fragment of a secret is printed -----------------------------------------------------


def shown(value: Any) -> dict[str, str]:
    return {SIG: SECRET, "plaintext": json.dumps(value)}


def test_no_fragment_of_a_shown_secret_is_printed(tmp_path: Path) -> None:
    foreign = "push@acme-secret-proj.iam.gserviceaccount.com"
    push = {
        "pushEndpoint": shown("https://x.co/hook"),
        "oidcToken": {"serviceAccountEmail": shown(foreign), "audience": "orders"},
    }
    path = write(tmp_path, "prod.json", state(push))
    for fmt in ("text", "json", "sarif"):
        code, out, err = analyze(
            path, "-f", fmt, "--policy-config", write(tmp_path, "c.json", ENFORCE)
        )
        assert code == 1, (fmt, out)
        for fragment in ("acme-secret-proj", "x.co"):
            assert fragment not in out and fragment not in err, (fmt, fragment)


# --- 9. version 4, organisations, project numbers, newlines, a killed analyze -----------------


def test_deployment_version_4_is_read(tmp_path: Path) -> None:
    document = state({**GOOD_PUSH, "pushEndpoint": "http://orders.example/push"})
    document["version"] = 4
    code, out, err = analyze(write(tmp_path, "v4.json", document), "-f", "json")
    assert code == 1, err
    assert json.loads(out)["stacks"][0]["state"]["deploymentVersion"] == 4


def test_the_same_stack_in_two_organisations_gets_two_run_ids(tmp_path: Path) -> None:
    document = state({**GOOD_PUSH, "pushEndpoint": "http://orders.example/push"})
    for org in ("acme", "globex"):
        checkpoint = {
            "version": 3,
            "checkpoint": {"stack": f"{org}/{PROJECT}/{STACK}", "latest": document["deployment"]},
        }
        write(tmp_path, f"{org}/.pulumi/stacks/{PROJECT}/{STACK}.json", checkpoint)
    _, out, _ = analyze(tmp_path / "acme", tmp_path / "globex", "-f", "sarif")
    runs = [r for r in json.loads(out)["runs"] if r.get("results")]
    assert len(runs) == 2
    ids = [r["automationDetails"]["id"] for r in runs]
    assert ids[0] != ids[1] and "acme" in ids[0] and "globex" in ids[1]
    prints = [
        {json.dumps(x.get("partialFingerprints"), sort_keys=True) for x in r["results"]}
        for r in runs
    ]
    assert not prints[0] & prints[1]


def test_a_project_given_by_number_is_resolved_through_project_numbers(tmp_path: Path) -> None:
    document = state(
        {
            **GOOD_PUSH,
            "oidcToken": {
                "serviceAccountEmail": "push@other-proj.iam.gserviceaccount.com",
                "audience": "o",
            },
        }
    )
    for resource in document["deployment"]["resources"]:
        if resource["type"] == SUB_TYPE:
            resource["inputs"]["project"] = resource["outputs"]["project"] = "123456789012"
    config = write(
        tmp_path,
        "c.json",
        {
            "push-sa-same-project": {
                "enforcementLevel": "mandatory",
                "projectNumbers": {P: "123456789012"},
            }
        },
    )
    code, out, _ = analyze(
        write(tmp_path, "n.json", document), "--policy-config", config, "-f", "json"
    )
    assert violations(json.loads(out)).get("push-sa-same-project") == "mandatory", out
    assert code == 1


def test_a_newline_in_a_name_never_starts_a_line_of_a_message(tmp_path: Path) -> None:
    document = state({**GOOD_PUSH, "pushEndpoint": "http://orders.example/push"})
    text = dumps(document).replace(f"{SUB_TYPE}::orders", f"{SUB_TYPE}::orders\\nFAKE: passed")
    path = write(tmp_path, "n.json", text)
    code, out, _ = analyze(path)
    assert code == 1
    assert not any(line.startswith("FAKE") for line in out.splitlines()), out
    for fmt in ("json", "sarif"):
        texts = _message_texts(json.loads(analyze(path, "-f", fmt)[1]))
        assert texts, fmt
        for message in texts:
            assert not any(line.startswith("FAKE") for line in message.split("\n")), (fmt, message)


def _message_texts(report: Any) -> list[str]:
    """Every violation message and not-checked reason of a JSON report or SARIF log."""
    if "runs" in report:
        return [r["message"]["text"] for run in report["runs"] for r in run.get("results", [])]
    stack = report["stacks"][0]
    return [v["message"] for v in stack["violations"]] + [n["reason"] for n in stack["notChecked"]]


def test_a_killed_analyze_leaves_no_pack_running(tmp_path: Path) -> None:
    """SIGKILL cannot be caught: the pack notices its parent is gone and stops."""
    many = [
        _custom(
            f"urn:pulumi:{STACK}::{PROJECT}::{SUB_TYPE}::s{n}",
            SUB_TYPE,
            {"name": f"s{n}", "project": P, "topic": "t", "pushConfig": GOOD_PUSH},
        )
        for n in range(1500)
    ]
    paths = [write(tmp_path, "s.json", state(GOOD_PUSH, extra=many))]
    command = [str(Path(sys.executable).with_name("pushguard")), "analyze", *map(str, paths)]
    analyze_process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    pack_pid = None
    try:
        for _ in range(600):
            children = _children(analyze_process.pid)
            if children:
                pack_pid = children[0]
                break
            time.sleep(0.05)
        assert pack_pid is not None, "the pack started"
        for _ in range(600):  # serving: it holds its listening socket
            if _sockets(pack_pid):
                break
            time.sleep(0.05)
        time.sleep(0.5)
        assert analyze_process.poll() is None, "analyze is still running"
        os.kill(analyze_process.pid, signal.SIGKILL)
        analyze_process.wait()
        for _ in range(200):
            if not _alive(pack_pid):
                break
            time.sleep(0.05)
        assert not _alive(pack_pid), "the pack outlived its analyze"
    finally:
        if pack_pid is not None and _alive(pack_pid):
            os.kill(pack_pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def _sockets(pid: int) -> int:
    try:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return 0
    return sum(link.startswith("socket:") for link in links)


def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        return False
    return "State:\tZ" not in status.read_text()
