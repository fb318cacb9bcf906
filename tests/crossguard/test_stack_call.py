"""The pack's own ``AnalyzeStack`` loop (pushguard/crossguard/stack_call.py) answers exactly as
pulumi-policy's: the same requests, sent by pushguard's Analyzer client, through the pack's
servicer with each loop, give the same answer, diagnostic for diagnostic, in the same order.

The servicers run in this process (the reference is the pack's servicer with pulumi-policy's own
``_PolicyAnalyzerServicer.AnalyzeStack``); the gRPC route is the other protocol tests', which the
pack now answers with its own loop.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import pulumi_policy.policy as policy_module
import pytest
from pulumi.runtime import proto
from pulumi_policy import StackValidationArgs
from pulumi_policy.policy import _PolicyAnalyzerServicer

from pushguard.components import TYPE_TOKEN
from pushguard.crossguard import stack_call
from pushguard.crossguard.policies import ProjectNumbersPolicy, PushguardPolicy, build_policies
from pushguard.crossguard.server import _GuardedServicer
from pushguard.crossguard.wire import plain
from pushguard.gate.analyzer import AnalyzerResource, PolicyPackProcess
from pushguard.rules import RULES
from tests.crossguard.conftest import PACK
from tests.crossguard.wire import account, push_config, secret, subscription, urn
from tests.helpers import UNKNOWN
from tests.rules.cases import WIRE_CASES, WireCase

STACK_LOOP_SHA256 = "3917a008482c2387d7da37f65d889970933e8df8efc57270559e20b36be837bf"
"""The source of pulumi-policy 1.21.0's ``_PolicyAnalyzerServicer.AnalyzeStack``, which
:mod:`pushguard.crossguard.stack_call` repeats."""


class _AbortedError(Exception):
    pass


class _Context:
    def abort(self, code: Any, details: str) -> None:
        raise _AbortedError(f"{code}: {details}")


class _InProcess:
    """An Analyzer stub that calls a servicer in this process; the last answer per method is
    kept."""

    def __init__(self, servicer: Any) -> None:
        self.servicer, self.answers = servicer, dict[str, Any]()

    def __getattr__(self, method: str) -> Any:
        def call(request: Any) -> Any:
            self.answers[method] = getattr(self.servicer, method)(request, _Context())
            return self.answers[method]

        return call


class _PulumiPolicyLoop(_GuardedServicer):
    """The pack's servicer with pulumi-policy's own ``AnalyzeStack`` loop."""

    def _stack_call(self, request: Any, context: Any) -> Any:
        return _PolicyAnalyzerServicer.AnalyzeStack(self, request, context)  # type: ignore[no-untyped-call]


def _client(servicer: Any) -> PolicyPackProcess:
    client = PolicyPackProcess(PACK)  # never started: its stub is the servicer itself
    client.stub = _InProcess(servicer)
    return client


@pytest.fixture(scope="module")
def clients() -> tuple[PolicyPackProcess, PolicyPackProcess]:
    """Clients of the pack's servicer (its own loop) and of the reference (pulumi-policy's)."""
    return _client(_GuardedServicer(build_policies())), _client(_PulumiPolicyLoop(build_policies()))


def _answer(
    client: PolicyPackProcess,
    resources: tuple[AnalyzerResource, ...],
    config: Mapping[str, Any],
    *,
    validate: bool = True,
) -> Any:
    """Configure, ``Analyze`` each resource and ``AnalyzeStack`` once, as the engine does; the
    ``AnalyzeStack`` answer."""
    client.configure(config, validate=validate)
    for resource in resources:
        client.analyze(resource)
    client.analyze_stack(resources)
    return client.stub.answers["AnalyzeStack"]


def _readable(response: Any) -> list[tuple[str, str, int, str]]:
    found = [(d.policyName, d.urn, d.enforcementLevel, d.message) for d in response.diagnostics]
    return found + [(n.policy_name, "", -1, n.reason) for n in response.not_applicable]


def _same_answer(
    clients: tuple[PolicyPackProcess, PolicyPackProcess],
    resources: tuple[AnalyzerResource, ...],
    config: Mapping[str, Any],
    *,
    validate: bool = True,
) -> Any:
    """Assert that both loops answer ``AnalyzeStack`` alike (every field, in order); the
    answer."""
    ours, theirs = (_answer(c, resources, config, validate=validate) for c in clients)
    assert _readable(ours) == _readable(theirs)
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(
        deterministic=True
    )
    return ours


def _every_policy(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {rule.id: dict(settings) for rule in RULES}


def _levels(settings: Mapping[str, Any], other: str) -> dict[str, Any]:
    """Every second policy disabled, the others at level ``other``, with ``settings`` and
    ``unknownAtPreview: enforce``."""
    return {
        rule.id: {
            **settings,
            "unknownAtPreview": "enforce",
            "enforcementLevel": "disabled" if index % 2 else other,
        }
        for index, rule in enumerate(RULES)
    }


def test_the_loop_repeated_is_pulumi_policys_pinned_one() -> None:
    """An upgrade of pulumi-policy that changes its loop fails here: read the new loop and
    bring pushguard/crossguard/stack_call.py to it before changing the digest."""
    source = inspect.getsource(_PolicyAnalyzerServicer.AnalyzeStack)
    assert hashlib.sha256(source.encode()).hexdigest() == STACK_LOOP_SHA256


@pytest.mark.parametrize("case", WIRE_CASES, ids=lambda c: c.id)
def test_every_rule_case_gets_pulumi_policys_answer(
    clients: tuple[PolicyPackProcess, PolicyPackProcess], case: WireCase
) -> None:
    _same_answer(clients, case.resources, _every_policy(case.settings))
    _same_answer(clients, case.resources, _levels(case.settings, "mandatory"))


def _renamed(value: Any, index: int) -> Any:
    """``value`` with each URN's project ``team`` renamed ``team-INDEX``."""
    if isinstance(value, str):
        return value.replace("::team::", f"::team-{index}::")
    if isinstance(value, Mapping):
        return {key: _renamed(item, index) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_renamed(item, index) for item in value)
    return value


