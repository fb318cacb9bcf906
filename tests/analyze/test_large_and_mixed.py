"""Issue 20, analyze: a state of any size fits the pack's messages (20,000 subscriptions), a
folder may hold JSON files that are not state (skipped and listed; named on the command line they
stay an error), the same stack from two files gets two SARIF categories, and a value encrypted
in the state is worded as not checked (analyze has no later check).

Run through the command as users run it (``pushguard analyze``, typer's CliRunner)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.analyze import test_analyze as shared
from tests.analyze.exports import TIME, dumps, export_from_preview
from tests.analyze.test_analyze import REVEALED, analyze, write

dev, secret_endpoint = shared.dev, shared.secret_endpoint  # the module's fixtures

SUB = "gcp:pubsub/subscription:Subscription"
PROJECT = "acme-orders"


def big_state(count: int, stack: str = "big", project: str = "team") -> dict[str, Any]:
    """A ``pulumi stack export`` document of ``count`` push subscriptions made directly with
    pulumi-gcp (one provider, no components); every fifth one pushes to ``http://``."""
    root = f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"
    provider = f"urn:pulumi:{stack}::{project}::pulumi:providers:gcp::default_10_2_0"
    provider_id = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    settings = {"project": PROJECT, "region": "europe-west1", "version": "10.2.0"}
    resources: list[dict[str, Any]] = [
        {"urn": root, "custom": False, "type": "pulumi:pulumi:Stack", "outputs": {}},
        {
            "urn": provider,
            "custom": True,
            "id": provider_id,
            "type": "pulumi:providers:gcp",
            "inputs": settings,
            "outputs": settings,
        },
    ]
    for n in range(count):
        name = f"sub-{n:05d}"
        scheme = "http" if n % 5 == 0 else "https"
        props = {
            "name": name,
            "project": PROJECT,
            "topic": f"projects/{PROJECT}/topics/orders",
            "ackDeadlineSeconds": 60,
            "pushConfig": {
                "pushEndpoint": f"{scheme}://hooks{n}.example.com/push",
                "oidcToken": {
                    "serviceAccountEmail": f"push@{PROJECT}.iam.gserviceaccount.com",
                    "audience": "orders",
                },
            },
        }
        ident = f"projects/{PROJECT}/subscriptions/{name}"
        resources.append(
            {
                "urn": f"urn:pulumi:{stack}::{project}::{SUB}::{name}",
                "custom": True,
                "id": ident,
                "type": SUB,
                "inputs": props,
                "outputs": {**props, "id": ident},
                "parent": root,
                "provider": f"{provider}::{provider_id}",
            }
        )
    manifest = {"time": TIME, "magic": "", "version": "v3.209.0"}
    return {"version": 3, "deployment": {"manifest": manifest, "resources": resources}}


def test_twenty_thousand_subscriptions_are_analysed(tmp_path: Path) -> None:
    """Past gRPC's default 4 MiB message (about 8,500 subscriptions) the run failed with exit 2
    and 0 stacks analysed."""
    state = write(tmp_path, "big.json", dumps(big_state(20_000)))
    report_file = tmp_path / "report.json"
    code, _, err = analyze(state, "-f", "json", "-o", report_file)
    report = json.loads(report_file.read_text())
    assert "error" not in report, report.get("error")
    assert code == 1, err
    assert report["summary"]["stacks"] == 1
    https = {
        v["urn"].rsplit("::", 1)[-1]
        for v in report["stacks"][0]["violations"]
        if v["policy"] == "push-endpoint-https" and v["level"] == "mandatory"
    }
    assert https == {f"sub-{n:05d}" for n in range(0, 20_000, 5)}


# --- a folder holding JSON files that are not state ---------------------------------------------

NOT_STATE = {
    "package.json": {"name": "infra", "version": "1.0.0", "dependencies": {}},
    "tsconfig.json": {"compilerOptions": {"strict": True}},
    "list.json": [1, 2],
}


