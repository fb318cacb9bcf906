"""``AnalyzeStack`` for a pack of pushguard's own policies: each resource deserialised once.

pulumi-policy's servicer (``_PolicyAnalyzerServicer.AnalyzeStack`` in ``pulumi_policy/policy.py``
of pulumi-policy 1.21.0, the version the pack pins; repository pulumi/pulumi-policy, path
``sdk/python/lib/pulumi_policy/policy.py``) builds the ``PolicyResource`` list of the request
again for every enabled stack policy: ``json_format.MessageToDict``, ``deserialize_properties``,
``unknown_checking_proxy`` and the provider's, per resource and per policy. With pushguard's 16
stack policies that was most of the pack's ``AnalyzeStack`` time (bench/RESULTS.md).

:func:`analyze_stack` is the same loop (same order, levels, config, ``UnknownValueError`` and
not-applicable answers, same exceptions out of it) with the list built once, the first time an
enabled stack policy needs it, and shared by every policy of the request. Sharing is sound only
for policies that never change what they are handed: the server uses it when every policy is
pushguard's own (:class:`~pushguard.crossguard.policies.PushguardPolicy` reads the properties
through :func:`~pushguard.crossguard.wire.plain`, which copies them;
:class:`~pushguard.crossguard.policies.ProjectNumbersPolicy` reads nothing), and pulumi-policy's
own loop otherwise. tests/crossguard/test_stack_call.py sends the same requests through both and
pins the source of pulumi-policy's loop, so an upgrade that changes it fails there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from inspect import isawaitable
from typing import Any

from google.protobuf import json_format
from pulumi.runtime import proto
from pulumi_policy import EnforcementLevel, PolicyResource, StackValidationArgs
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.policy import (
    Policy,
    StackValidationPolicy,
    _NotApplicableError,
    _PolicyAnalyzerServicer,
)
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy


def analyze_stack(
    servicer: _PolicyAnalyzerServicer,
    request: Any,
    policies: list[Policy],
    stack_tags: Mapping[str, str],
    pack: tuple[str, str],
) -> Any:
    """The ``AnalyzeResponse`` pulumi-policy's ``AnalyzeStack`` gives for ``request`` with
    ``policies`` (the servicer's, in its order), ``stack_tags`` (from ``ConfigureStack``) and
    ``pack`` (name, version): each enabled stack policy's diagnostics, in policy order.

    Raises what pulumi-policy's loop raises: an error decoding the resources (an unrecognised
    signature: ``AssertionError``; nesting deeper than the recursion limit: ``RecursionError``)
    when an enabled stack policy first needs them, and whatever a policy's ``validate`` raises
    other than ``UnknownValueError`` and pulumi-policy's not-applicable error.
    """
    servicer._configure_runtime_settings()  # type: ignore[no-untyped-call]
    response = proto.AnalyzeResponse()
    resources: list[PolicyResource] | None = None
    for policy in policies:
        level = servicer._get_enforcement_level(policy)
        if level == EnforcementLevel.DISABLED or not isinstance(policy, StackValidationPolicy):
            continue
        if level == EnforcementLevel.REMEDIATE:
            level = EnforcementLevel.MANDATORY  # as pulumi-policy: a stack is not remediated
        report_violation = servicer._create_report_violation(
            response, policy.name, policy.description, level, policy.severity
        )
        if resources is None:
            resources = policy_resources(servicer, request)
        config = servicer._get_policy_config(policy.name)
        args = StackValidationArgs(list(resources), config, stack_tags)
        try:
            result = policy.validate(args, report_violation)
            if isawaitable(result):
                loop = asyncio.new_event_loop()
                loop.run_until_complete(asyncio.Task(result, loop=loop))  # type: ignore[arg-type]
                loop.close()
        except UnknownValueError as error:
            response.diagnostics.append(_cannot_run(servicer, policy, pack, error.message))
        except _NotApplicableError as error:
            response.not_applicable.append(
                proto.PolicyNotApplicable(policy_name=policy.name, reason=error.reason or "")
            )
    return response


def _cannot_run(
    servicer: _PolicyAnalyzerServicer, policy: Policy, pack: tuple[str, str], message: str
) -> Any:
    """pulumi-policy's diagnostic for a policy that raised ``UnknownValueError``: advisory, on
    no URN, worded ``can't run policy 'P' from policy pack 'PACK@vV' during preview: MESSAGE``."""
    name, version = pack
    return proto.AnalyzeDiagnostic(
        policyName=policy.name,
        policyPackName=name,
        policyPackVersion=version,
        message=(
            f"can't run policy '{policy.name}' from policy pack '{name}@v{version}' during "
            f"preview: {message}"
        ),
        urn="",
        description=policy.description,
        enforcementLevel=servicer._map_enforcement_level(EnforcementLevel.ADVISORY),
    )


def policy_resources(servicer: _PolicyAnalyzerServicer, request: Any) -> list[PolicyResource]:
    """The request's resources as pulumi-policy hands them to a stack policy: properties
    deserialised behind its unknown-checking proxy, options and provider as its servicer reads
    them (one provider object for the resources whose provider is the same message), then parent,
    dependencies and property dependencies linked to the resource objects (a URN the request does
    not hold is left out, as pulumi-policy does)."""
    made: list[tuple[PolicyResource, Any]] = []
    providers: dict[bytes | None, Any] = {}
    for wire in request.resources:
        props = unknown_checking_proxy(
            deserialize_properties(json_format.MessageToDict(wire.properties))
        )
        opts = servicer._get_resource_options(wire)
        # Most resources share one or two providers: each distinct one is read once.
        same = (
            wire.provider.SerializeToString(deterministic=True)
            if wire.HasField("provider")
            else None
        )
        if same not in providers:
            providers[same] = servicer._get_provider_resource(wire)
        provider = providers[same]
        resource = PolicyResource(
            wire.type, props, wire.urn, wire.name, opts, provider, None, [], {}
        )
        made.append((resource, wire))
    by_urn = {resource.urn: resource for resource, _ in made}
    for resource, wire in made:
        if wire.parent in by_urn:
            resource.parent = by_urn[wire.parent]
        resource.dependencies.extend(by_urn[urn] for urn in wire.dependencies if urn in by_urn)
        for key, urns in wire.propertyDependencies.items():
            resource.property_dependencies[key] = [by_urn[u] for u in urns.urns if u in by_urn]
    return [resource for resource, _ in made]
