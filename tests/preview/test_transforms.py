"""Transforms (issue 20, item 1): ``ResourceOptions(transforms=[...])``,
``pulumi.runtime.register_resource_transform`` and ``register_invoke_transform`` apply under
``pushguard preview`` as the Pulumi engine applies them.

The engine's rules (pkg/resource/deploy/source_eval.go, ``resmon.RegisterResource`` and
``resmon.Invoke``, pulumi/pulumi at 1b5949891b3c): a resource's own transforms run first, then
those of its parent, its parent's parent and so on, then the stack transforms registered so far,
in registration order; every transform gets the properties and options the previous one
returned; a transform that fails fails the registration. Stack invoke transforms run, in order,
on every invoke's arguments before the provider sees them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pytest

from pushguard.preview.mocks import UNKNOWN, GcpMocks
from tests.mock_runtime.engine import run_program_capturing
from tests.sdk import needs_sdk

SUB = "gcp:pubsub/subscription:Subscription"
SA = "push@acme-orders.iam.gserviceaccount.com"

HEADER = """\
import pulumi
import pulumi_gcp as gcp
from pulumi import ResourceOptions


def to_http(args):
    if args.type_ != "gcp:pubsub/subscription:Subscription":
        return None
    props = dict(args.props)
    push = dict(props["pushConfig"])
    push["pushEndpoint"] = push["pushEndpoint"].replace("https://", "http://")
    props["pushConfig"] = push
    return pulumi.ResourceTransformResult(props, args.opts)

"""

SUBSCRIPTION = f"""
gcp.pubsub.Subscription(
    "orders",
    topic="orders",
    push_config={{
        "push_endpoint": "https://orders.example.com/push",
        "oidc_token": {{"service_account_email": "{SA}"}},
    }},
    opts=OPTS,
)
"""


def _mandatory(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (v["policy"], v["urn"].rsplit("::", 1)[1])
        for v in report["violations"]
        if v["level"] == "mandatory"
    }


def _inputs(report: dict[str, Any], name: str, type_: str = SUB) -> dict[str, Any]:
    (resource,) = [r for r in report["resources"] if r["name"] == name and r["type"] == type_]
    inputs: dict[str, Any] = resource["inputs"]
    return inputs


def test_without_a_transform_the_subscription_passes(make_project, preview) -> None:
    folder = make_project(HEADER + SUBSCRIPTION.replace("OPTS", "None"))
    run = preview(str(folder), "--stack", "dev", "--format", "json")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert _mandatory(run.json()) == set()


def test_a_resource_transform_to_http_fails_the_preview_and_the_report_shows_it(
    make_project, preview
) -> None:
    program = HEADER + SUBSCRIPTION.replace("OPTS", "ResourceOptions(transforms=[to_http])")
    folder = make_project(program)
    run = preview(str(folder), "--stack", "dev", "--format", "json")
    assert run.exit_code == 1, run.stdout + run.stderr
    report = run.json()
    assert ("push-endpoint-https", "orders") in _mandatory(report)
    assert _inputs(report, "orders")["pushConfig"]["pushEndpoint"] == (
        "http://orders.example.com/push"
    )


def test_a_stack_transform_to_http_fails_the_preview(make_project, preview) -> None:
    program = (
        HEADER
        + "pulumi.runtime.register_resource_transform(to_http)\n"
        + SUBSCRIPTION.replace("OPTS", "None")
    )
    run = preview(str(make_project(program)), "--stack", "dev", "--format", "json")
    assert run.exit_code == 1, run.stdout + run.stderr
    report = run.json()
    assert ("push-endpoint-https", "orders") in _mandatory(report)
    assert _inputs(report, "orders")["pushConfig"]["pushEndpoint"].startswith("http://")


COMPONENT = """
from pushguard.components import PushSubscription

PushSubscription(
    "orders",
    {
        "topic": "orders",
        "push_endpoint": "https://hooks.example.com/push",
        "target": {"kind": "external"},
        "audience": "orders-api",
    },
    opts=OPTS,
)
"""


@pytest.mark.parametrize(
    "how",
    [
        pytest.param(("", "ResourceOptions(transforms=[to_http])"), id="on-the-component"),
        pytest.param(("pulumi.runtime.register_resource_transform(to_http)\n", "None"), id="stack"),
    ],
)
def test_a_transform_reaches_the_push_subscription_components_child(
    make_project, preview, how: tuple[str, str]
) -> None:
    before, opts = how
    program = HEADER + before + COMPONENT.replace("OPTS", opts)
    run = preview(str(make_project(program)), "--stack", "dev", "--format", "json")
    assert run.exit_code == 1, run.stdout + run.stderr
    report = run.json()
    assert ("push-endpoint-https", "orders") in _mandatory(report)
    assert _inputs(report, "orders")["pushConfig"]["pushEndpoint"] == (
        "http://hooks.example.com/push"
    )


ORDER = """
import pulumi
import pulumi_gcp as gcp
from pulumi import ResourceOptions


