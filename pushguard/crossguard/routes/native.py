"""Google Cloud Native (``pulumi-google-native``) -> pulumi-gcp's wire form.

Google Cloud Native generates its resources from the Google REST discovery documents, so its
properties are the REST API's field names (https://github.com/pulumi/pulumi-google-native,
``sdk/python/pulumi_google_native/pubsub/v1/subscription.py``;
https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions):

- ``google-native:pubsub/v1:Subscription``: ``subscriptionId`` (the short name; the output
  ``name`` is ``projects/P/subscriptions/ID``), ``topic``, ``project``, ``pushConfig``
  (``pushEndpoint``, ``oidcToken.serviceAccountEmail``, ``oidcToken.audience``),
  ``deadLetterPolicy.deadLetterTopic``, ``enableExactlyOnceDelivery``: pulumi-gcp's names but for
  ``subscriptionId``;
- ``google-native:iam/v1:ServiceAccount`` (``accountId``, ``project``, output ``email``),
  ``google-native:run/v2:Service`` (``serviceId``, ``location``, output ``uri``),
  ``google-native:pubsub/v1:Topic`` (``topicId``);
- the IAM resources ``...IamMember`` (``name`` of the resource, ``member``, ``role``,
  ``condition``), ``...IamBinding`` (``members``) and ``...IamPolicy`` (``bindings``), where
  ``name`` is the REST name of what is granted on: ``projects/P/serviceAccounts/EMAIL``,
  ``projects/P`` (``cloudresourcemanager/v3:ProjectIamMember``),
  ``projects/P/locations/L/services/S``, ``projects/P/topics/T``...

The project: the resource's ``project``, else the provider's (``google-native:project``, else
``GOOGLE_PROJECT``, ``GOOGLE_CLOUD_PROJECT``, ``GCLOUD_PROJECT``, ``CLOUDSDK_CORE_PROJECT``:
``provider/pkg/provider/provider.go``, ``Configure``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pushguard.crossguard.graph import ACCOUNT, FUNCTION_V1, RUN_V2, TOPIC
from pushguard.crossguard.resources import SUBSCRIPTION_TYPE, WireResource
from pushguard.crossguard.routes.names import PUSH_CONFIG, keys_of, misspelt
from pushguard.crossguard.wire import get_str, holds_unknown
from pushguard.state.subscriptions import NATIVE_SUBSCRIPTION

SUBSCRIPTION = NATIVE_SUBSCRIPTION

# Native type -> (pulumi-gcp type, native property renamed to pulumi-gcp's name).
_PLAIN: Mapping[str, tuple[str, Mapping[str, str]]] = {
    SUBSCRIPTION: (SUBSCRIPTION_TYPE, {"subscriptionId": "name"}),
    "google-native:pubsub/v1:Topic": (TOPIC, {"topicId": "name"}),
    "google-native:iam/v1:ServiceAccount": (ACCOUNT, {}),
    "google-native:run/v2:Service": (RUN_V2, {"serviceId": "name"}),
    "google-native:cloudfunctions/v1:Function": (FUNCTION_V1, {}),
}

# Native IAM type stem -> (pulumi-gcp IAM type with {k} for Member/Binding/Policy, target prop).
_IAM: Mapping[str, tuple[str, str]] = {
    "google-native:iam/v1:ServiceAccountIam": (
        "gcp:serviceaccount/iAM{k}:IAM{k}",
        "serviceAccountId",
    ),
    "google-native:cloudresourcemanager/v3:ProjectIam": ("gcp:projects/iAM{k}:IAM{k}", "project"),
    "google-native:cloudresourcemanager/v1:ProjectIam": ("gcp:projects/iAM{k}:IAM{k}", "project"),
    "google-native:run/v2:ServiceIam": ("gcp:cloudrunv2/serviceIam{k}:ServiceIam{k}", "name"),
    "google-native:run/v1:ServiceIam": ("gcp:cloudrun/iam{k}:Iam{k}", "service"),
    "google-native:cloudfunctions/v1:FunctionIam": (
        "gcp:cloudfunctions/functionIam{k}:FunctionIam{k}",
        "cloudFunction",
    ),
    "google-native:pubsub/v1:TopicIam": ("gcp:pubsub/topicIAM{k}:TopicIAM{k}", "topic"),
    "google-native:pubsub/v1:SubscriptionIam": (
        "gcp:pubsub/subscriptionIAM{k}:SubscriptionIAM{k}",
        "subscription",
    ),
}

_KINDS = ("Member", "Binding", "Policy")

TYPES: frozenset[str] = frozenset(_PLAIN) | frozenset(
    f"{stem}{kind}" for stem in _IAM for kind in _KINDS
)
"""Every Google Cloud Native type this adapter maps."""


def _renamed(resource: WireResource, names: Mapping[str, str]) -> tuple[dict[str, Any], Any]:
    """Props and property dependencies with each native key of ``names`` under its pulumi-gcp
    name; a short name absent from the props (state of a resource read back) is taken from the
    output REST name's last segment (``projects/P/subscriptions/ID`` -> ``ID``)."""
    props = {k: v for k, v in resource.props.items() if k not in names}
    for native, gcp in names.items():
        short = resource.props.get(native)
        if short is not None:
            props[gcp] = short
            continue
        full = get_str(resource.props, gcp) if gcp in resource.props else None
        if isinstance(full, str):
            props[gcp] = full.rsplit("/", 1)[-1]
    deps = {names.get(k, k): v for k, v in resource.property_dependencies.items()}
    return props, deps


_SUBSCRIPTION_SCHEMA = {
    "pushConfig": PUSH_CONFIG,
    "subscriptionId": None,
    "project": None,
    "topic": None,
    "enableExactlyOnceDelivery": None,
    "deadLetterPolicy": keys_of("deadLetterTopic"),
}
"""The subscription's properties the rules read, by their Google Cloud Native names."""
_DROPS = (
    "Google Cloud Native sends only its schema's (the REST API's camelCase) names to the API "
    "and does not rename other keys"
)


def to_gcp(resource: WireResource) -> WireResource:
    """``resource`` (a type of :data:`TYPES`) in pulumi-gcp's type and property names.

    Raises:
        WireShapeError: a property has a shape the provider would reject.
        SpellingError: a subscription spells a property the rules read otherwise than the
            schema (``push_config``), which google-native does not send.
    """
    if resource.type == SUBSCRIPTION:
        misspelt(resource.props, _SUBSCRIPTION_SCHEMA, "", _DROPS)
    if resource.type in _PLAIN:
        gcp, names = _PLAIN[resource.type]
        props, deps = _renamed(resource, names)
        return replace(resource, type=gcp, props=props, property_dependencies=deps)
    stem, kind = next((s, k) for s in _IAM for k in _KINDS if resource.type == f"{s}{k}")
    gcp, target = _IAM[stem]
    props = {target if k == "name" else k: v for k, v in resource.props.items()}
    deps = {target if k == "name" else k: v for k, v in resource.property_dependencies.items()}
    if kind == "Policy":
        props["policyData"] = _policy_data(resource.props.get("bindings"))
    return replace(resource, type=gcp.format(k=kind), props=props, property_dependencies=deps)


def _policy_data(bindings: Any) -> Any:
    """An ``...IamPolicy``'s ``bindings`` as pulumi-gcp's ``policyData`` JSON; unknown (``None``:
    no binding is read) while any part of them is."""
    if bindings is None or holds_unknown(json.dumps(bindings, default=str)):
        return None
    return json.dumps({"bindings": bindings}, sort_keys=True)
