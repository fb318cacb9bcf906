"""The rule-independent part of a stack check, shared by every policy of one ``AnalyzeStack``
request (cached in the request's scope): each subscription and Eventarc trigger with its facts
resolved through the stack's graph, and what no rule can run on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pushguard.crossguard.facts import Resolution, subscription_facts
from pushguard.crossguard.graph import StackGraph
from pushguard.crossguard.numbers import declared_numbers, numbers_for
from pushguard.crossguard.resources import SUBSCRIPTION_TYPE, WireResource
from pushguard.crossguard.routes import SubscriptionType, canonical_stack, unmapped, unmapped_iam
from pushguard.crossguard.routes.eventarc import TRIGGER
from pushguard.crossguard.routes.shaped import PushShaped, push_shaped
from pushguard.crossguard.scope import current_scope
from pushguard.crossguard.triggers import trigger_facts
from pushguard.crossguard.wire import WireShapeError
from pushguard.policy.settings import PackSettings


@dataclass(frozen=True)
class StackAnalysis:
    """The rule-independent part of a stack check: each readable subscription and Eventarc
    trigger with its facts resolved through the stack's graph (every route's resources in
    pulumi-gcp's form), and each resource of a type known to create a subscription that
    pushguard does not map."""

    subscriptions: list[tuple[WireResource, Resolution]]
    unmapped: list[tuple[WireResource, SubscriptionType]]
    unmapped_grants: list[str]
    """The IAM resources whose grants are not read (:func:`~pushguard.crossguard.routes.
    unmapped_iam`), each described once."""
    unreadable: list[tuple[WireResource, WireShapeError]]
    """Subscriptions whose stack-side properties (the outputs, in ``pushguard analyze`` and
    ``AnalyzeStack``) have a shape the provider would never return: each is a diagnostic of
    every policy, never a pass (issue 27)."""
    shaped: list[tuple[WireResource, PushShaped]]
    """Resources of unmapped types whose outputs are shaped like a push configuration: each is
    "cannot be checked" (:mod:`pushguard.crossguard.routes.shaped`)."""

    @classmethod
    def of(cls, policy_resources: list[Any], settings: PackSettings) -> StackAnalysis:
        wire = [WireResource.from_policy_resource(r) for r in policy_resources]
        declared = declared_numbers(wire)
        skipped = [(r, known) for r in wire if (known := unmapped(r.type)) is not None]
        shaped = [(r, found) for r in wire if (found := _shaped(r))]
        grants = sorted({f"{why} {r.name!r}" for r in wire if (why := unmapped_iam(r))})
        resources = canonical_stack(wire)
        graph = StackGraph.build(resources, settings)
        subscriptions = []
        unreadable = []
        for sub in resources:
            read = {SUBSCRIPTION_TYPE: subscription_facts, TRIGGER: trigger_facts}.get(sub.type)
            if read is None:
                continue
            try:
                full = read(sub, settings.with_numbers(numbers_for(sub, declared)), graph)
            except WireShapeError as error:
                # Worded as the resource half words it, so the server drops the repeat when
                # the inputs have the same problem.
                unreadable.append((sub, error))
                continue
            subscriptions.append((sub, full))
        return cls(subscriptions, skipped, grants, unreadable, shaped)


def _shaped(resource: WireResource) -> PushShaped | None:
    """:func:`push_shaped` of a stack resource; one without a provider is a component."""
    custom = resource.provider_props is not None
    return push_shaped(resource.type, resource.name, resource.props, custom=custom)


def stack_analysis(policy_resources: list[Any], settings: PackSettings) -> StackAnalysis:
    cache = current_scope().stack_cache
    if cache is None:
        return StackAnalysis.of(policy_resources, settings)
    key = settings.model_dump_json()
    analysis = cache.get(key)
    if not isinstance(analysis, StackAnalysis):
        analysis = cache[key] = StackAnalysis.of(policy_resources, settings)
    return analysis