def _one_stack() -> Iterator[AnalyzerResource]:
    """Every rule case's resources in one stack (each case's URNs kept apart), every third
    case's subscription endpoints made secret, and a subscription whose endpoint is a secret."""
    for index, case in enumerate(WIRE_CASES):
        for resource in case.resources:
            props = dict(resource.properties)
            push = props.get("pushConfig")
            if index % 3 == 0 and isinstance(push, Mapping) and "pushEndpoint" in push:
                props["pushConfig"] = {**push, "pushEndpoint": secret(push["pushEndpoint"])}
            yield replace(
                resource,
                urn=_renamed(resource.urn, index),
                parent=_renamed(resource.parent, index),
                dependencies=_renamed(resource.dependencies, index),
                property_dependencies=_renamed(resource.property_dependencies, index),
                properties=props,
            )
    yield subscription("hidden", pushConfig={"pushEndpoint": secret("http://hidden.example/")})
    yield from _component("billing")
    elsewhere = subscription("elsewhere", provider={"project": "acme-elsewhere"})
    options = {"protect": True, "ignoreChanges": ["labels"], "aliases": ["urn:pulumi:old"]}
    yield replace(elsewhere, options=options, provider_urn="urn:pulumi:dev::team::p::other")


def _component(name: str) -> Iterator[AnalyzerResource]:
    """pushguard's component as the engine sends it: the component, then its account and its
    subscription, parented to it; the subscription's push account is computed from the account
    (unknown at preview) and depends on it."""
    parent = urn(TYPE_TOKEN, name)
    yield AnalyzerResource(urn=parent, type=TYPE_TOKEN, name=name, properties={})
    pusher = replace(account(f"{name}-push"), parent=parent)
    yield pusher
    sub = subscription(
        name, deps={"pushConfig": (pusher.urn,)}, pushConfig=push_config(account=UNKNOWN)
    )
    yield replace(sub, parent=parent, dependencies=(pusher.urn, "urn:pulumi:dev::team::gone"))