def test_json_files_that_are_not_state_in_a_folder_are_skipped_and_listed(
    dev, tmp_path: Path
) -> None:
    folder = tmp_path / "states"
    write(folder, "dev.json", export_from_preview(dev))
    for name, content in NOT_STATE.items():
        write(folder, f"web/{name}", json.dumps(content))
    report_file = tmp_path / "report.json"
    code, out, err = analyze(folder, "-f", "json", "-o", report_file)
    report = json.loads(report_file.read_text())
    assert code == 0, err
    assert report["summary"]["stacks"] == 1 and report["unreadable"] == []
    skipped = {Path(s["path"]).name: s["reason"] for s in report["skipped"]}
    assert set(skipped) == set(NOT_STATE)
    assert all("not Pulumi state" in reason for reason in skipped.values())
    code, out, _ = analyze(folder)
    assert code == 0 and "Skipped" in out and "package.json" in out
    sarif = json.loads(analyze(folder, "-f", "sarif")[1])
    notes = [
        n["message"]["text"]
        for run in sarif["runs"]
        for invocation in run.get("invocations", [])
        for n in invocation.get("toolExecutionNotifications", [])
    ]
    assert any("package.json" in n for n in notes)


def test_a_file_named_on_the_command_line_that_is_not_state_is_an_error(
    dev, tmp_path: Path
) -> None:
    state = write(tmp_path, "dev.json", export_from_preview(dev))
    package = write(tmp_path, "package.json", json.dumps(NOT_STATE["package.json"]))
    code, _, err = analyze(state, package, "-f", "json")
    assert code == 2 and "package.json" in err and "neither deployment" in err


def test_a_folder_with_nothing_but_files_that_are_not_state_fails(tmp_path: Path) -> None:
    write(tmp_path, "package.json", json.dumps(NOT_STATE["package.json"]))
    code, _, err = analyze(tmp_path, "-f", "json")
    assert code == 2 and "no state files" in err


# --- one SARIF category per file ---------------------------------------------------------------


def test_the_same_stack_from_two_files_gets_two_automation_ids(dev, tmp_path: Path) -> None:
    text = dumps(export_from_preview(dev))
    first = write(tmp_path, "prod-eu/dev.json", text)
    second = write(tmp_path, "prod-us/dev.json", text)
    outputs = [analyze(first, second, "-f", "sarif")[1] for _ in range(2)]
    assert outputs[0] == outputs[1], "deterministic"
    ids = [run["automationDetails"]["id"] for run in json.loads(outputs[0])["runs"]]
    assert len(ids) == 2 and len(set(ids)) == 2, ids
    assert all(i.startswith("pushguard-analyze/pushguard-example/dev/") for i in ids)
    # The key is a hash of the path as reports write it (relative to the repository, or to the
    # working directory), so it does not change with the machine the check runs on.
    alone = json.loads(analyze(second, "-f", "sarif")[1])["runs"][0]["automationDetails"]["id"]
    assert alone == ids[1]


def test_the_automation_key_is_a_hash_of_the_relative_path(dev, tmp_path: Path) -> None:
    from pushguard.analyze.report import state_key

    state = write(tmp_path, "dev.json", dumps(export_from_preview(dev)))
    key = state_key(state)
    assert len(key) == 12 and key == state_key(Path(str(state)))
    assert key != state_key(tmp_path / "other.json")
    assert all(c in "0123456789abcdef" for c in key)


# --- an encrypted value is not checked, and analyze says so ------------------------------------


def test_an_encrypted_push_config_is_worded_as_not_checked(secret_endpoint, tmp_path: Path) -> None:
    state = write(
        tmp_path, "dev.json", export_from_preview(secret_endpoint, revealed={"orders": REVEALED})
    )
    for fmt in ("json", "text", "sarif"):
        code, out, _ = analyze(state, "-f", fmt)
        assert code == 0
        assert "pulumi up" not in out, fmt
        assert "checked again" not in out, fmt
    report = json.loads(analyze(state, "-f", "json")[1])
    undecided = [v for v in report["stacks"][0]["violations"] if "on this state" in v["message"]]
    assert undecided
    for v in undecided:
        assert "encrypted in the state" in v["message"] and "not checked" in v["message"], v
