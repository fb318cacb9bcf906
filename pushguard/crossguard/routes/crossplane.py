"""Crossplane's ``Subscription`` (provider-upjet-gcp) through pulumi-kubernetes -> pulumi-gcp's
wire form.

pulumi-kubernetes registers a Kubernetes object of kind ``KIND`` in ``GROUP/VERSION`` as
``kubernetes:GROUP/VERSION:KIND`` (a ``CustomResource`` and a ``crd2pulumi`` class alike), with
the object as its properties. The schemas mapped are the CRDs of
https://github.com/crossplane-contrib/provider-upjet-gcp (``package/crds/``):

- ``pubsub.gcp.upbound.io_subscriptions.yaml``: cluster-scoped ``Subscription``, v1beta1 (every
  nested block a list: ``pushConfig: [{pushEndpoint, oidcToken: [{serviceAccountEmail,
  audience}], noWrapper: [{writeMetadata}], attributes}]``, ``deadLetterPolicy: [...]``) and
  v1beta2 (the same blocks as objects; storage version since v2.6.0, v1beta1 dropped in v3.0.0);
- ``pubsub.gcp.m.upbound.io_subscriptions.yaml``: the namespaced group of Crossplane v2, v1beta1,
  blocks as objects, references with a ``namespace``.

In each, ``spec.forProvider`` holds the Terraform ``google_pubsub_subscription`` arguments under
their camelCase names (``pushConfig``, ``deadLetterPolicy.deadLetterTopic``, ``project``,
``topic``, ``enableExactlyOnceDelivery``: pulumi-gcp's names) and ``spec.initProvider`` the same
fields, used at creation only: Upjet creates the subscription with ``initProvider`` merged into
``forProvider`` (``GetMergedParameters`` in
``apis/cluster/pubsub/v1beta2/zz_subscription_terraformed.go``:
``mergo.Merge(&params, initParams, mergo.WithSliceDeepCopy)`` without overwrite, so a field
``forProvider`` sets wins, one it leaves empty is filled from ``initProvider``, objects merge field
by field and lists element by element; https://github.com/darccio/mergo ``merge.go``). The
pack checks that merge (:func:`merged`): what the subscription is created with.

- The name is the ``crossplane.io/external-name`` annotation, else ``metadata.name``
  (``config/externalname.go``: ``google_pubsub_subscription`` is
  ``TemplatedStringAsIdentifier("name", ...)``, its ``name`` argument the external name; the
  controller's ``managed.NewNameAsExternalName`` sets an empty annotation to
  ``metadata.name``: ``internal/controller/cluster/pubsub/subscription/zz_controller.go`` and
  crossplane-runtime ``pkg/reconciler/managed/api.go``).
- The project is ``forProvider.project`` (merged), else the project of the ``ProviderConfig``
  the object names (``spec.providerConfigRef``, ``default`` when unset), which lives in the
  cluster and is not known offline: the rules that need the project are then listed as not
  checked with that reason, and the policy config's ``defaultProject`` does not stand in for it.
- ``topic`` is a value, else resolved by Crossplane from ``topicRef``/``topicSelector`` (the
  referenced ``Topic``'s external name); ``deadLetterPolicy.deadLetterTopic`` a value, else from
  ``deadLetterTopicRef``/``deadLetterTopicSelector`` (the ``Topic``'s ``status.atProvider.id``;
  ``apis/cluster/pubsub/v1beta2/zz_generated.resolvers.go``). A reference resolves only when the
  value is empty, unless its ``policy.resolve`` is ``Always``; a value resolved in the cluster
  is unknown here.
- ``spec.managementPolicies`` is not read: an object that only observes still declares its push
  config, which is checked as declared.

A key of these schemas spelt otherwise (``push_config``, ``for_provider``) is refused
(:func:`~pushguard.crossguard.routes.names.misspelt`): the API server prunes a field a structural
schema does not declare. IAM through Crossplane (``*IAMMember`` kinds) is not mapped:
:func:`unmapped_iam` names those on kinds the grant rules read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from pushguard.crossguard.resources import SUBSCRIPTION_TYPE, WireResource
from pushguard.crossguard.routes.names import PUSH_CONFIG, keys_of, misspelt
from pushguard.crossguard.wire import UNKNOWN, WireShapeError, get, is_unknown
from pushguard.state.subscriptions import CROSSPLANE_SUBSCRIPTIONS, EXTERNAL_NAME

TYPES: frozenset[str] = frozenset(CROSSPLANE_SUBSCRIPTIONS)
"""Every Crossplane kind this adapter maps (the subscriptions)."""

GROUPS = ("gcp.upbound.io", "gcp.m.upbound.io")
"""The API group suffixes of provider-upjet-gcp (cluster-scoped, namespaced)."""

_REFS = {"topicRef": None, "topicSelector": None}
_PARAMS: dict[str, Any] = {
    "pushConfig": PUSH_CONFIG,
    "project": None,
    "topic": None,
    **_REFS,
    "enableExactlyOnceDelivery": None,
    "deadLetterPolicy": keys_of(
        "deadLetterTopic", "deadLetterTopicRef", "deadLetterTopicSelector", "maxDeliveryAttempts"
    ),
}
_SCHEMA: dict[str, Any] = {
    "metadata": keys_of("name", "namespace", "annotations"),
    "spec": {"forProvider": _PARAMS, "initProvider": _PARAMS, "providerConfigRef": None},
}
"""A ``Subscription``'s fields the rules read, by the CRDs' names."""
_PRUNED = (
    "the Kubernetes API server prunes a field the Crossplane Subscription CRD does not declare, "
    "or rejects it under strict field validation"
)


def _empty(value: Any) -> bool:
    """``mergo``'s ``isEmptyValue`` on JSON: absent, ``""``, ``false``, zero, ``{}``, ``[]``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value == 0
    return value is None or (isinstance(value, str | Mapping | list) and len(value) == 0)