def test_a_stack_of_every_rule_case_gets_pulumi_policys_answer(
    clients: tuple[PolicyPackProcess, PolicyPackProcess],
) -> None:
    stack = tuple(_one_stack())
    answer = _same_answer(clients, stack, {})
    levels = {d.enforcementLevel for d in answer.diagnostics}
    assert {proto.ADVISORY, proto.MANDATORY} <= levels, _readable(answer)
    assert answer.not_applicable, "a stack without notes compares little"
    assert any("during preview" in d.message for d in answer.diagnostics), _readable(answer)
    assert not any("hidden.example" in d.message for d in answer.diagnostics)
    _same_answer(clients, stack, _levels({}, "mandatory"))
    _same_answer(clients, stack, _levels({}, "remediate"), validate=False)
    none = {rule.id: {"enforcementLevel": "disabled"} for rule in RULES}
    assert _readable(_same_answer(clients, stack, none)) == []


def test_an_undecodable_stack_gets_pulumi_policys_answer(
    clients: tuple[PolicyPackProcess, PolicyPackProcess],
) -> None:
    odd = {"4dabf18193072939515e22adb298388d": "not-a-signature-pulumi-knows"}
    stack = (subscription("orders"), subscription("odd", labels=odd))
    answer = _same_answer(clients, stack, {})
    assert any("could not decode" in d.message for d in answer.diagnostics), _readable(answer)
    none = {rule.id: {"enforcementLevel": "disabled"} for rule in RULES}
    assert _readable(_same_answer(clients, stack, none)) == []


def test_each_resource_is_deserialised_once_per_stack_request(
    clients: tuple[PolicyPackProcess, PolicyPackProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With pulumi-policy's loop each resource and its provider were converted once per enabled
    stack policy (16 times), most of the pack's ``AnalyzeStack`` time on a large stack
    (bench/RESULTS.md); now each resource once and each distinct provider once."""
    stack = tuple(_one_stack())
    ours, _ = clients
    ours.configure({})
    for resource in stack:
        ours.analyze(resource)
    calls: list[object] = []
    deserialize = stack_call.deserialize_properties

    def counted(props: Any, *args: Any) -> Any:
        calls.append(props)
        return deserialize(props, *args)

    monkeypatch.setattr(stack_call, "deserialize_properties", counted)
    monkeypatch.setattr(policy_module, "deserialize_properties", counted)
    ours.analyze_stack(stack)
    providers = {repr((r.provider_type, r.provider_urn, r.provider)) for r in stack if r.provider}
    assert len(stack) < len(calls) <= len(stack) + len(providers)


def _dump(resource: Any) -> tuple[Any, ...]:
    """What a stack policy can read of one of ``StackValidationArgs.resources``."""
    opts, provider = resource.opts, resource.provider
    timeouts = opts.custom_timeouts
    return (
        resource.resource_type,
        resource.urn,
        resource.name,
        plain(resource.props),
        (opts.protect, list(opts.ignore_changes), opts.delete_before_replace, list(opts.aliases)),
        (timeouts.create_seconds, timeouts.update_seconds, timeouts.delete_seconds),
        (list(opts.additional_secret_outputs), opts.parent),
        provider and (provider.resource_type, provider.urn, provider.name, plain(provider.props)),
        resource.parent and resource.parent.urn,
        [d.urn for d in resource.dependencies],
        {key: [d.urn for d in deps] for key, deps in resource.property_dependencies.items()},
    )


def test_the_policies_are_handed_what_pulumi_policy_hands_them(
    clients: tuple[PolicyPackProcess, PolicyPackProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each stack policy gets the same resources (properties, options, provider, parent,
    dependencies), config and stack tags from both loops, in the same order."""
    handed: list[tuple[Any, ...]] = []

    def recording(kind: type[Any]) -> Any:
        validate = kind.validate

        def recorded(self: Any, args: Any, report_violation: Any) -> Any:
            if isinstance(args, StackValidationArgs):
                resources = [_dump(r) for r in args.resources]
                handed.append((self.name, resources, dict(args.get_config()), args.stack_tags))
            return validate(self, args, report_violation)

        return recorded

    for kind in (PushguardPolicy, ProjectNumbersPolicy):
        monkeypatch.setattr(kind, "validate", recording(kind))
    stack = tuple(_one_stack())
    seen = []
    for client in clients:
        client.stub.ConfigureStack(proto.AnalyzerStackConfigureRequest(tags={"team": "orders"}))
        _answer(client, stack, _levels({}, "advisory"))
        seen.append(handed[:])
        handed.clear()
    ours, theirs = seen
    assert len(ours) == len(RULES[::2]) + 1  # the enabled policies and projectNumbers
    assert ours == theirs
