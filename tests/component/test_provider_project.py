"""PushSubscription takes its project from its provider, as its children would (issue 20): an
explicit ``gcp.Provider`` given through ``provider``, ``providers`` or a parent wins over the stack
config's ``gcp:project``; the children inherit that provider and the project number is looked up
for that project."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pytest

from pushguard.components import TYPE_TOKEN, PushSubscription
from pushguard.preview.mocks import GcpMocks
from tests.helpers import run_program

PROJECT = "acme-orders"
OTHER = "acme-billing"
NUMBERS = {PROJECT: "123456789012", OTHER: "222222222222"}
ARGS: dict[str, Any] = {
    "topic": "orders",
    "push_endpoint": "https://orders-3kq2x7ab9c-ew.a.run.app/push",
    "target": {"kind": "cloud-run", "name": "orders", "location": "europe-west1"},
}
SUB = "gcp:pubsub/subscription:Subscription"
SA = "gcp:serviceaccount/account:Account"
SA_MEMBER = "gcp:serviceaccount/iAMMember:IAMMember"


class Team(pulumi.ComponentResource):
    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("acme:index:Team", name, None, opts)


def _with_provider(how: str) -> Callable[[], None]:
    def program() -> None:
        provider = gcp.Provider("billing", project=OTHER)
        if how == "provider":
            opts = pulumi.ResourceOptions(provider=provider)
        elif how == "providers-list":
            opts = pulumi.ResourceOptions(providers=[provider])
        elif how == "providers-map":
            opts = pulumi.ResourceOptions(providers={"gcp": provider})
        else:
            team = Team("team", pulumi.ResourceOptions(provider=provider))
            opts = pulumi.ResourceOptions(parent=team)
        PushSubscription("orders", dict(ARGS), opts)

    return program


@pytest.mark.parametrize("how", ["provider", "providers-list", "providers-map", "parent"])
def test_children_inherit_the_provider_and_its_project(how: str) -> None:
    mocks = GcpMocks(project=PROJECT, project_numbers=NUMBERS)
    graph = run_program(_with_provider(how), mocks, config={"gcp:project": PROJECT}, preview=False)
    component = graph.one(TYPE_TOKEN)
    provider = graph.one("pulumi:providers:gcp")
    children = [r for r in graph.records if r.parent == component.urn]
    assert children
    for child in children:
        assert child.provider.startswith(provider.urn + "::"), (child.name, child.provider)
        if "project" in child.inputs:
            assert child.inputs["project"] == OTHER, child.name
    account = graph.one(SA)
    expected = f"{account.inputs['accountId']}@{OTHER}.iam.gserviceaccount.com"
    assert account.outputs["email"] == expected
    agent = f"service-{NUMBERS[OTHER]}@gcp-sa-pubsub.iam.gserviceaccount.com"
    assert graph.one(SA_MEMBER).inputs["member"] == f"serviceAccount:{agent}"
    assert mocks.placeholder_projects == set()


def test_a_provider_without_a_project_does_not_take_the_stack_config() -> None:
    def program() -> None:
        provider = gcp.Provider("noproject")
        PushSubscription("orders", dict(ARGS), pulumi.ResourceOptions(provider=provider))

    graph, error = _capturing(program, {"gcp:project": PROJECT})
    assert error is not None
    assert "project" in str(error) and "provider" in str(error)
    assert not graph.by_type(SUB)


def test_the_explicit_project_input_still_wins() -> None:
    def program() -> None:
        provider = gcp.Provider("billing", project=OTHER)
        PushSubscription(
            "orders", {**ARGS, "project": PROJECT}, pulumi.ResourceOptions(provider=provider)
        )

    mocks = GcpMocks(project=PROJECT, project_numbers=NUMBERS)
    graph = run_program(program, mocks, config={"gcp:project": PROJECT}, preview=False)
    assert graph.one(SUB).inputs["project"] == PROJECT


def test_without_a_provider_the_stack_config_project_is_used_as_before() -> None:
    mocks = GcpMocks(project=PROJECT, project_numbers=NUMBERS)
    graph = run_program(
        lambda: PushSubscription("orders", dict(ARGS)),
        mocks,
        config={"gcp:project": PROJECT},
        preview=False,
    )
    assert graph.one(SUB).inputs["project"] == PROJECT


def _capturing(program: Callable[[], None], config: dict[str, str]) -> tuple[Any, Any]:
    from tests.mock_runtime.engine import run_program_capturing

    mocks = GcpMocks(project=PROJECT, project_numbers=NUMBERS)
    return run_program_capturing(program, mocks, config=config, preview=False)
