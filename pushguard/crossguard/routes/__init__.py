"""Every route to a push subscription: the one list of resource types that create a Pub/Sub
subscription, and one adapter per route into pulumi-gcp's wire form, from which
:mod:`pushguard.crossguard.facts` reads :class:`~pushguard.rules.facts.SubscriptionFacts`, so
every rule, the stack graph and the "not checked" wording serve all routes unchanged.

Routes (each adapter's docstring cites the schema it maps):

- ``gcp``: pulumi-gcp itself (the reference form; nothing to map);
- ``google-native``: Google Cloud Native (:mod:`.native`);
- ``config-connector``: Config Connector objects through pulumi-kubernetes (:mod:`.kcc`);
- ``terraform``: the Terraform ``google``/``google-beta`` providers bridged with
  ``pulumi package add terraform-provider`` (:mod:`.terraform`);
- ``deployment-manager``: the Pub/Sub subscriptions a Deployment Manager deployment's
  configuration declares (:mod:`.deployment_manager`; one deployment may declare several, or
  hold what cannot be read offline: :func:`cannot_check`);
- ``crossplane``: Crossplane's provider-upjet-gcp ``Subscription`` through pulumi-kubernetes
  (:mod:`.crossplane`).

Eventarc triggers (:mod:`.eventarc`) create a push subscription too, one Eventarc creates and
manages: each route's trigger maps into pulumi-gcp's ``gcp:eventarc/trigger:Trigger``, from which
:mod:`pushguard.crossguard.triggers` reads what the trigger sets (its HTTP endpoint, its service
account) for the rules that judge triggers (:attr:`SubscriptionType.kind`).

:data:`SUBSCRIPTION_TYPES` lists every type known to create a Pub/Sub subscription, with whether
it is mapped and why; a resource of a known unmapped type (:func:`unmapped`) is named in the
report as not checked by every policy, never passed quietly. A resource of any other type whose
properties are shaped like a push configuration cannot pass either (:mod:`.shaped`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from pulumi_policy.deserialize import deserialize_properties

from pushguard.crossguard.graph import IAM_TARGETS
from pushguard.crossguard.resources import SUBSCRIPTION_TYPE, WireResource
from pushguard.crossguard.routes import (
    crossplane,
    deployment_manager,
    eventarc,
    kcc,
    native,
    terraform,
)
from pushguard.crossguard.routes.names import bridged
from pushguard.rules.facts import EVENTARC_TRIGGER, FactsKind


@dataclass(frozen=True)
class SubscriptionType:
    """A resource type that creates a Pub/Sub subscription: its ``route``, whether pushguard
    ``mapped`` its properties into the facts, and ``why`` (or why not)."""

    type: str
    route: str
    mapped: bool
    why: str
    managed_by_google: bool = False
    """The push subscription is created and managed by Google (Eventarc): its push config is not
    the resource's to set, so what of it is Google's stays "not checked" without failing the run.
    Otherwise an unmapped type's push config is the program's, unread: the run cannot pass
    (:func:`uncheckable`)."""
    kind: FactsKind = "subscription"
    """What the pack reads a mapped type as: a subscription, or an Eventarc trigger (whose own
    settings only some rules judge, :attr:`~pushguard.rules.base.Rule.kinds`)."""


_TF_WHY = (
    "the Terraform google_pubsub_subscription schema pulumi-gcp is bridged from; only the type "
    "token differs"
)

_UPJET = (
    "spec.forProvider, with spec.initProvider filling what it leaves empty (as Upjet creates "
    "it), has pulumi-gcp's fields; the name is the crossplane.io/external-name annotation, else "
    "metadata.name"
)
_CROSSPLANE_WHY = {
    "kubernetes:pubsub.gcp.upbound.io/v1beta1:Subscription": (
        f"Crossplane provider-upjet-gcp, cluster-scoped: {_UPJET}; blocks are one-element lists"
    ),
    "kubernetes:pubsub.gcp.upbound.io/v1beta2:Subscription": (
        f"Crossplane provider-upjet-gcp, cluster-scoped: {_UPJET}"
    ),
    "kubernetes:pubsub.gcp.m.upbound.io/v1beta1:Subscription": (
        f"Crossplane v2 provider-upjet-gcp, namespaced: {_UPJET}"
    ),
}
SUBSCRIPTION_TYPES: tuple[SubscriptionType, ...] = (
    SubscriptionType(SUBSCRIPTION_TYPE, "gcp", True, "pulumi-gcp, the pack's reference form"),
    SubscriptionType(
        native.SUBSCRIPTION,
        "google-native",
        True,
        "the Pub/Sub v1 REST fields; subscriptionId is pulumi-gcp's name",
    ),
    SubscriptionType(
        kcc.SUBSCRIPTION,
        "config-connector",
        True,
        "spec.pushConfig has pulumi-gcp's fields; topic, dead-letter topic and project are "
        "resolved from references and annotations",
    ),
    SubscriptionType(
        kcc.SUBSCRIPTION_PATCH,
        "config-connector",
        True,
        "pulumi-kubernetes' CustomResourcePatch of an existing PubSubSubscription: the fields "
        "it sets are checked like a subscription's, those it does not set are unknown",
    ),
    *(SubscriptionType(t, "terraform", True, _TF_WHY) for t in terraform.SUBSCRIPTION_TYPES),
    *(
        SubscriptionType(
            t,
            "deployment-manager",
            True,
            "each `pubsub.v1.subscription` or `gcp-types/pubsub-v1:projects.subscriptions` of "
            "target.config.content (the Pub/Sub REST fields); imports, templates, references in "
            "the fields read, and a push config of any other type cannot be checked",
        )
        for t in deployment_manager.DEPLOYMENTS
    ),
    *(SubscriptionType(t, "crossplane", True, why) for t, why in _CROSSPLANE_WHY.items()),
    SubscriptionType(
        "google-native:pubsub/v1beta2:Subscription",
        "google-native",
        False,
        "the deprecated Pub/Sub v1beta2 API; its schema is not mapped (use pubsub/v1)",
    ),
    *(
        SubscriptionType(
            token,
            route,
            True,
            f"Eventarc creates and manages the trigger's push subscription; {why}",
            managed_by_google=True,
            kind=EVENTARC_TRIGGER,
        )
        for token, route, why in (
            (
                eventarc.TRIGGER,
                "gcp",
                "`destination.httpEndpoint.uri` and `serviceAccount` are the trigger's",
            ),
            (
                eventarc.NATIVE_TRIGGER,
                "google-native",
                "the REST fields `destination.httpEndpoint.uri` and `serviceAccount`",
            ),
            (
                eventarc.KCC_TRIGGER,
                "config-connector",
                "`spec.destination.httpEndpoint.uri`; the account from `spec.serviceAccountRef`, "
                "the project from `spec.projectRef`",
            ),
        )
    ),
)
"""Every resource type known to create a Pub/Sub subscription. Pub/Sub Lite subscriptions
(``gcp:pubsub/liteSubscription:LiteSubscription``) are not listed: Pub/Sub Lite has no push
delivery. A ``command:local:Command`` running ``gcloud`` is invisible to any policy pack: its
properties are a command line."""

_BY_TYPE = {t.type: t for t in SUBSCRIPTION_TYPES}

MAPPED_SUBSCRIPTION_TYPES: frozenset[str] = frozenset(
    t.type for t in SUBSCRIPTION_TYPES if t.mapped and t.kind == "subscription"
)
"""The types the pack checks as subscriptions (the resource halves' types)."""

TRIGGER_TYPES: frozenset[str] = frozenset(
    t.type for t in SUBSCRIPTION_TYPES if t.mapped and t.kind == EVENTARC_TRIGGER
)
"""The Eventarc trigger types the pack reads (:mod:`.eventarc`), for the rules that judge them."""

UNCHECKABLE_TYPES: frozenset[str] = frozenset(
    t.type for t in SUBSCRIPTION_TYPES if not t.mapped and not t.managed_by_google
)
"""The unmapped types whose push config the program sets: the pack reports each such resource
as a violation of every policy (it cannot be checked), never a quiet pass."""


def unmapped(resource_type: str) -> SubscriptionType | None:
    """The entry of a type known to create a subscription that pushguard does not map."""
    known = _BY_TYPE.get(resource_type)
    return known if known is not None and not known.mapped else None


_GRANT_KINDS = ("iammember", "iambinding", "iampolicy", "iammemberremove")
_READ_ON = (
    "serviceaccount",
    "projectiam",
    "projects/",
    "cloudrun",
    "run/v",
    "function",
    "pubsub",
    "organization",
    "folder",
)
"""What the grant rules read grants on (lower case, as found in a type token): service
accounts, projects and their ancestors, Cloud Run, Cloud Functions, topics and subscriptions."""


def unmapped_iam(resource: WireResource) -> str | None:
    """Why the grants a resource makes are not read, for an IAM resource of one of the new
    routes (Google Cloud Native, the bridged Terraform providers, Config Connector, Crossplane,
    whose IAM kinds none is mapped) on a kind
    the grant rules read that no adapter maps
    (``google-native:cloudfunctions/v2:FunctionIamMember``,
    ``google:index/organizationIamMember:OrganizationIamMember``, pulumi-gcp's own
    ``gcp:organizations/iAMMember:IAMMember``, ``gcp:folder/iAMMember:IAMMember``,
    ``gcp:cloudfunctionsv2/functionIamMember:FunctionIamMember`` and
    ``gcp:projects/iamMemberRemove:IamMemberRemove``, a Config Connector
    ``IAMPolicyMember`` on a ``Folder``...); ``None`` otherwise. The grant rules are then not
    checked for the stack's subscriptions: a grant they look for may be that one."""
    kind = resource.type.lower()
    package = resource.type.split(":", 1)[0]
    if resource.type in native.TYPES or resource.type in terraform.TYPES:
        return None
    if resource.type in IAM_TARGETS:
        return None  # read by the stack graph (pulumi-gcp)
    if resource.type in deployment_manager.TYPES:
        return deployment_manager.unmapped_grants(resource)
    if package in ("gcp", "google-native", *terraform.PACKAGES):
        if kind.endswith(_GRANT_KINDS) and any(k in kind for k in _READ_ON):
            return resource.type
        return None
    if resource.type in (kcc.POLICY_MEMBER, kcc.PARTIAL_POLICY, kcc.POLICY):
        return kcc.unmapped_target(resource)
    return crossplane.unmapped_iam(resource)


def uncheckable(resource_types: Iterable[str]) -> list[SubscriptionType]:
    """The known unmapped subscription types among ``resource_types`` whose push config the
    program sets (every unmapped type but Eventarc's, :attr:`SubscriptionType.managed_by_google`),
    each once, by type: a gate that cannot read such a subscription's push config cannot pass the
    stack (``pushguard preview``/``analyze`` exit 2 naming them; the pack reports each as a
    violation of every policy)."""
    found = {t: known for t in resource_types if (known := unmapped(t)) is not None}
    return [known for _, known in sorted(found.items()) if not known.managed_by_google]


def uncheckable_error(resource_types: Iterable[str]) -> str | None:
    """The exit-2 message naming the :func:`uncheckable` types among ``resource_types``, or
    ``None`` when there are none."""
    found = uncheckable(resource_types)
    if not found:
        return None
    named = "; ".join(f"{t.type} ({t.why})" for t in found)
    return (
        f"a push subscription of a type pushguard does not map was declared, so its push "
        f"config was not checked and the stack cannot pass: {named}; use a mapped type "
        "(python -m pushguard.crossguard.routes lists them)"
    )


def cannot_check(resource: WireResource) -> str | None:
    """Why the push subscriptions a resource of a mapped type declares cannot all be checked
    offline (a Deployment Manager deployment whose configuration is not known, does not parse,
    imports templates, refers to other resources in a field the rules read...: see
    :mod:`.deployment_manager`), or ``None``. The pack reports such a resource as a violation of
    every policy, and ``pushguard preview``/``analyze`` exit 2 (:func:`unreadable_error`)."""
    if resource.type in deployment_manager.TYPES:
        return deployment_manager.cannot_check(resource)
    return None


class Declared(Protocol):
    """A resource as a preview or a state declares it (``ResourceRecord``): ``inputs`` in wire
    form, secrets as envelopes."""

    @property
    def urn(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def inputs(self) -> Mapping[str, Any]: ...


def unreadable_error(resources: Iterable[Declared]) -> str | None:
    """The exit-2 message naming each resource among ``resources`` whose subscriptions
    :func:`cannot_check` (read from its inputs, secrets opened), or ``None`` when there are
    none."""
    found = []
    for declared in resources:
        if declared.type not in deployment_manager.TYPES:
            continue
        try:
            props = deserialize_properties(dict(declared.inputs))
        except Exception:  # an envelope pulumi-policy cannot open: read as it is
            props = dict(declared.inputs)
        wire = WireResource(declared.urn, declared.type, declared.name, props)
        why = cannot_check(wire)
        if why:
            found.append(f"{declared.type} {declared.name!r} ({why})")
    if not found:
        return None
    return (
        "a resource declares push subscriptions pushguard cannot read offline, so their push "
        f"config was not checked and the stack cannot pass: {'; '.join(found)}"
    )


def route_of(resource_type: str) -> str | None:
    """The route (``gcp``, ``google-native``, ``config-connector``, ``terraform``,
    ``deployment-manager``, ``crossplane``) whose adapter maps ``resource_type``, or ``None``."""
    if resource_type in deployment_manager.TYPES:
        return "deployment-manager"
    if resource_type in crossplane.TYPES:
        return "crossplane"
    if resource_type in native.TYPES:
        return "google-native"
    if resource_type in kcc.TYPES:
        return "config-connector"
    if resource_type in terraform.TYPES:
        return "terraform"
    return "gcp" if resource_type.startswith("gcp:") else None


def canonical(resource: WireResource, index: kcc.KccIndex | None = None) -> list[WireResource]:
    """``resource`` in pulumi-gcp's wire form (its URN kept): itself for pulumi-gcp and any
    type no adapter maps, the adapter's mapping otherwise (an ``IAMPartialPolicy`` maps to one
    member each, a Deployment Manager deployment to each subscription its configuration declares,
    their URNs suffixed). ``index``: the stack's Config Connector objects, ``None`` for one
    resource.

    Raises:
        WireShapeError: a property has a shape the provider would reject.
    """
    if resource.type in eventarc.TYPES:
        return [eventarc.to_gcp(resource, index)]
    route = route_of(resource.type)
    if route == "google-native":
        return [native.to_gcp(resource)]
    if route == "config-connector":
        return kcc.to_gcp(resource, index)
    if route == "terraform":
        return [terraform.to_gcp(_as_bridged(resource))]
    if route == "deployment-manager":
        return deployment_manager.to_gcp(resource)
    if route == "crossplane":
        return [crossplane.to_gcp(resource)]
    if route == "gcp":
        return [_as_bridged(resource)]
    return [resource]


def _as_bridged(resource: WireResource) -> WireResource:
    """A resource of a bridged provider (pulumi-gcp, the bridged Terraform ``google``) with its
    keys as the bridge reads them (:func:`~pushguard.crossguard.routes.names.bridged`:
    ``push_config`` and ``PushConfig`` are ``pushConfig``), its property dependencies too.

    Raises:
        SpellingError: two spellings of one property disagree.
    """
    props = bridged(resource.props)
    if props == resource.props:
        return resource
    deps: dict[str, tuple[str, ...]] = {}
    for key, urns in resource.property_dependencies.items():
        name = next(iter(bridged({key: None})))
        deps[name] = tuple(dict.fromkeys((*deps.get(name, ()), *urns)))
    return replace(resource, props=props, property_dependencies=deps)


def canonical_stack(resources: Iterable[WireResource]) -> list[WireResource]:
    """Every resource of a stack in pulumi-gcp's wire form (:func:`canonical`, with the stack's
    Config Connector index); a resource whose properties cannot be read is kept as it is."""
    listed = list(resources)
    index = kcc.KccIndex.build(listed)
    out: list[WireResource] = []
    for resource in listed:
        try:
            out += canonical(resource, index)
        except ValueError:
            out.append(resource)
    return out


_IAM_READ = {
    "gcp": "every pulumi-gcp `IAMMember`/`IAMBinding`/`IAMPolicy` the rules need "
    "(service account, project, Cloud Run, Cloud Functions, topic, subscription)",
    "google-native": "`iam/v1:ServiceAccountIam*`, `cloudresourcemanager/v1:ProjectIam*`, "
    "`cloudresourcemanager/v3:ProjectIam*`, `run/v1:ServiceIam*`, `run/v2:ServiceIam*`, "
    "`cloudfunctions/v1:FunctionIam*`, `pubsub/v1:TopicIam*`, `pubsub/v1:SubscriptionIam*` "
    "(Member, Binding, Policy)",
    "config-connector": "`IAMPolicyMember`, `IAMPartialPolicy`, `IAMPolicy` on an "
    "`IAMServiceAccount`, `Project`, `RunService`, `CloudFunctionsFunction`, `PubSubTopic` or "
    "`PubSubSubscription` (by `external`, or by `name` when the object is in the stack)",
    "terraform": "the `*IamMember`/`*IamBinding`/`*IamPolicy` of `serviceAccount`, `project`, "
    "`cloudRunV2Service`, `cloudRunService`, `cloudfunctionsFunction`, `pubsubTopic`, "
    "`pubsubSubscription`",
    "deployment-manager": "none inside the deployment: a configuration that grants roles "
    "(`accessControl`, a `setIamPolicy` action, an `iamMemberBinding` type) leaves the grant "
    "rules not checked for the stack; the other routes' IAM resources are read",
    "crossplane": "none: a provider-upjet-gcp `*IAMMember` on a service account, project, "
    "folder, organization, Cloud Run service, Cloud Function, topic or subscription leaves the "
    "grant rules not checked (grants made with another route's resources in the same stack are "
    "read)",
}
_PROJECT_FROM = {
    "gcp": "`project`, else the provider's (`gcp:project`, `GOOGLE_PROJECT`...)",
    "google-native": "`project`, else the provider's (`google-native:project`, "
    "`GOOGLE_PROJECT`...)",
    "config-connector": "the `cnrm.cloud.google.com/project-id` annotation, else the "
    "namespace's annotation or name when the `Namespace` is in the stack (the namespace: "
    "`metadata.namespace`, the provider's `namespace`, its kubeconfig context's); otherwise not "
    "checked",
    "terraform": "`project`, else the provider's (`google:project`/`google-beta:project`, "
    "`GOOGLE_PROJECT`...)",
    "deployment-manager": "the subscription's `name` (`projects/P/subscriptions/S`), else the "
    "deployment's `project`, else the provider's (`gcp:project`, `GOOGLE_PROJECT`...)",
    "crossplane": "`spec.forProvider.project` (else `spec.initProvider.project`); else the "
    "`ProviderConfig`'s, which is in the cluster: not checked (`defaultProject` does not stand "
    "in)",
}


def _checked(known: SubscriptionType) -> str:
    if known.kind == EVENTARC_TRIGGER:
        return "partly: its HTTP endpoint and service account (see Eventarc triggers)"
    if known.mapped:
        return "yes"
    if known.managed_by_google:
        return "no: listed as not checked (Google manages its push subscription)"
    return "no: cannot be checked, so it fails the gate (exit 2; a violation in the pack)"


def routes_markdown() -> str:
    """The table of :data:`SUBSCRIPTION_TYPES` and, per mapped route, the IAM resources read
    and the project's sources, as Markdown (the text in ``docs/policy-pack.md``, kept in sync by
    a test; ``python -m pushguard.crossguard.routes`` prints it)."""
    lines = [
        "| type | route | checked | why |",
        "|---|---|---|---|",
        *(f"| `{t.type}` | {t.route} | {_checked(t)} | {t.why} |" for t in SUBSCRIPTION_TYPES),
        "",
        "| route | project | IAM resources read by the grant rules |",
        "|---|---|---|",
        *(f"| {route} | {_PROJECT_FROM[route]} | {_IAM_READ[route]} |" for route in _IAM_READ),
    ]
    return "\n".join(lines) + "\n"