def mark(label):
    def transform(args):
        if args.type_ != "gcp:pubsub/topic:Topic":
            return None
        props = dict(args.props)
        labels = dict(props.get("labels") or {})
        labels["trail"] = (labels.get("trail", "") + "." + label).lstrip(".")
        props["labels"] = labels
        return pulumi.ResourceTransformResult(props, args.opts)

    return transform


class Group(pulumi.ComponentResource):
    def __init__(self, name, opts=None, inner=False):
        super().__init__("team:index:Group", name, None, opts)
        if inner:
            Group(name + "-inner", ResourceOptions(parent=self, transforms=[mark("parent")]))
        else:
            gcp.pubsub.Topic(
                name + "-topic", opts=ResourceOptions(parent=self, transforms=[mark("own")])
            )


gcp.pubsub.Topic("early")
pulumi.runtime.register_resource_transform(mark("stack1"))
Group("g", ResourceOptions(transforms=[mark("grandparent")]), inner=True)
pulumi.runtime.register_resource_transform(mark("stack2"))
gcp.pubsub.Topic("late", opts=ResourceOptions(transforms=[mark("own1"), mark("own2")]))
"""


def test_transforms_run_own_then_parents_then_the_stack_transforms_registered_so_far(
    make_project, preview
) -> None:
    run = preview(str(make_project(ORDER)), "--stack", "dev", "--format", "json")
    assert run.exit_code == 0, run.stdout + run.stderr
    report = run.json()
    topic = "gcp:pubsub/topic:Topic"
    assert "labels" not in _inputs(report, "early", topic), "registered before any transform"
    assert _inputs(report, "g-inner-topic", topic)["labels"] == {
        "trail": "own.parent.grandparent.stack1"
    }
    assert _inputs(report, "late", topic)["labels"] == {"trail": "own1.own2.stack1.stack2"}


def test_a_failing_transform_fails_the_run_with_exit_2_naming_it(make_project, preview) -> None:
    program = (
        HEADER
        + ("def broken(args):\n    raise RuntimeError('transform exploded')\n\n")
        + SUBSCRIPTION.replace("OPTS", "ResourceOptions(transforms=[broken])")
    )
    run = preview(str(make_project(program)), "--stack", "dev", "--format", "json")
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "transform exploded" in run.stderr
    line = program.splitlines().index("    raise RuntimeError('transform exploded')") + 1
    assert f"(at __main__.py:{line})" in run.stderr, "located at the transform's line"
    assert "transform exploded" in run.json()["error"]["message"]


def test_the_installed_console_script_fails_a_transformed_subscription(make_project) -> None:
    script = shutil.which("pushguard", path=str(Path(sys.executable).parent))
    assert script is not None
    program = HEADER + SUBSCRIPTION.replace("OPTS", "ResourceOptions(transforms=[to_http])")
    folder = make_project(program)
    env = {k: v for k, v in os.environ.items() if k != "PULUMI_STACK"}
    done = subprocess.run(  # noqa: PLW1510 - the exit code is the assertion
        [script, "preview", str(folder), "--stack", "dev"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "push-endpoint-https" in done.stdout


# --- the recorded registration: options, secrets, unknowns, invokes --------------------------

PROJECT_CONFIG = {"gcp:project": "acme-orders"}

MOCKS_SERVE_TRANSFORMS = needs_sdk(
    "3.260.0",
    "transforms under the SDK's mock runtime (a callbacks server for a monitor that is not a gRPC "
    "stub: #24406, commit c920994fa582; the SDK's version at that commit is 3.260.0, after tag "
    "v3.259.0)",
)
"""The tests below run the program under the SDK's mock runtime (tests/mock_runtime), whose
callbacks server an older SDK starts only for a real monitor (``_get_callbacks`` in
``pulumi/runtime/settings.py`` at v3.204.0: ``isinstance(monitor, ResourceMonitorStub)``), so a
transform fails there with "Callback server not initialized". ``pushguard preview`` is not
affected: the program talks to the engine's gRPC monitor (the console-script tests above)."""


def _mocks() -> GcpMocks:
    return GcpMocks("acme-orders", {"acme-orders": "123456789012"})


