"""Eventarc triggers of every route -> pulumi-gcp's ``gcp:eventarc/trigger:Trigger`` wire form.

Eventarc creates and manages the Pub/Sub subscription behind a trigger: the trigger's
``transport.pubsub.subscription`` is "the name of the Pub/Sub subscription created and managed by
Eventarc system as a transport for the event delivery"
(https://cloud.google.com/eventarc/docs/reference/rest/v1/projects.locations.triggers). Its push
config is Google's; what the trigger itself says of delivery is read here, for
:mod:`pushguard.crossguard.triggers` to turn into facts:

- ``destination``: one of ``httpEndpoint`` (``uri``: "The URI of the HTTP endpoint ... Only HTTP
  and HTTPS protocols are supported. The host can be either a static IP addressable from the VPC
  specified by the network config, or an internal DNS hostname of the service resolvable via
  Cloud DNS"), Cloud Run, GKE, Workflows or Cloud Functions (which Eventarc addresses itself);
- ``serviceAccount``: "the identity of the trigger"; "for Cloud Run destinations, this service
  account is used to generate identity tokens when invoking the service";
- the project, ``location`` and the trigger's ID.

The canonical form is pulumi-gcp's (https://www.pulumi.com/registry/packages/gcp/api-docs/eventarc/trigger/):
``project``, ``location``, ``name``, ``serviceAccount``, ``destination`` with ``httpEndpoint.uri``,
``cloudRunService``, ``gke``, ``workflow``, ``cloudFunction``. The other routes map into it:

- Google Cloud Native ``google-native:eventarc/v1:Trigger``: the REST resource's names
  (``sdk/python/pulumi_google_native/eventarc/v1/trigger.py`` in
  https://github.com/pulumi/pulumi-google-native: ``triggerId``, ``project``, ``location``,
  ``serviceAccount``, ``destination``), where the Cloud Run destination is ``cloudRun``;
- Config Connector ``EventarcTrigger`` (``eventarc.cnrm.cloud.google.com/v1beta1``, the CRD
  ``config/crds/resources/apiextensions.k8s.io_v1_customresourcedefinition_eventarctriggers.eventarc.cnrm.cloud.google.com.yaml``
  in https://github.com/GoogleCloudPlatform/k8s-config-connector): ``spec.destination``
  (``httpEndpoint.uri``, ``cloudRunService``, ``gke``, ``workflowRef``, ``cloudFunctionRef``),
  ``spec.serviceAccountRef`` (``external``: the account's email, or ``name`` of an
  ``IAMServiceAccount``, whose ``status.email`` it is), ``spec.projectRef`` (required),
  ``spec.location``, ``spec.resourceID`` (else ``metadata.name``).

A key spelt otherwise than its route's schema (``service_account`` for Google Cloud Native or
Config Connector) is refused, as for subscriptions (:mod:`~pushguard.crossguard.routes.names`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.routes import kcc
from pushguard.crossguard.routes.names import keys_of, misspelt
from pushguard.crossguard.wire import UNKNOWN, get

TRIGGER = "gcp:eventarc/trigger:Trigger"
"""pulumi-gcp's Eventarc trigger: the canonical form of every route's trigger."""
NATIVE_TRIGGER = "google-native:eventarc/v1:Trigger"
KCC_TRIGGER = "kubernetes:eventarc.cnrm.cloud.google.com/v1beta1:EventarcTrigger"

TYPES: frozenset[str] = frozenset({NATIVE_TRIGGER, KCC_TRIGGER})
"""The trigger types this adapter maps (pulumi-gcp's needs only the bridge's key names)."""
TRIGGER_TYPES: frozenset[str] = TYPES | {TRIGGER}
"""Every Eventarc trigger type the pack reads."""

_DESTINATION = {
    "httpEndpoint": keys_of("uri"),
    "cloudRun": None,
    "gke": None,
    "workflow": None,
    "cloudFunction": None,
    "networkConfig": None,
}
_NATIVE_SCHEMA = {
    "destination": _DESTINATION,
    "serviceAccount": None,
    "project": None,
    "triggerId": None,
    "location": None,
}
_KCC_SCHEMA: dict[str, Any] = {
    "metadata": keys_of("name", "namespace", "annotations"),
    "spec": {
        "destination": {
            "httpEndpoint": keys_of("uri"),
            "cloudRunService": None,
            "gke": None,
            "workflowRef": None,
            "cloudFunctionRef": None,
            "networkConfig": None,
        },
        "serviceAccountRef": keys_of("external", "name", "namespace"),
        "projectRef": None,
        "resourceID": None,
        "location": None,
    },
}
_NATIVE_DROPS = (
    "Google Cloud Native sends only its schema's (the REST API's camelCase) names to the API "
    "and does not rename other keys"
)
_KCC_PRUNED = (
    "the Kubernetes API server prunes a field the EventarcTrigger CRD does not declare, or "
    "rejects it under strict field validation"
)


def to_gcp(resource: WireResource, index: kcc.KccIndex | None = None) -> WireResource:
    """``resource`` (a type of :data:`TYPES`) as a pulumi-gcp trigger, its URN kept.
    ``index``: the stack's Config Connector objects (``None`` for one resource alone).

    Raises:
        WireShapeError: a property has a shape the provider would reject.
        SpellingError: a property the rules read is spelt otherwise than the route's schema.
    """
    if resource.type == NATIVE_TRIGGER:
        misspelt(resource.props, _NATIVE_SCHEMA, "", _NATIVE_DROPS)
        return _native(resource)
    misspelt(resource.props, _KCC_SCHEMA, "", _KCC_PRUNED)
    return _config_connector(resource, index)


def _native(resource: WireResource) -> WireResource:
    """The REST names but ``triggerId`` (``name``) and ``destination.cloudRun``
    (``cloudRunService``); a trigger read back from state has its full REST ``name``."""
    props = {k: v for k, v in resource.props.items() if k != "triggerId"}
    short = resource.props.get("triggerId")
    name = props.get("name")
    if short is not None:
        props["name"] = short
    elif isinstance(name, str):
        props["name"] = name.rsplit("/", 1)[-1]
    destination = props.get("destination")
    if isinstance(destination, Mapping) and "cloudRun" in destination:
        renamed = {k: v for k, v in destination.items() if k != "cloudRun"}
        props["destination"] = {**renamed, "cloudRunService": destination["cloudRun"]}
    deps = {
        ("name" if k == "triggerId" else k): v for k, v in resource.property_dependencies.items()
    }
    return replace(resource, type=TRIGGER, props=props, property_dependencies=deps)


def _config_connector(resource: WireResource, index: kcc.KccIndex | None) -> WireResource:
    """An ``EventarcTrigger`` as pulumi-gcp's trigger: the project as Config Connector chooses
    it (:func:`~pushguard.crossguard.routes.kcc.project_of`), the account from its reference."""
    props = resource.props
    project, why = kcc.project_of(resource, index)
    spec_deps = resource.depends_through("spec")
    account, account_deps = _account(get(props, "spec.serviceAccountRef"), resource, index)
    destination = get(props, "spec.destination")
    canonical: dict[str, Any] = {
        "name": _resource_id(props),
        "location": get(props, "spec.location"),
        "serviceAccount": account,
        "destination": _kcc_destination(destination),
    }
    if project is not None:
        canonical["project"] = project
    deps = {"destination": spec_deps, "serviceAccount": (*spec_deps, *account_deps)}
    metadata = resource.depends_through("metadata")
    if metadata:
        deps |= {"name": metadata, "project": metadata}
    kept = {k: v for k, v in canonical.items() if v is not None}
    unplaced = account is UNKNOWN and not deps["serviceAccount"]
    return replace(
        resource,
        type=TRIGGER,
        props=kept,
        property_dependencies={k: v for k, v in deps.items() if v},
        no_project=why,
        no_default_project=kcc.placement(resource).explicit,
        unknown_reason=ACCOUNT_NOT_IN_STACK if unplaced else resource.unknown_reason,
    )


ACCOUNT_NOT_IN_STACK = (
    "is an IAMServiceAccount named by spec.serviceAccountRef that this stack does not declare, "
    "so its email is not known offline; name the account by its email (external)"
)
"""Why a Config Connector trigger's account is unknown when it is named by a reference to an
account outside the stack (:attr:`WireResource.unknown_reason`)."""


def _resource_id(props: Mapping[str, Any]) -> Any:
    """``spec.resourceID``, else ``metadata.name`` (the trigger Config Connector creates)."""
    own = get(props, "spec.resourceID")
    return own if own is not None else get(props, "metadata.name")


def _kcc_destination(destination: Any) -> Any:
    """``spec.destination`` under pulumi-gcp's names: ``workflowRef`` and ``cloudFunctionRef``
    become ``workflow`` and ``cloudFunction`` (their ``external``, else their ``name``)."""
    if not isinstance(destination, Mapping):
        return destination  # absent or unknown
    out = {k: v for k, v in destination.items() if k not in ("workflowRef", "cloudFunctionRef")}
    for ref, name in (("workflowRef", "workflow"), ("cloudFunctionRef", "cloudFunction")):
        value = destination.get(ref)
        if isinstance(value, Mapping):
            out[name] = value.get("external") or value.get("name") or UNKNOWN
        elif value is not None:
            out[name] = value
    return out


def _account(
    ref: Any, resource: WireResource, index: kcc.KccIndex | None
) -> tuple[Any, tuple[str, ...]]:
    """``(email, URNs it is computed from)`` of ``spec.serviceAccountRef``: its ``external``
    email; for a ``name``, the ``status.email`` of that ``IAMServiceAccount`` in the stack
    (unknown until the cluster writes it, resolved through the stack's graph by its URN), or
    unknown when the account is not in the stack."""
    if ref is UNKNOWN or not isinstance(ref, Mapping):
        return ref, ()
    if isinstance(ref.get("external"), str):
        return ref["external"], ()
    name = ref.get("name")
    if not isinstance(name, str):
        return None, ()
    namespace = ref.get("namespace")
    where = namespace if isinstance(namespace, str) else kcc.namespace_of(resource)
    found = index.objects.get((kcc.ACCOUNT_KIND, where, name)) if index else None
    if found is None:
        return UNKNOWN, ()
    email = get(found.props, "status.email")
    return (email if isinstance(email, str) and email else UNKNOWN), (found.urn,)