def merged(for_provider: Any, init_provider: Any) -> Any:
    """``spec.initProvider`` merged into ``spec.forProvider`` as Upjet merges them at creation
    (see the module): :data:`UNKNOWN` when either is not known yet (which fields win is not
    known either); otherwise ``forProvider`` with each field it leaves absent (or empty, where
    ``initProvider`` sets it) taken from ``initProvider``, objects merged field by field and
    lists element by element."""
    if is_unknown(for_provider) or is_unknown(init_provider):
        return UNKNOWN
    if not isinstance(init_provider, Mapping):
        return for_provider
    if not isinstance(for_provider, Mapping):
        return init_provider if for_provider is None else for_provider
    out = dict(for_provider)
    for key, src in init_provider.items():
        if src is None:
            continue
        dst = out.get(key)
        if isinstance(dst, Mapping) and isinstance(src, Mapping) and dst:
            out[key] = merged(dst, src)
        elif isinstance(dst, list) and isinstance(src, list) and dst:
            out[key] = [
                merged(d, s) if isinstance(d, Mapping) and isinstance(s, Mapping) else d
                for d, s in zip(dst, src, strict=False)
            ] + dst[len(src) :]
        elif key not in out or _empty(dst):
            out[key] = src
    return out


def _one(value: Any) -> Any:
    """A block as an object: a one-element list (v1beta1) is its element."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def _resolved(value: Any, ref: Any, selector: Any) -> Any:
    """A field Crossplane may resolve from a reference: the value, unless it is empty and a
    reference or selector is set, or the reference resolves ``Always`` (then unknown)."""
    always = isinstance(ref, Mapping) and get(ref, "policy.resolve") == "Always"
    referenced = isinstance(ref, Mapping) or isinstance(selector, Mapping)
    if always or (referenced and _empty(value)):
        return UNKNOWN_STRING_VALUE
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def name_of(props: Mapping[str, Any]) -> Any:
    """The subscription ID: the ``crossplane.io/external-name`` annotation, else
    ``metadata.name`` (:data:`UNKNOWN` when not known yet)."""
    annotations = get(props, "metadata.annotations")
    if annotations is UNKNOWN:
        return UNKNOWN
    own = annotations.get(EXTERNAL_NAME) if isinstance(annotations, Mapping) else None
    if is_unknown(own):
        return UNKNOWN
    return _text(own) or get(props, "metadata.name")


def no_project(resource: WireResource) -> str:
    """Why the project of ``resource`` (no ``forProvider.project``) is not known offline."""
    ref = get(resource.props, "spec.providerConfigRef.name")
    config = ref if isinstance(ref, str) and ref else "default"
    return (
        f"the Crossplane project of {resource.name!r} is not known offline: it sets no "
        f"spec.forProvider.project, so Crossplane uses the project of its ProviderConfig "
        f"{config!r}, which is in the cluster; set spec.forProvider.project"
    )


def to_gcp(resource: WireResource) -> WireResource:
    """``resource`` (a type of :data:`TYPES`) as a pulumi-gcp subscription.

    Raises:
        WireShapeError: a property has a shape the API server would reject.
        SpellingError: a field the rules read is spelt otherwise than the CRD.
    """
    props = resource.props
    misspelt(props, _SCHEMA, "", _PRUNED)
    params = merged(get(props, "spec.forProvider"), get(props, "spec.initProvider"))
    if params is not None and params is not UNKNOWN and not isinstance(params, Mapping):
        raise WireShapeError("spec.forProvider", "an object", params)
    read = params if isinstance(params, Mapping) else {}
    known = params is not UNKNOWN
    canonical: dict[str, Any] = {"name": name_of(props)}
    for key in ("pushConfig", "enableExactlyOnceDelivery", "project"):
        canonical[key] = read.get(key) if known else UNKNOWN
    if known and _empty(canonical["project"]):
        canonical["project"] = None
    canonical["topic"] = (
        _resolved(read.get("topic"), read.get("topicRef"), read.get("topicSelector"))
        if known
        else UNKNOWN
    )
    dead = _one(read.get("deadLetterPolicy"))
    if is_unknown(dead):
        canonical["deadLetterPolicy"] = UNKNOWN
    elif isinstance(dead, Mapping):
        topic = _resolved(
            dead.get("deadLetterTopic"),
            dead.get("deadLetterTopicRef"),
            dead.get("deadLetterTopicSelector"),
        )
        kept = {k: v for k, v in dead.items() if not k.startswith("deadLetterTopic")}
        canonical["deadLetterPolicy"] = {**kept, "deadLetterTopic": topic}
    spec = resource.depends_through("spec")
    metadata = resource.depends_through("metadata")
    deps: dict[str, tuple[str, ...]] = {}
    if spec:
        deps.update(dict.fromkeys(("pushConfig", "deadLetterPolicy", "project", "topic"), spec))
        deps["enableExactlyOnceDelivery"] = spec
    if metadata:
        deps["name"] = metadata
    why = no_project(resource) if canonical["project"] is None else None
    return replace(
        resource,
        type=SUBSCRIPTION_TYPE,
        props={k: v for k, v in canonical.items() if v is not None},
        property_dependencies=deps,
        no_project=why,
        no_default_project=True,
    )


_GRANTS = ("iammember", "iambinding", "iampolicy")
_READ_ON = (
    "serviceaccount",
    "project",
    "cloudrun",
    "function",
    "pubsub",
    "organization",
    "folder",
)
"""What the grant rules read grants on, as found (lower case) in a Crossplane IAM type token."""


def unmapped_iam(resource: WireResource) -> str | None:
    """``"KIND (GROUP)"`` for a provider-upjet-gcp IAM object (``ProjectIAMMember``,
    ``ServiceAccountIAMMember``, ``cloudrun``'s ``ServiceIAMMember``, ``TopicIAMMember``,
    ``FolderIAMMember``...) on a kind the grant rules read, which no adapter maps; ``None``
    otherwise."""
    package, _, rest = resource.type.partition(":")
    api, _, kind = rest.rpartition(":")
    group = api.split("/", 1)[0]
    if package != "kubernetes" or not group.endswith(GROUPS):
        return None
    token = resource.type.lower()
    if kind.lower().endswith(_GRANTS) and any(k in token for k in _READ_ON):
        return f"{kind} ({group})"
    return None
