"""Config Connector resources through pulumi-kubernetes -> pulumi-gcp's wire form.

pulumi-kubernetes registers a Kubernetes object of kind ``KIND`` in ``GROUP/VERSION`` as
``kubernetes:GROUP/VERSION:KIND`` (a ``CustomResource`` and a ``crd2pulumi`` class alike) with
the object as its properties: ``apiVersion``, ``kind``, ``metadata``, ``spec`` (and, read back,
``status``). The Config Connector schemas mapped (the CRDs in
https://github.com/GoogleCloudPlatform/k8s-config-connector, ``config/crds/resources``):

- ``PubSubSubscription`` (``pubsub.cnrm.cloud.google.com/v1beta1``): ``spec.pushConfig``
  (``pushEndpoint``, ``oidcToken.serviceAccountEmail``, ``oidcToken.audience``: pulumi-gcp's
  names), ``spec.topicRef`` and ``spec.deadLetterPolicy.deadLetterTopicRef`` (``name`` of a
  ``PubSubTopic`` in the cluster, or ``external``: ``projects/P/topics/T``),
  ``spec.enableExactlyOnceDelivery``, ``spec.resourceID`` (else ``metadata.name``);
- ``IAMServiceAccount`` (``spec.resourceID`` else ``metadata.name`` is the account ID;
  ``status.email``), ``RunService`` (``spec.projectRef``, ``spec.location``, ``status.uri``),
  ``PubSubTopic``;
- ``IAMPolicyMember`` (``spec.member`` or ``spec.memberFrom.serviceAccountRef``, ``spec.role``,
  ``spec.resourceRef``: ``kind`` and ``name`` or ``external``, ``spec.condition``),
  ``IAMPartialPolicy`` (non-authoritative ``spec.bindings[]``: ``role``, ``members[]`` of
  ``member``/``memberFrom``) and ``IAMPolicy`` (authoritative ``spec.bindings[]``).

The project (https://cloud.google.com/config-connector/docs/how-to/organizing-resources/project-scoped-resources):
``spec.projectRef`` where the kind has one, else the resource's
``cnrm.cloud.google.com/project-id`` annotation, else its namespace's annotation, else the
namespace's name. The namespace is ``metadata.namespace``, else the Kubernetes provider's
``namespace``, else its kubeconfig context's, else ``default`` (:func:`placement`; the ambient
kubeconfig of a provider without one is not known offline); its annotation is known only when
the ``Namespace`` is declared in the same stack. Otherwise the project is not known offline and
the rules that need it are listed as not checked with that reason
(:attr:`WireResource.no_project`), never passed; the policy config's ``defaultProject`` stands in
only for an object whose namespace nobody chose (:attr:`WireResource.no_default_project`).

A ``PubSubSubscriptionPatch`` (:data:`SUBSCRIPTION_PATCH`) is read as the subscription it leaves
behind (:func:`_patch`). A key of a ``PubSubSubscription`` spelt otherwise than the CRD
(``push_config``) is refused (:func:`~pushguard.crossguard.routes.names.misspelt`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import yaml
from pulumi_policy.proxy import (
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
)

from pushguard.crossguard.graph import ACCOUNT, RUN_V2, TOPIC
from pushguard.crossguard.resources import SUBSCRIPTION_TYPE, WireResource
from pushguard.crossguard.routes.names import PUSH_CONFIG, keys_of, misspelt
from pushguard.crossguard.wire import UNKNOWN, WireShapeError, get, get_str, holds_unknown
from pushguard.state.subscriptions import KCC_SUBSCRIPTION
from pushguard.state.subscriptions import PROJECT_ANNOTATION as _PROJECT_ANNOTATION

PROJECT_ANNOTATION = _PROJECT_ANNOTATION
NAMESPACE = "kubernetes:core/v1:Namespace"
SUBSCRIPTION = KCC_SUBSCRIPTION
SUBSCRIPTION_PATCH = f"{SUBSCRIPTION}Patch"
"""A patch of an existing ``PubSubSubscription`` (pulumi-kubernetes' ``CustomResourcePatch``,
server-side apply: it sets only the fields it names; https://www.pulumi.com/registry/packages/kubernetes/how-to-guides/managing-resources-with-server-side-apply/)."""
ACCOUNT_KIND = "kubernetes:iam.cnrm.cloud.google.com/v1beta1:IAMServiceAccount"
RUN_KIND = "kubernetes:run.cnrm.cloud.google.com/v1beta1:RunService"
TOPIC_KIND = "kubernetes:pubsub.cnrm.cloud.google.com/v1beta1:PubSubTopic"
POLICY_MEMBER = "kubernetes:iam.cnrm.cloud.google.com/v1beta1:IAMPolicyMember"
PARTIAL_POLICY = "kubernetes:iam.cnrm.cloud.google.com/v1beta1:IAMPartialPolicy"
POLICY = "kubernetes:iam.cnrm.cloud.google.com/v1beta1:IAMPolicy"

TYPES: frozenset[str] = frozenset(
    {
        SUBSCRIPTION,
        SUBSCRIPTION_PATCH,
        ACCOUNT_KIND,
        RUN_KIND,
        TOPIC_KIND,
        POLICY_MEMBER,
        PARTIAL_POLICY,
        POLICY,
    }
)
"""Every Config Connector kind this adapter maps."""

# resourceRef.kind -> (pulumi-gcp IAM type with {k}, its target property).
_TARGETS: Mapping[str, tuple[str, str]] = {
    "IAMServiceAccount": ("gcp:serviceaccount/iAM{k}:IAM{k}", "serviceAccountId"),
    "Project": ("gcp:projects/iAM{k}:IAM{k}", "project"),
    "RunService": ("gcp:cloudrunv2/serviceIam{k}:ServiceIam{k}", "name"),
    "CloudFunctionsFunction": ("gcp:cloudfunctions/functionIam{k}:FunctionIam{k}", "cloudFunction"),
    "PubSubTopic": ("gcp:pubsub/topicIAM{k}:TopicIAM{k}", "topic"),
    "PubSubSubscription": ("gcp:pubsub/subscriptionIAM{k}:SubscriptionIAM{k}", "subscription"),
}
_KIND_TYPES = {
    "IAMServiceAccount": ACCOUNT_KIND,
    "RunService": RUN_KIND,
    "PubSubTopic": TOPIC_KIND,
    "PubSubSubscription": SUBSCRIPTION,
}


_SUBSCRIPTION_SCHEMA: dict[str, Any] = {
    "metadata": keys_of("name", "namespace", "annotations"),
    "spec": {
        "pushConfig": PUSH_CONFIG,
        "topicRef": None,
        "projectRef": None,
        "resourceID": None,
        "enableExactlyOnceDelivery": None,
        "deadLetterPolicy": keys_of("deadLetterTopicRef"),
    },
}
"""A ``PubSubSubscription``'s fields the rules read, by the CRD's names."""
_PRUNED = (
    "the Kubernetes API server prunes a field the PubSubSubscription CRD does not declare, or "
    "rejects it under strict field validation"
)


@dataclass
class KccIndex:
    """The Config Connector objects and Namespaces of one stack, by ``(type, namespace, name)``
    and namespace name, to resolve references and namespace defaults."""

    objects: dict[tuple[str, str, str], WireResource] = field(default_factory=dict)
    namespaces: dict[str, WireResource] = field(default_factory=dict)

    @classmethod
    def build(cls, resources: Iterable[WireResource]) -> KccIndex:
        """Index ``resources`` (any types; only Namespaces and mapped kinds are kept)."""
        index = cls()
        for r in resources:
            if r.type != NAMESPACE and r.type not in TYPES:
                continue
            try:
                name = _text(get(r.props, "metadata.name"))
            except WireShapeError:
                continue  # reported where it matters, by the object's own policies
            if r.type == NAMESPACE and name:
                index.namespaces[name] = r
            elif r.type in TYPES and name:
                index.objects[(r.type, namespace_of(r), name)] = r
        return index


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class Namespace:
    """Where pulumi-kubernetes places an object: ``name`` (``None`` when not known offline, with
    ``why``), and whether the program or its provider chose it (``explicit``:
    ``metadata.namespace``, the provider's ``namespace`` or its kubeconfig's context)."""

    name: str | None
    explicit: bool
    why: str = ""


def namespace_of(resource: WireResource) -> str:
    """The object's namespace name as :func:`placement` finds it, ``default`` when it is not
    known (for indexing references by namespace only; the project never rests on this)."""
    return placement(resource).name or "default"


def placement(resource: WireResource) -> Namespace:
    """The object's namespace as pulumi-kubernetes chooses it: ``metadata.namespace``, else its
    provider's ``namespace``, else the namespace of the provider's kubeconfig context (its
    ``context``, else ``current-context``), else ``default``
    (https://www.pulumi.com/registry/packages/kubernetes/api-docs/provider/#namespace_nodejs:
    "If not specified, the namespace from the kubeconfig context is used, falling back to
    default"). A kubeconfig given as a path, or the ambient one a provider without ``kubeconfig``
    reads (``KUBECONFIG``, ``~/.kube/config``), is not known offline: the name is ``None``."""
    own = _text(get(resource.props, "metadata.namespace"))
    if own:
        return Namespace(own, True)
    provider = resource.provider_props or {}
    configured = _text(provider.get("namespace"))
    if configured:
        return Namespace(configured, True)
    kubeconfig = provider.get("kubeconfig")
    if kubeconfig is None or kubeconfig == "":
        return Namespace(
            None,
            False,
            "the object names no namespace and its kubernetes provider sets neither namespace "
            "nor kubeconfig, so the namespace is the context's of the kubeconfig the provider "
            "reads where it runs (KUBECONFIG or ~/.kube/config), not known offline",
        )
    context = _kubeconfig_namespace(kubeconfig, _text(provider.get("context")))
    if isinstance(context, Namespace):
        return context
    return Namespace(context or "default", True)


def _kubeconfig_namespace(kubeconfig: Any, context: str | None) -> str | Namespace | None:
    """The namespace of ``context`` (else ``current-context``) in a kubeconfig's text (YAML or
    JSON); a :class:`Namespace` naming why when the text cannot be read offline."""
    unread = Namespace(
        None,
        True,
        "its kubernetes provider's kubeconfig is not known offline (a path, or a value known "
        "only at deployment), so neither is the namespace of its context",
    )
    if not isinstance(kubeconfig, str) or holds_unknown(kubeconfig):
        return unread
    try:
        parsed = yaml.safe_load(kubeconfig)
    except yaml.YAMLError:
        return unread
    if not isinstance(parsed, Mapping):
        return unread  # a path: the provider reads the file where it runs
    wanted = context or parsed.get("current-context")
    contexts = parsed.get("contexts")
    for entry in contexts if isinstance(contexts, list) else []:
        if isinstance(entry, Mapping) and entry.get("name") == wanted:
            inner = entry.get("context")
            found = inner.get("namespace") if isinstance(inner, Mapping) else None
            return found if isinstance(found, str) and found else None
    return None


def _annotation(props: Mapping[str, Any]) -> Any:
    annotations = get(props, "metadata.annotations")
    if annotations is UNKNOWN:
        return UNKNOWN
    return annotations.get(PROJECT_ANNOTATION) if isinstance(annotations, Mapping) else None


def project_of(resource: WireResource, index: KccIndex | None) -> tuple[Any, str | None]:
    """``(project, why unknown)``: the project ID (or :data:`UNKNOWN`) as Config Connector
    chooses it (see the module docstring); ``None`` with the reason when it is not known
    offline."""
    ref = get(resource.props, "spec.projectRef")
    if isinstance(ref, Mapping) and ref:
        external = ref.get("external")
        if isinstance(external, str):
            return external.removeprefix("projects/"), None
        if isinstance(ref.get("name"), str):
            return ref["name"], None
    own = _annotation(resource.props)
    if own is not None:
        return own, None
    where = placement(resource)
    if where.name is None:
        return None, (
            f"the Config Connector project of {resource.name!r} is not known offline: it has no "
            f"{PROJECT_ANNOTATION} annotation and {where.why}; annotate the resource or set its "
            "namespace (metadata.namespace or the provider's namespace)"
        )
    declared = index.namespaces.get(where.name) if index else None
    if declared is not None:
        found = _annotation(declared.props)
        return (found if found is not None else where.name), None
    return None, (
        f"the Config Connector project of {resource.name!r} is not known offline: it has no "
        f"{PROJECT_ANNOTATION} annotation and its namespace {where.name!r} is not declared in "
        "this stack (Config Connector then takes the namespace's annotation, else the namespace's "
        "name); annotate the resource or declare the Namespace in the stack"
        + ("" if where.explicit else ", or set defaultProject in the policy config")
    )


def _resource_id(props: Mapping[str, Any]) -> Any:
    """``spec.resourceID``, else ``metadata.name`` (the name Config Connector creates)."""
    own = get(props, "spec.resourceID")
    return own if own is not None else get(props, "metadata.name")


def _deps(resource: WireResource, spec_props: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """pulumi-gcp property -> URNs: what ``spec`` or ``metadata`` was computed from."""
    spec = resource.depends_through("spec")
    metadata = resource.depends_through("metadata")
    deps = {p: spec for p in spec_props if spec}
    if metadata:
        deps["name"] = metadata
        deps["project"] = metadata
    return deps


def _topic_path(ref: Any, project: Any, index: KccIndex | None, namespace: str) -> Any:
    """A ``topicRef``/``deadLetterTopicRef`` as ``projects/P/topics/T``."""
    if ref is UNKNOWN:
        return UNKNOWN
    if not isinstance(ref, Mapping):
        return None
    if isinstance(ref.get("external"), str):
        return ref["external"]
    name = ref.get("name")
    if not isinstance(name, str):
        return None
    target = _referenced(index, TOPIC_KIND, ref, namespace)
    topic = _resource_id(target.props) if target is not None else name
    return f"projects/{project}/topics/{topic}" if isinstance(project, str) else topic


def _referenced(
    index: KccIndex | None, type_token: str, ref: Mapping[str, Any], namespace: str
) -> WireResource | None:
    if index is None or not isinstance(ref.get("name"), str):
        return None
    ns = ref.get("namespace")
    return index.objects.get((type_token, ns if isinstance(ns, str) else namespace, ref["name"]))


def to_gcp(resource: WireResource, index: KccIndex | None) -> list[WireResource]:
    """``resource`` (a kind of :data:`TYPES`) as pulumi-gcp resources: one for a
    subscription, account, service or topic; one IAM member per member of an ``IAMPartialPolicy``
    (their URNs suffixed ``#N``: the graph keys resources by URN), one policy for an
    ``IAMPolicy``. ``index``: the stack's objects (``None`` for one resource alone)."""
    props = resource.props
    project, why = project_of(resource, index)
    namespace = namespace_of(resource)
    # defaultProject is for an object that chooses nothing: one in a namespace the program or
    # its provider chose stays "not checked" when that namespace's project is not known.
    explicit = placement(resource).explicit
    base: dict[str, Any] = {} if project is None else {"project": project}
    if resource.type == SUBSCRIPTION_PATCH:
        misspelt(props, _SUBSCRIPTION_SCHEMA, "", _PRUNED)
        return [_patch(resource, index)]
    if resource.type == SUBSCRIPTION:
        misspelt(props, _SUBSCRIPTION_SCHEMA, "", _PRUNED)
        spec_keys = ("pushConfig", "deadLetterPolicy", "enableExactlyOnceDelivery")
        canonical = {**base, "name": _resource_id(props)}
        for key in spec_keys:
            canonical[key] = get(props, f"spec.{key}")
        canonical["topic"] = _topic_path(get(props, "spec.topicRef"), project, index, namespace)
        dead = get(props, "spec.deadLetterPolicy.deadLetterTopicRef")
        if dead is not None:
            policy = canonical.get("deadLetterPolicy")
            policy = dict(policy) if isinstance(policy, Mapping) else {}
            policy["deadLetterTopic"] = _topic_path(dead, project, index, namespace)
            canonical["deadLetterPolicy"] = policy
        deps = _deps(resource, (*spec_keys, "topic"))
        return [_as(resource, SUBSCRIPTION_TYPE, canonical, deps, why, placed=explicit)]
    if resource.type == ACCOUNT_KIND:
        canonical = {**base, "accountId": _resource_id(props), "email": get(props, "status.email")}
        return [_as(resource, ACCOUNT, canonical, _deps(resource, ("accountId",)), why)]
    if resource.type == RUN_KIND:
        canonical = {
            **base,
            "name": _resource_id(props),
            "location": get(props, "spec.location"),
            "uri": get(props, "status.uri"),
        }
        return [_as(resource, RUN_V2, canonical, _deps(resource, ("location",)), why)]
    if resource.type == TOPIC_KIND:
        return [_as(resource, TOPIC, {**base, "name": _resource_id(props)}, {}, why)]
    return _iam(resource, index, namespace)


PATCH_UNSET = (
    "is not set by this patch (a server-side apply of an existing PubSubSubscription), so it "
    "keeps the existing object's value, which is not known offline"
)
"""Why a field a patch does not set is unknown (:attr:`WireResource.unknown_reason`)."""


def _patch(resource: WireResource, index: KccIndex | None) -> WireResource:
    """A ``PubSubSubscriptionPatch`` as the subscription it leaves behind: the fields it sets
    are read like a ``PubSubSubscription``'s; every field the rules read that it does not set
    (inside ``pushConfig`` too) is unknown, since it keeps the existing object's value (but the
    dead-letter policy, read only by the advisory grant rule, which is left out); the
    project is the patch's annotation, else not known (the existing object's annotation or
    namespace decides it), and ``defaultProject`` does not stand in for it."""
    props = resource.props
    own = _annotation(props)
    why = (
        None
        if own is not None
        else (
            f"the Config Connector project of patch {resource.name!r} is not known offline: the "
            f"patch sets no {PROJECT_ANNOTATION} annotation, so the existing object's annotation, "
            "else its namespace, decides it; set the annotation in the patch"
        )
    )
    canonical: dict[str, Any] = {"name": _resource_id(props), "topic": UNKNOWN_STRING_VALUE}
    if own is not None:
        canonical["project"] = own
    push = get(props, "spec.pushConfig")
    if isinstance(push, Mapping):
        push = dict(push)
        push.setdefault("pushEndpoint", UNKNOWN_STRING_VALUE)
        push.setdefault("oidcToken", UNKNOWN_OBJECT_VALUE)
        if isinstance(push["oidcToken"], Mapping):
            token = dict(push["oidcToken"])
            token.setdefault("serviceAccountEmail", UNKNOWN_STRING_VALUE)
            token.setdefault("audience", UNKNOWN_STRING_VALUE)
            push["oidcToken"] = token
    canonical["pushConfig"] = UNKNOWN_OBJECT_VALUE if push is None else push
    once = get(props, "spec.enableExactlyOnceDelivery")
    canonical["enableExactlyOnceDelivery"] = UNKNOWN_BOOLEAN_VALUE if once is None else once
    dead = get(props, "spec.deadLetterPolicy.deadLetterTopicRef")
    if dead is not None:  # unset, the existing policy stays: its grants are not the patch's
        topic = _topic_path(dead, own, index, namespace_of(resource))
        canonical["deadLetterPolicy"] = {"deadLetterTopic": topic}
    deps = _deps(resource, ("pushConfig", "deadLetterPolicy", "enableExactlyOnceDelivery"))
    mapped = _as(resource, SUBSCRIPTION_TYPE, canonical, deps, why, placed=True)
    return replace(mapped, unknown_reason=PATCH_UNSET)


def _as(
    resource: WireResource,
    type_token: str,
    props: dict[str, Any],
    deps: Mapping[str, tuple[str, ...]],
    why: str | None,
    *,
    placed: bool = False,
) -> WireResource:
    """``resource`` as ``type_token`` with ``props``; ``why``: why its project is not known when
    it is absent; ``placed``: it is in a namespace the program or its provider chose, so the
    policy config's ``defaultProject`` does not stand in for that namespace's project."""
    kept = {k: v for k, v in props.items() if v is not None}
    return replace(
        resource,
        type=type_token,
        props=kept,
        property_dependencies=dict(deps),
        no_project=why,
        no_default_project=placed,
    )


def _iam(resource: WireResource, index: KccIndex | None, namespace: str) -> list[WireResource]:
    """An ``IAMPolicyMember``, ``IAMPartialPolicy`` or ``IAMPolicy`` on a mapped kind."""
    ref = get(resource.props, "spec.resourceRef")
    kind = ref.get("kind") if isinstance(ref, Mapping) else None
    if not isinstance(ref, Mapping) or not isinstance(kind, str) or kind not in _TARGETS:
        return []  # on something no rule reads (a bucket, a dataset...)
    gcp, prop = _TARGETS[kind]
    target, target_urn = _target(ref, index, namespace)
    on: dict[str, Any] = {prop: target} if target is not None else {}
    deps: dict[str, tuple[str, ...]] = {prop: (target_urn,)} if target_urn else {}
    if resource.type == POLICY_MEMBER:
        member, member_deps = _member(get(resource.props, "spec"), index, namespace)
        props = {
            **on,
            "role": get(resource.props, "spec.role"),
            "member": member,
            "condition": get(resource.props, "spec.condition"),
        }
        return [_as(resource, gcp.format(k="Member"), props, {**deps, "member": member_deps}, None)]
    bindings = get(resource.props, "spec.bindings")
    if not isinstance(bindings, list):
        return []
    if resource.type == POLICY:
        data = [
            {"role": b.get("role"), "members": b.get("members"), "condition": b.get("condition")}
            for b in bindings
            if isinstance(b, Mapping)
        ]
        props = {**on, "policyData": json.dumps({"bindings": data}, sort_keys=True)}
        return [_as(resource, gcp.format(k="Policy"), props, deps, None)]
    members: list[WireResource] = []
    for binding in bindings:
        if not isinstance(binding, Mapping) or not isinstance(binding.get("members"), list):
            continue
        for entry in binding["members"]:
            member, member_deps = _member(entry, index, namespace)
            props = {
                **on,
                "role": binding.get("role"),
                "member": member,
                "condition": binding.get("condition"),
            }
            urn = f"{resource.urn}#{len(members)}"
            one = _as(
                resource, gcp.format(k="Member"), props, {**deps, "member": member_deps}, None
            )
            members.append(replace(one, urn=urn))
    return members


_READ_ON = frozenset({"Folder", "Organization", "CloudFunctions2Function"})
"""Config Connector kinds the grant rules would read grants on that :data:`_TARGETS` does not
map (ancestors of a project; 2nd-gen functions)."""


def unmapped_target(resource: WireResource) -> str | None:
    """``"KIND on TARGET_KIND"`` for an IAM object on a kind of :data:`_READ_ON`, else ``None``."""
    try:
        kind = get(resource.props, "spec.resourceRef.kind")
    except WireShapeError:
        return None
    if isinstance(kind, str) and kind in _READ_ON:
        return f"{resource.type.rsplit(':', 1)[-1]} on a {kind}"
    return None


def _target(
    ref: Mapping[str, Any], index: KccIndex | None, namespace: str
) -> tuple[Any, str | None]:
    """``(target property value, URN of the referenced object in the stack)``."""
    external = ref.get("external")
    if isinstance(external, str):
        return external, None
    found = _referenced(index, _KIND_TYPES.get(str(ref.get("kind")), ""), ref, namespace)
    if found is None:
        return (ref.get("name") if ref.get("kind") == "Project" else None), None
    value = _resource_id(found.props)
    if ref.get("kind") in ("PubSubTopic", "PubSubSubscription"):
        project, _ = project_of(found, index)
        collection = "topics" if ref["kind"] == "PubSubTopic" else "subscriptions"
        value = f"projects/{project}/{collection}/{value}" if isinstance(project, str) else None
    elif ref.get("kind") == "IAMServiceAccount":
        value = get_str(found.props, "status.email")
    return value, found.urn


def _member(spec: Any, index: KccIndex | None, namespace: str) -> tuple[Any, tuple[str, ...]]:
    """``(member, URNs it is computed from)`` of ``member`` or ``memberFrom.serviceAccountRef``;
    a service account named in the stack is resolved by the graph through the URN."""
    if not isinstance(spec, Mapping):
        return spec, ()
    if spec.get("member") is not None:
        return spec["member"], ()
    ref = get(spec, "memberFrom.serviceAccountRef")
    if not isinstance(ref, Mapping):
        return UNKNOWN, ()
    if isinstance(ref.get("external"), str):
        return f"serviceAccount:{ref['external']}", ()
    found = _referenced(index, ACCOUNT_KIND, ref, namespace)
    return UNKNOWN, ((found.urn,) if found is not None else ())
