"""Issue 14, item 3: `pushguard analyze STATE...` runs the pack over existing stacks' state.

State files are built in the shape `pulumi stack export` writes (tests/analyze/exports.py, from
Pulumi's apitype definitions) from previews of programs, as if the stacks had been deployed; the
analysis of a stack's state must give the preview's findings, plus those the preview could not
decide for want of values the state knows.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from pushguard.analyze.deployment import StateFileError, read_state
from pushguard.analyze.report import state_key
from pushguard.analyze.runner import AnalyzeOptions, analyze_stack, run_analyze
from pushguard.cli import app
from pushguard.gate.result import StackResult
from pushguard.preview.runner import PreviewOptions, run_preview
from tests.analyze.exports import SECRET, SIG, dumps, export_from_preview

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "policy-config.json"
SUB = "gcp:pubsub/subscription:Subscription"
SARIF_SCHEMA = ROOT / "tests" / "fixtures" / "sarif" / "sarif-2.1.0-rtm.5.json"


def preview(stack: str, folder: Path = ROOT / "stacks", config: Path | None = CONFIG):
    return run_preview(PreviewOptions(folder, stack, None, config))


@pytest.fixture(scope="module")
def dev() -> StackResult:
    return preview("dev")


@pytest.fixture(scope="module")
def legacy() -> StackResult:
    return preview("legacy")


def write(folder: Path, name: str, document: Any) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else dumps(document))
    return path


def analyze(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["analyze", *map(str, args)])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def findings(report: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    return {(v["policy"], v["level"], v["urn"], v["message"]) for v in report["violations"]}


def preview_findings(result: StackResult) -> set[tuple[str, str, str, str]]:
    return {(v.policy, v.level, v.urn, v.message) for v in result.violations}


def unchecked(items: Any) -> set[tuple[str, str]]:
    return {(n["policy"], n["urn"]) if isinstance(n, dict) else (n.policy, n.urn) for n in items}


# --- parity with the preview -------------------------------------------------------------------


def test_a_component_stack_gives_what_its_preview_gives(dev, tmp_path: Path) -> None:
    state = write(tmp_path, "dev.json", export_from_preview(dev))
    code, out, err = analyze(state, "--policy-config", CONFIG, "-f", "json")
    report = json.loads(out)
    (stack,) = report["stacks"]
    assert (code, stack["project"], stack["stack"]) == (0, "pushguard-example", "dev"), err
    assert findings(stack) == preview_findings(dev) == set()
    assert unchecked(stack["notChecked"]) == unchecked(dev.not_checked)
    types = {r["type"] for r in stack["resources"]}
    assert {"pushguard:index:PushSubscription", SUB, "pulumi:providers:gcp"} <= types
    assert {r["operation"] for r in stack["resources"]} == {"same"}
    assert stack["state"]["deploymentVersion"] == 3


def test_a_raw_resource_stack_gives_what_its_preview_gives(legacy, tmp_path: Path) -> None:
    state = write(tmp_path, "legacy.json", export_from_preview(legacy))
    code, out, _ = analyze(state, "--policy-config", CONFIG, "-f", "json")
    (stack,) = json.loads(out)["stacks"]
    assert code == 1
    assert findings(stack) == preview_findings(legacy)
    assert {v[0] for v in findings(stack) if v[1] == "mandatory"} == {
        "push-endpoint-https",
        "push-sa-same-project",
        "push-vpcsc-default-url",
    }
    # each finding points at its resource in the state file
    lines = state.read_text().splitlines()
    for violation in stack["violations"]:
        where = violation["location"]
        assert Path(where["path"]).name == "legacy.json"
        assert f'"urn": "{violation["urn"]}"' in lines[where["line"] - 1]


SECRET_ENDPOINT_PROGRAM = """
import pulumi
import pulumi_gcp as gcp