@MOCKS_SERVE_TRANSFORMS
def test_transformed_options_are_in_the_record() -> None:
    def program() -> None:
        other = gcp.Provider("other", project="acme-other")
        dep = gcp.pubsub.Topic("dep")

        def options(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult:
            opts = pulumi.ResourceOptions.merge(
                args.opts,
                pulumi.ResourceOptions(
                    provider=other,
                    replace_on_changes=["pushConfig"],
                    delete_before_replace=True,
                    depends_on=[dep],
                ),
            )
            return pulumi.ResourceTransformResult(args.props, opts)

        gcp.pubsub.Topic("t", opts=pulumi.ResourceOptions(transforms=[options]))

    run, error = run_program_capturing(program, _mocks(), config=PROJECT_CONFIG)
    assert error is None, repr(error)
    record = next(r for r in run.records if r.name == "t")
    dep = next(r for r in run.records if r.name == "dep")
    provider = next(r for r in run.records if r.name == "other")
    assert record.provider.startswith(provider.urn + "::")
    assert record.replace_on_changes == ("pushConfig",)
    assert record.delete_before_replace is True
    assert dep.urn in record.dependencies
    assert record.outputs["project"] == "acme-other", "the mocks planned it with the new provider"


@MOCKS_SERVE_TRANSFORMS
def test_a_transform_that_changes_nothing_leaves_secrets_and_unknowns_as_they_were() -> None:
    def identity(args: pulumi.ResourceTransformArgs) -> None:
        return None

    def rebuild(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult:
        return pulumi.ResourceTransformResult(dict(args.props), args.opts)

    def program(transforms: list[Any]) -> Callable[[], None]:
        def run() -> None:
            account = gcp.serviceaccount.Account("push", account_id="push")
            topic = gcp.pubsub.Topic("topic")
            gcp.pubsub.Subscription(
                "s",
                topic=topic.name,
                labels={"token": pulumi.Output.secret("s3cr3t")},
                push_config={
                    "push_endpoint": "https://hooks.example.com/push",
                    "oidc_token": {"service_account_email": account.email},
                },
                opts=pulumi.ResourceOptions(transforms=transforms),
            )

        return run

    plain, error = run_program_capturing(program([]), _mocks(), config=PROJECT_CONFIG)
    assert error is None, repr(error)
    expected = next(r for r in plain.records if r.name == "s").inputs
    assert expected["pushConfig"]["oidcToken"]["serviceAccountEmail"] == UNKNOWN
    for transforms in ([identity], [rebuild], [rebuild, identity]):
        run, error = run_program_capturing(program(transforms), _mocks(), config=PROJECT_CONFIG)
        assert error is None, repr(error)
        assert next(r for r in run.records if r.name == "s").inputs == expected, transforms


@MOCKS_SERVE_TRANSFORMS
def test_a_resource_transform_sees_dependent_properties_as_outputs_as_in_the_engine() -> None:
    """The engine upgrades a property with dependencies to an output value when the resource
    has transforms of its own (``upgradeOutputValues``), and sends every secret and unknown as
    an output value, so a Python transform gets ``Output`` objects for them."""
    seen: dict[str, Any] = {}

    def look(args: pulumi.ResourceTransformArgs) -> None:
        seen.update(args.props)

    def program() -> None:
        topic = gcp.pubsub.Topic("topic")
        gcp.pubsub.Subscription(
            "s",
            topic=topic.name,
            ack_deadline_seconds=20,
            opts=pulumi.ResourceOptions(transforms=[look]),
        )

    _, error = run_program_capturing(program, _mocks(), config=PROJECT_CONFIG)
    assert error is None, repr(error)
    assert isinstance(seen["topic"], pulumi.Output)
    assert seen["ackDeadlineSeconds"] == 20


@MOCKS_SERVE_TRANSFORMS
def test_a_stack_invoke_transform_rewrites_the_arguments_the_provider_sees() -> None:
    calls: list[str] = []
    numbers: list[str] = []

    def rename(args: pulumi.InvokeTransformArgs) -> pulumi.InvokeTransformResult:
        calls.append(args.token)
        return pulumi.InvokeTransformResult({**args.args, "projectId": "acme-orders"}, args.opts)

    def program() -> None:
        pulumi.runtime.register_invoke_transform(rename)
        project = gcp.organizations.get_project(project_id="somewhere-else")
        numbers.append(project.number)

    _, error = run_program_capturing(program, _mocks(), config=PROJECT_CONFIG)
    assert error is None, repr(error)
    assert calls == ["gcp:organizations/getProject:getProject"]
    assert numbers == ["123456789012"]
