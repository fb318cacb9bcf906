"""The example team program in stacks/, run under the mock runtime as `pulumi preview` would."""

from __future__ import annotations

import runpy
from pathlib import Path

from pushguard.components import TYPE_TOKEN
from pushguard.preview.engine import run_program
from pushguard.preview.mocks import GcpMocks
from pushguard.preview.project import load_project, load_stack_config

ROOT = Path(__file__).resolve().parents[2]


def run_stack(stack: str):
    project = load_project(ROOT)
    config, _ = load_stack_config(project, stack)
    mocks = GcpMocks(project=config.get("gcp:project"))
    program = project.main / "__main__.py"
    return run_program(
        lambda: runpy.run_path(str(program), run_name="__main__"),
        mocks, project=project.name, stack=stack, config=config,
    )


def test_dev_stack_declares_one_component_per_configured_subscription() -> None:
    graph = run_stack("dev")
    assert sorted(r.name for r in graph.by_type(TYPE_TOKEN)) == [
        "invoices", "orders-created", "partner-webhook"]
    subs = {r.name: r.inputs for r in graph.by_type("gcp:pubsub/subscription:Subscription")}
    assert subs["orders-created"]["deadLetterPolicy"]["maxDeliveryAttempts"] == 10
    assert subs["partner-webhook"]["pushConfig"]["noWrapper"] == {"writeMetadata": True}
    assert subs["invoices"]["pushConfig"]["oidcToken"]["audience"] == (
        "https://invoices-123456789012.europe-west1.run.app/")
    members = graph.by_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert sum(r.inputs["member"] == "group:orders-platform@example.com" for r in members) == 3


def test_stack_config_is_read_like_the_cli() -> None:
    project = load_project(ROOT)
    assert project.main == ROOT / "stacks"
    config, secrets = load_stack_config(project, "dev")
    assert config["gcp:project"] == "acme-orders-dev"
    assert config["pushguard-example:projectNumber"] == "123456789012"
    assert config["pushguard-example:subscriptions"].startswith("[{")
    assert secrets == set()
