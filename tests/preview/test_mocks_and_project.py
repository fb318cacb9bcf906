"""Provider-faithful mocks (what is known at preview, what after create) and project/config
reading as the Pulumi CLI does it."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pulumi_gcp as gcp
import pytest

from pushguard.preview.mocks import PLACEHOLDER_PROJECT_NUMBER, UNKNOWN, GcpMocks
from pushguard.preview.project import (
    SECRET_UNKNOWN,
    ProjectError,
    find_project,
    load_project,
    load_stack_config,
)
from tests.mock_runtime.engine import run_program

CONFIG = {"gcp:project": "acme-orders", "gcp:region": "europe-west1"}


def declare() -> None:
    gcp.serviceaccount.Account("pusher", account_id="orders-push")
    gcp.cloudrunv2.Service(
        "orders", location="europe-west1", template={"containers": [{"image": "gcr.io/x/orders"}]}
    )
    gcp.cloudfunctions.Function("fn", runtime="python311")
    gcp.pubsub.Topic("orders-topic")
    gcp.storage.Bucket("bucket", location="EU")


def outputs(preview: bool) -> dict[str, dict]:
    mocks = GcpMocks("acme-orders", {"acme-orders": "123456789012"}, region="europe-west1")
    run = run_program(declare, mocks, config=CONFIG, preview=preview)
    return {r.name: dict(r.outputs) for r in run.records}


def test_at_preview_computed_outputs_are_unknown_and_planned_ones_known() -> None:
    state = outputs(preview=True)
    assert state["pusher"]["email"] == UNKNOWN
    assert state["pusher"]["project"] == "acme-orders", "the provider's default project"
    assert (state["orders"]["uri"], state["orders"]["urls"]) == (UNKNOWN, UNKNOWN)
    assert state["fn"]["httpsTriggerUrl"] == UNKNOWN
    assert state["fn"]["region"] == "europe-west1"
    assert state["orders-topic"]["name"].startswith("orders-topic-"), "auto-named at plan"
    assert state["bucket"] == {"location": "EU"}, "an unknown type echoes its inputs"


def test_after_create_outputs_have_the_apis_shapes() -> None:
    state = outputs(preview=False)
    assert state["pusher"]["email"] == "orders-push@acme-orders.iam.gserviceaccount.com"
    assert (
        state["pusher"]["member"]
        == "serviceAccount:orders-push@acme-orders.iam.gserviceaccount.com"
    )
    uri = state["orders"]["uri"]
    assert uri.startswith("https://orders-") and uri.endswith("-ew.a.run.app")
    name = state["orders"]["name"]
    assert state["orders"]["urls"][0] == f"https://{name}-123456789012.europe-west1.run.app"
    assert state["fn"]["httpsTriggerUrl"] == (
        f"https://europe-west1-acme-orders.cloudfunctions.net/{state['fn']['name']}"
    )


def test_ids_are_unknown_at_preview_as_for_a_real_create() -> None:
    seen = {}

    def program() -> None:
        topic = gcp.pubsub.Topic("orders", name="orders")
        pulumi.Output.all(topic.id, topic.name).apply(lambda v: seen.update(values=v))

    mocks = GcpMocks("acme-orders")
    run_program(program, mocks, config=CONFIG, preview=True)
    assert "values" not in seen, "apply does not run on an unknown id at preview"
    run_program(program, mocks, config=CONFIG, preview=False)
    assert seen["values"] == ["projects/acme-orders/topics/orders", "orders"]


def test_explicit_provider_project_is_used() -> None:
    def program() -> None:
        other = gcp.Provider("other", project="acme-shared")
        gcp.serviceaccount.Account(
            "pusher", account_id="p-push", opts=pulumi.ResourceOptions(provider=other)
        )

    run = run_program(program, GcpMocks("acme-orders"), config=CONFIG, preview=False)
    assert run.one("gcp:serviceaccount/account:Account").outputs["email"] == (
        "p-push@acme-shared.iam.gserviceaccount.com"
    )


def test_get_project_answers_from_the_map_or_a_marked_placeholder() -> None:
    answers = {}

    def program() -> None:
        answers["known"] = gcp.organizations.get_project(project_id="acme-orders").number
        answers["other"] = gcp.organizations.get_project(project_id="acme-other").number

    mocks = GcpMocks("acme-orders", {"acme-orders": "123456789012"})
    run_program(program, mocks, config=CONFIG)
    assert answers == {"known": "123456789012", "other": PLACEHOLDER_PROJECT_NUMBER}
    assert mocks.placeholder_projects == {"acme-other"}


# --- project and stack config -----------------------------------------------------------------


def write(folder: Path, name: str, data: object) -> None:
    (folder / name).write_text(json.dumps(data))


def test_project_defaults_secure_values_and_structured_config(tmp_path: Path) -> None:
    write(
        tmp_path,
        "Pulumi.yaml",
        {
            "name": "team",
            "runtime": "python",
            "main": "app.py",
            "config": {
                "region": {"type": "string", "default": "eu"},
                "gcp:project": "acme-default",
            },
        },
    )
    (tmp_path / "app.py").write_text("")
    write(
        tmp_path,
        "Pulumi.dev.yaml",
        {
            "config": {
                "team:token": {"secure": "v1:AAAAciphertext"},
                "team:hooks": [
                    {"url": "https://x.example", "key": {"secure": "v1:BBBBciphertext"}}
                ],
                "team:count": 3,
            }
        },
    )
    project = load_project(find_project(tmp_path))
    assert project.entry_point == tmp_path / "app.py"
    config, secrets = load_stack_config(project, "dev")
    assert config["team:region"] == "eu" and config["gcp:project"] == "acme-default"
    assert config["team:token"] == SECRET_UNKNOWN, "unknown offline: no key to decrypt it"
    assert json.loads(config["team:hooks"]) == [{"url": "https://x.example", "key": SECRET_UNKNOWN}]
    assert config["team:count"] == "3"
    assert secrets == {"team:token", "team:hooks"}
    assert "ciphertext" not in json.dumps(config)


def test_missing_program_is_a_project_error(tmp_path: Path) -> None:
    write(tmp_path, "Pulumi.yaml", {"name": "team", "runtime": "python", "main": "src/"})
    with pytest.raises(ProjectError, match=r"src/__main__\.py does not exist"):
        load_project(tmp_path)


def test_secret_config_never_reaches_the_report(preview, make_project) -> None:
    program = (
        "import pulumi, pulumi_gcp as gcp\n"
        "token = pulumi.Config().require_secret('token')\n"
        "gcp.pubsub.Subscription('orders', topic='orders', push_config={\n"
        "    'push_endpoint': token.apply(lambda t: f'https://hooks.example.com/p?token={t}')})\n"
    )
    folder = make_project(
        program,
        {"dev": {"gcp:project": "acme-orders", "team:token": {"secure": "v1:c2VjcmV0LXZhbHVl"}}},
    )
    for output_format in ("text", "json", "sarif"):
        run = preview(str(folder), "-f", output_format)
        assert "c2VjcmV0LXZhbHVl" not in run.stdout + run.stderr
    report = preview(str(folder), "-f", "json").json()
    [sub] = [r for r in report["resources"] if r["name"] == "orders"]
    assert sub["inputs"]["pushConfig"]["pushEndpoint"] == "[secret]"