config = pulumi.Config("team")
topic = gcp.pubsub.Topic("orders")
gcp.pubsub.Subscription(
    "orders",
    topic=topic.name,
    push_config={
        "push_endpoint": config.require_secret("endpoint"),
        "oidc_token": {"service_account_email": "pusher@acme-orders.iam.gserviceaccount.com"},
    },
)
"""
TOKEN = "s3cr3t-t0ken-5f1d2c"
REVEALED = f"http://hooks.acme.example/pubsub?token={TOKEN}"


@pytest.fixture(scope="module")
def secret_endpoint(tmp_path_factory: pytest.TempPathFactory) -> StackResult:
    folder = tmp_path_factory.mktemp("secret-endpoint")
    (folder / "Pulumi.yaml").write_text(json.dumps({"name": "team", "runtime": "python"}))
    (folder / "__main__.py").write_text(SECRET_ENDPOINT_PROGRAM)
    (folder / "Pulumi.dev.yaml").write_text(
        json.dumps(
            {
                "config": {
                    "gcp:project": "acme-orders",
                    "team:endpoint": {"secure": "v1:AAAAEGVuZHBvaW50"},
                }
            }
        )
    )
    return preview("dev", folder, config=None)


def test_an_encrypted_secret_is_unknown_as_at_preview(secret_endpoint, tmp_path: Path) -> None:
    document = export_from_preview(secret_endpoint, revealed={"orders": REVEALED})
    state = write(tmp_path, "dev.json", document)
    text = state.read_text()
    assert '"ciphertext"' in text and TOKEN not in text
    code, out, _ = analyze(state, "-f", "json")
    (stack,) = json.loads(out)["stacks"]
    assert code == 0
    # What the preview could not verify, the analysis cannot either; the state hides more (the
    # engine keeps the whole pushConfig output secret, so its account is unknown too), and
    # every policy that needs a hidden value says so instead of passing.
    assert {v[:3] for v in preview_findings(secret_endpoint)} <= {v[:3] for v in findings(stack)}
    undecided = {v[0] for v in findings(stack) if "on this state" in v[3]}
    assert undecided == {
        "push-endpoint-https",
        "push-invoker-binding",
        "push-agent-token-creator",
        "push-auth-oidc",
        "push-sa-same-project",
        "push-target-requires-auth",  # the endpoint hides the service behind it
    }
    assert any("stay encrypted" in note for note in stack["notes"])


def test_a_shown_secret_is_checked_and_never_printed(secret_endpoint, tmp_path: Path) -> None:
    document = export_from_preview(
        secret_endpoint, revealed={"orders": REVEALED}, show_secrets=True
    )
    state = write(tmp_path, "dev.json", document)
    assert TOKEN in state.read_text(), "the export carries the plaintext"
    sarif_file, json_file = tmp_path / "report.sarif", tmp_path / "report.json"
    code, out, err = analyze(state, "-f", "sarif", "-o", sarif_file)
    assert code == 1, "the state knows what the preview could not: a plain http:// endpoint"
    analyze(state, "-f", "json", "-o", json_file)
    (stack,) = json.loads(json_file.read_text())["stacks"]
    assert ("push-endpoint-https", "mandatory") in {(v[0], v[1]) for v in findings(stack)}
    for text in (out, err, sarif_file.read_text(), json_file.read_text()):
        assert TOKEN not in text
    assert "[secret]" in json_file.read_text()


# --- older states, layouts, what is and is not analysed ----------------------------------------


@pytest.mark.parametrize("version", [2, 1])
def test_older_deployment_versions_are_read_as_pulumi_migrates_them(
    legacy, tmp_path: Path, version: int
) -> None:
    state = write(tmp_path, f"v{version}.json", export_from_preview(legacy, version=version))
    read = read_state(state)
    subscription = next(r for r in read.resources if r.type == SUB)
    if version == 2:  # every dependency is taken to affect every input property
        assert subscription.property_dependencies == {
            key: subscription.dependencies for key in subscription.inputs
        }
    code, out, _ = analyze(state, "--policy-config", CONFIG, "-f", "json")
    (stack,) = json.loads(out)["stacks"]
    assert code == 1 and stack["state"]["deploymentVersion"] == version
    assert any(f"deployment version {version}" in note for note in stack["notes"])
    assert ("push-endpoint-https", "mandatory") in {(v[0], v[1]) for v in findings(stack)}
    if version == 2:
        assert findings(stack) == preview_findings(legacy)


def test_a_backend_folder_is_searched_without_its_history(dev, legacy, tmp_path: Path) -> None:
    backend = tmp_path / "state"
    checkpoint = {
        "version": 3,
        "checkpoint": {
            "stack": "organization/pushguard-example/dev",
            "latest": export_from_preview(dev)["deployment"],
        },
    }
    write(backend, ".pulumi/stacks/pushguard-example/dev.json", checkpoint)
    (backend / ".pulumi/stacks/pushguard-example/legacy.json.gz").write_bytes(
        gzip.compress(dumps(export_from_preview(legacy)).encode())
    )
    write(
        backend,
        ".pulumi/history/pushguard-example/legacy/legacy-1.checkpoint.json",
        export_from_preview(legacy),
    )
    write(
        backend,
        ".pulumi/backups/pushguard-example/legacy/legacy.1.json",
        export_from_preview(legacy),
    )
    code, out, _ = analyze(backend, "--policy-config", CONFIG, "-f", "json")
    report = json.loads(out)
    assert [(s["stack"], Path(s["state"]["path"]).name) for s in report["stacks"]] == [
        ("dev", "dev.json"),
        ("legacy", "legacy.json.gz"),
    ]
    assert code == 1 and report["summary"]["failing"] == 1


def test_a_never_deployed_checkpoint_has_nothing_to_analyse(tmp_path: Path) -> None:
    state = write(
        tmp_path,
        "new.json",
        {"version": 3, "checkpoint": {"stack": "organization/team/staging", "latest": None}},
    )
    code, out, _ = analyze(state, "-f", "json")
    (stack,) = json.loads(out)["stacks"]
    assert (code, stack["stack"], stack["violations"]) == (0, "staging", [])
    assert any("no resources" in note for note in stack["notes"])


def test_resources_pending_deletion_are_not_analysed(legacy, tmp_path: Path) -> None:
    def delete_http(entry: dict[str, Any]) -> None:
        if entry["urn"].endswith("::legacy-orders") and entry["type"] == SUB:
            entry["delete"] = True

    document = export_from_preview(legacy, edit=delete_http)
    document["deployment"]["pending_operations"] = [
        {"resource": document["deployment"]["resources"][-1], "type": "creating"}
    ]
    _, out, _ = analyze(
        write(tmp_path, "s.json", document), "--policy-config", CONFIG, "-f", "json"
    )
    (stack,) = json.loads(out)["stacks"]
    assert "push-endpoint-https" not in {v[0] for v in findings(stack)}
    assert any("pending" in note for note in stack["notes"])


class RecordingPack:
    """Stands in for the pack process, keeping what `analyze_stack` sends."""

    def __init__(self) -> None:
        self.analyzed: list[Any] = []
        self.stack: list[Any] = []

    def analyze(self, resource: Any) -> list[Any]:
        self.analyzed.append(resource.analyze_request())
        return []

    def analyze_stack(self, resources: Any) -> list[Any]:
        self.stack = [r.stack_resource() for r in resources]
        return []


def test_the_pack_gets_what_pulumi_policy_analyze_sends(legacy, tmp_path: Path) -> None:
    def protect(entry: dict[str, Any]) -> None:
        if entry["type"] == SUB:
            entry["protect"] = True
            entry["ignoreChanges"] = ["labels"]

    state = read_state(write(tmp_path, "s.json", export_from_preview(legacy, edit=protect)))
    pack = RecordingPack()
    analyze_stack(pack, state)  # type: ignore[arg-type]
    live = [r.urn for r in state.resources]
    assert [r.urn for r in pack.analyzed] == live == [r.urn for r in pack.stack]
    request = next(r for r in pack.analyzed if r.type == SUB and r.name == "legacy-orders")
    properties = dict(request.properties)
    assert "__defaults" not in properties, "internal keys are not sent"
    assert properties["pushConfig"]["pushEndpoint"] == "http://orders.legacy.acme.example/pubsub"
    assert request.provider.type == "pulumi:providers:gcp"
    assert request.provider.urn.endswith("::pulumi:providers:gcp::default_10_2_0")
    assert request.provider.name == "default_10_2_0"
    assert dict(request.provider.properties)["project"] == "acme-legacy"
    assert request.options.protect and list(request.options.ignoreChanges) == ["labels"]
    stacked = next(r for r in pack.stack if r.urn == request.urn)
    assert dict(stacked.properties)["id"].startswith("projects/"), "outputs for AnalyzeStack"
    assert stacked.parent.endswith("::pulumi:pulumi:Stack::pushguard-example-legacy")
    assert list(stacked.propertyDependencies["topic"].urns) == [
        r.urn for r in state.resources if r.type.endswith("Topic") and r.name == "legacy-orders"
    ]


# --- malformed files: exit 2 naming each, the others still analysed ----------------------------

MALFORMED = {
    "truncated.json": ('{"version": 3, "deployment": {"resources": [', "is not JSON"),
    "newer.json": ({"version": 5, "deployment": {}}, "deployment version 5 is newer"),
    "no-type.json": (
        {
            "version": 3,
            "deployment": {
                "resources": [
                    {"urn": "urn:pulumi:dev::p::gcp:pubsub/topic:Topic::t", "custom": True}
                ]
            },
        },
        "resources.0.type",
    ),
    "inputs-list.json": (
        {
            "version": 3,
            "deployment": {
                "resources": [
                    {
                        "urn": "urn:pulumi:dev::p::gcp:pubsub/topic:Topic::t",
                        "type": "gcp:pubsub/topic:Topic",
                        "inputs": ["name"],
                    }
                ]
            },
        },
        "resources.0.inputs",
    ),
    "bad-plaintext.json": (
        {
            "version": 3,
            "deployment": {
                "resources": [
                    {
                        "urn": "urn:pulumi:dev::p::gcp:pubsub/topic:Topic::t",
                        "type": "gcp:pubsub/topic:Topic",
                        "outputs": {"name": {SIG: SECRET, "plaintext": "not json"}},
                    }
                ]
            },
        },
        "outputs.name: a secret's plaintext must be the JSON text",
    ),
    "binary.json": (b"\xff\xfe\x00garbage", "not UTF-8"),
}
NAMED = {
    "neither.json": ({"version": 3, "stack": "dev"}, "neither deployment"),
    "array.json": ([1, 2], "must be a JSON object"),
}
"""JSON files that are not Pulumi state: skipped in a folder (see test_large_and_mixed.py),
unreadable when named on the command line."""


def test_malformed_files_exit_2_naming_each_while_the_others_are_analysed(
    legacy, tmp_path: Path
) -> None:
    good = write(tmp_path, "good/legacy.json", export_from_preview(legacy))
    bad = tmp_path / "bad"
    bad.mkdir()
    for name, (content, _) in MALFORMED.items():
        if isinstance(content, bytes):
            (bad / name).write_bytes(content)
        else:
            write(bad, name, content if isinstance(content, str) else json.dumps(content))
    named = [write(tmp_path, name, json.dumps(content)) for name, (content, _) in NAMED.items()]
    missing = tmp_path / "nowhere.json"
    report_file = tmp_path / "report.json"
    code, out, err = analyze(
        good, bad, *named, missing, "--policy-config", CONFIG, "-o", report_file, "-f", "json"
    )
    assert code == 2
    report = json.loads(report_file.read_text())
    assert [s["stack"] for s in report["stacks"]] == ["legacy"], "the good file is analysed"
    assert findings(report["stacks"][0]) == preview_findings(legacy)
    unreadable = {Path(u["path"]).name: u["message"] for u in report["unreadable"]}
    assert set(unreadable) == {*MALFORMED, *NAMED, "nowhere.json"}
    for name, (_, expected) in MALFORMED.items():
        assert expected in unreadable[name], name
        assert str(bad / name) in err, f"stderr names {name}"
    for name, (_, expected) in NAMED.items():
        assert expected in unreadable[name], name
    assert unreadable["nowhere.json"] == "does not exist"
    assert report["summary"] == {
        "stacks": 1,
        "unreadable": 9,
        "mandatory": 3,
        "advisory": 1,
        "excepted": 0,
        "expiredExceptions": 0,
        "failing": 1,
        "exitCode": 2,
    }
    assert "Traceback" not in err and "legacy" in out, "the text report still goes to stdout"


def test_a_missing_resource_urn_names_the_resource_index(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.json",
        {
            "version": 3,
            "deployment": {
                "resources": [
                    {
                        "urn": "urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev",
                        "type": "pulumi:pulumi:Stack",
                    },
                    {"urn": 7, "type": "gcp:pubsub/topic:Topic"},
                ]
            },
        },
    )
    with pytest.raises(StateFileError, match=r"s\.json: resources\.1\.urn: Input should be"):
        read_state(path)


def test_the_reports_are_deterministic_and_sarif_valid(legacy, dev, tmp_path: Path) -> None:
    states = [
        write(tmp_path, f"{n}.json", export_from_preview(r))
        for n, r in (("legacy", legacy), ("dev", dev))
    ]
    write(tmp_path, "broken.json", "{")
    outputs = [
        analyze(tmp_path, "--policy-config", CONFIG, "-f", fmt)[1]
        for fmt in ("json", "json", "sarif", "sarif")
    ]
    assert outputs[0] == outputs[1] and outputs[2] == outputs[3]
    log = json.loads(outputs[2])
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(log)
    ids = [run["automationDetails"]["id"] for run in log["runs"]]
    assert ids == [
        f"pushguard-analyze/pushguard-example/dev/{state_key(states[1])}/",
        f"pushguard-analyze/pushguard-example/legacy/{state_key(states[0])}/",
        "pushguard-analyze/",
    ]
    failed = log["runs"][-1]["invocations"][0]
    assert failed["executionSuccessful"] is False and failed["exitCode"] == 2
    assert "broken.json" in failed["toolExecutionNotifications"][0]["message"]["text"]
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][1]["results"]
    }
    assert {Path(u).name for u in uris} == {"legacy.json"}
    assert len(states) == 2


def test_a_bad_policy_config_fails_the_run_with_the_report_written(legacy, tmp_path: Path) -> None:
    state = write(tmp_path, "legacy.json", export_from_preview(legacy))
    config = write(tmp_path, "policy.json", {"push-endpoint-https": "sometimes"})
    report_file = tmp_path / "out.sarif"
    code, _, err = analyze(state, "--policy-config", config, "-f", "sarif", "-o", report_file)
    assert code == 2 and "policy.json" in err
    log = json.loads(report_file.read_text())
    assert log["runs"][-1]["invocations"][0]["executionSuccessful"] is False


def test_run_analyze_keeps_stack_order_of_the_arguments(dev, legacy, tmp_path: Path) -> None:
    first = write(tmp_path, "z-dev.json", export_from_preview(dev))
    second = write(tmp_path, "a-legacy.json", export_from_preview(legacy))
    run = run_analyze(AnalyzeOptions([first, second], policy_config=CONFIG))
    assert [r.stack for r in run.stacks] == ["dev", "legacy"] and run.exit_code == 1


# --- what only the outputs show, integrity, and files no JSON parser should accept ------------


def _strip_project(document: dict[str, Any], name: str) -> None:
    """The subscription ``name`` and the provider set no project: the provider took it from the
    environment (GOOGLE_CLOUD_PROJECT), so only the outputs know it."""
    for entry in document["deployment"]["resources"]:
        if entry["type"].startswith("pulumi:providers:") or entry["urn"].endswith(f"::{name}"):
            entry.get("inputs", {}).pop("project", None)


def test_a_project_only_the_outputs_know_is_still_checked(legacy, tmp_path: Path) -> None:
    document = export_from_preview(legacy)
    _strip_project(document, "legacy-billing")
    code, out, _ = analyze(
        write(tmp_path, "s.json", document), "--policy-config", CONFIG, "-f", "json"
    )
    (stack,) = json.loads(out)["stacks"]
    assert code == 1
    billing = {v[0] for v in findings(stack) if v[2].endswith(f"{SUB}::legacy-billing")}
    assert "push-sa-same-project" in billing, "AnalyzeStack sees the deployed project"
    assert len(stack["violations"]) == len(findings(stack)), "each finding once"


def test_a_drifted_endpoint_in_the_outputs_is_checked(dev, tmp_path: Path) -> None:
    def drift(entry: dict[str, Any]) -> None:
        if entry["type"] == SUB and entry["urn"].endswith("::invoices"):
            entry["outputs"]["pushConfig"]["pushEndpoint"] = "http://invoices.example/push"

    state = write(tmp_path, "s.json", export_from_preview(dev, edit=drift))
    code, out, _ = analyze(state, "--policy-config", CONFIG, "-f", "json")
    (stack,) = json.loads(out)["stacks"]
    assert code == 1
    assert ("push-endpoint-https", "mandatory") in {(v[0], v[1]) for v in findings(stack)}


def _broken(kind: str, document: dict[str, Any]) -> None:
    resources = document["deployment"]["resources"]
    subscription = next(r for r in resources if r["type"] == SUB)
    if kind == "provider":
        subscription["provider"] = subscription["provider"].rsplit("::", 1)[0] + "::nope"
    elif kind == "parent":
        subscription["parent"] = "urn:pulumi:legacy::pushguard-example::pulumi:pulumi:Stack::gone"
    elif kind == "duplicate":
        resources.append(dict(subscription))


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("provider", "is not a provider of this state"),
        ("parent", "is not a resource of this state"),
        ("duplicate", "two resources have this URN"),
    ],
)
def test_a_state_that_fails_pulumis_integrity_check_is_refused(
    legacy, tmp_path: Path, kind: str, expected: str
) -> None:
    document = export_from_preview(legacy)
    _broken(kind, document)
    state = write(tmp_path, f"{kind}.json", document)
    code, _, err = analyze(state, "--policy-config", CONFIG)
    assert code == 2 and f"{kind}.json" in err and expected in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"version": 3, "deployment": {"resources": [], "x": NaN}}', "NaN is not JSON"),
        ('{"version": 3, "deployment": {"resources": [], "x": 1e999}}', "does not fit a double"),
        ('{"version": 3, "deployment": {"resources": [], "x": ' + "9" * 5000 + "}}", "digits"),
        (
            '{"version": 3, "deployment": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}",
            "nested deeper than",
        ),
        ('{"version": 3, "deployment": null}', "deployment is null"),
    ],
)
def test_what_pulumi_never_writes_is_refused_not_crashed_on(
    legacy, tmp_path: Path, text: str, expected: str
) -> None:
    bad = write(tmp_path, "bad.json", text)
    good = write(tmp_path, "good.json", export_from_preview(legacy))
    report_file = tmp_path / "r.json"
    code, _, err = analyze(bad, good, "--policy-config", CONFIG, "-f", "json", "-o", report_file)
    report = json.loads(report_file.read_text())
    assert code == 2 and "Traceback" not in err
    assert [s["stack"] for s in report["stacks"]] == ["legacy"]
    (problem,) = report["unreadable"]
    assert Path(problem["path"]).name == "bad.json" and expected in problem["message"]


def test_a_link_to_nothing_in_a_folder_is_reported(legacy, tmp_path: Path) -> None:
    folder = tmp_path / "states"
    write(folder, "good.json", export_from_preview(legacy))
    (folder / "team-b.json").symlink_to(tmp_path / "gone.json")
    (folder / "loop").symlink_to(folder)  # a link to a folder is not followed
    code, out, err = analyze(folder, "--policy-config", CONFIG, "-f", "json")
    report = json.loads(out)
    assert code == 2 and "team-b.json" in err
    assert [s["stack"] for s in report["stacks"]] == ["legacy"]


def test_names_cannot_drive_the_terminal(legacy, tmp_path: Path) -> None:
    evil = "x\x1b[2J\u202ehidden\nFAKE: Analysis passed :smiley: [bold]"
    document = export_from_preview(legacy)
    text = dumps(document).replace("::legacy-orders", "::" + json.dumps(evil)[1:-1])
    code, out, _ = analyze(write(tmp_path, "s.json", text), "--policy-config", CONFIG)
    assert code == 1
    assert "\x1b" not in out and "\u202e" not in out and "😃" not in out
    assert "\\u001b[2J\\u202ehidden\\u000aFAKE: Analysis passed :smiley: [bold]" in out


def test_an_unexpected_failure_is_exit_2_with_the_report_written(
    legacy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("pushguard.analyze.runner.read_state", broken)
    state = write(tmp_path, "legacy.json", export_from_preview(legacy))
    report_file = tmp_path / "r.sarif"
    code, _, err = analyze(state, "-f", "sarif", "-o", report_file)
    assert code == 2 and "disk on fire" in err and "Traceback" not in err
    log = json.loads(report_file.read_text())
    assert log["runs"][-1]["invocations"][0]["executionSuccessful"] is False
