"""The example team program in stacks/, run under the mock runtime as `pulumi preview` would."""

from __future__ import annotations

from pathlib import Path

from pushguard.components import TYPE_TOKEN
from pushguard.preview.mocks import GcpMocks
from pushguard.preview.project import load_project, load_stack_config
from tests.mock_runtime.engine import ProgramRun
from tests.mock_runtime.program import run_project_program

ROOT = Path(__file__).resolve().parents[2]
SUB = "gcp:pubsub/subscription:Subscription"


def run_stack(stack: str, *, preview: bool = True) -> ProgramRun:
    project = load_project(ROOT)
    config, secrets = load_stack_config(project, stack)
    mocks = GcpMocks(project=config.get("gcp:project"), region=config.get("gcp:region"))
    run, failure = run_project_program(project, stack, mocks, config, secrets, preview=preview)
    assert failure is None, str(failure)
    return run


def test_dev_stack_declares_one_component_per_configured_subscription() -> None:
    graph = run_stack("dev", preview=False)
    assert sorted(r.name for r in graph.by_type(TYPE_TOKEN)) == [
        "invoices",
        "orders-created",
        "partner-webhook",
    ]
    subs = {r.name: r.inputs for r in graph.by_type(SUB)}
    assert subs["orders-created"]["deadLetterPolicy"]["maxDeliveryAttempts"] == 10
    assert subs["partner-webhook"]["pushConfig"]["noWrapper"] == {"writeMetadata": True}
    assert subs["invoices"]["pushConfig"]["oidcToken"]["audience"] == (
        "https://invoices-210987654321.europe-west1.run.app"
    )
    members = graph.by_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert sum(r.inputs["member"] == "group:orders-platform@example.com" for r in members) == 3


def test_legacy_stack_wires_raw_resources_from_its_own_module() -> None:
    graph = run_stack("legacy")
    assert not graph.by_type(TYPE_TOKEN), "the legacy team bypasses the component"
    subs = {r.name: r for r in graph.by_type(SUB)}
    assert set(subs) == {"legacy-orders", "legacy-billing", "payments-settled"}
    assert subs["payments-settled"].inputs["project"] == "acme-payments"
    assert all(r.source and r.source[0].endswith("stacks/legacy.py") for r in subs.values())


def test_stack_config_is_read_like_the_cli() -> None:
    project = load_project(ROOT)
    assert project.main == ROOT / "stacks"
    assert project.stacks() == ["dev", "legacy"]
    config, secrets = load_stack_config(project, "dev")
    assert config["gcp:project"] == "acme-orders-dev"
    assert config["pushguard-example:projectNumber"] == "210987654321"
    assert config["pushguard-example:subscriptions"].startswith("[{")
    assert secrets == set()
