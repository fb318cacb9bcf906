"""Which resources of a Pulumi state make a Pub/Sub subscription, the subscription's path
(``projects/P/subscriptions/S``) and the push configuration the state recorded for it.

The type tokens are defined here once; the pack's routes (:mod:`pushguard.crossguard.routes`)
import them:

- pulumi-gcp ``gcp:pubsub/subscription:Subscription``: ``id`` is
  ``projects/{{project}}/subscriptions/{{name}}`` (the provider's import ID,
  https://www.pulumi.com/registry/packages/gcp/api-docs/pubsub/subscription/#import), outputs
  ``project`` and ``name``; the push config under ``pushConfig`` (``pushEndpoint``,
  ``oidcToken.serviceAccountEmail``, ``oidcToken.audience``, ``noWrapper.writeMetadata``,
  ``attributes``);
- the Terraform ``google``/``google-beta`` providers bridged with ``pulumi package add
  terraform-provider``: the same schema under ``PACKAGE:index/pubsubSubscription:
  PubsubSubscription``;
- Google Cloud Native ``google-native:pubsub/v1:Subscription``: the Pub/Sub v1 REST resource,
  whose ``name`` output is ``projects/P/subscriptions/S``
  (https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions);
- Config Connector ``PubSubSubscription`` through pulumi-kubernetes: ``spec.pushConfig`` has the
  same fields; the subscription ID is ``spec.resourceID``, else ``metadata.name``; the project is
  ``spec.projectRef.external``, else the object's ``cnrm.cloud.google.com/project-id``
  annotation, else its ``metadata.namespace`` (Config Connector's default when the namespace
  carries no annotation, https://cloud.google.com/config-connector/docs/how-to/organizing-resources/project-scoped-resources).
  A namespace's own annotation is another resource's; it is not followed here;
- a Deployment Manager deployment (:data:`DM_DEPLOYMENTS`): each ``pubsub.v1.subscription`` or
  ``gcp-types/pubsub-v1:projects.subscriptions`` of its ``target.config.content``
  (:mod:`pushguard.state.deployment_manager`), the path from its ``name``
  (``projects/P/subscriptions/S``) else its ``subscription`` in the deployment's ``project``, the
  push config its ``pushConfig``; what the configuration does not say (a template's resources, a
  ``$(ref...)``, a configuration that stays encrypted) is a record without a path or a push
  config not checked, never a guess.
- Crossplane's ``Subscription`` of provider-upjet-gcp through pulumi-kubernetes
  (:data:`CROSSPLANE_SUBSCRIPTIONS`; the CRDs
  ``package/crds/pubsub.gcp.upbound.io_subscriptions.yaml`` and
  ``package/crds/pubsub.gcp.m.upbound.io_subscriptions.yaml`` of
  https://github.com/crossplane-contrib/provider-upjet-gcp): the path is
  ``status.atProvider.id`` (``projects/{{project}}/subscriptions/{{name}}``, as the CRD describes
  it), else ``spec.forProvider.project`` and the ``crossplane.io/external-name`` annotation (else
  ``metadata.name``); the push config is ``spec.forProvider.pushConfig`` with what
  ``spec.initProvider.pushConfig`` fills in where ``forProvider`` leaves a field empty (Upjet's
  ``GetMergedParameters``, see :mod:`pushguard.crossguard.routes.crossplane`); v1beta1 writes
  each block as a one-element list.

Plain Python over the state's JSON (:mod:`pushguard.state.document` for secrets).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from pushguard.rules.managed import RECORDED_SETTINGS
from pushguard.state.deployment_manager import (
    SUBSCRIPTION_KINDS,
    ConfigError,
    imports_of,
    is_template,
    parse_config,
)
from pushguard.state.document import (
    ENCRYPTED,
    OUTPUT_VALUE_SIG,
    SIG_KEY,
    is_secret,
    secret_value,
)
from pushguard.state.files import StateFileError

GCP_SUBSCRIPTION: Final = "gcp:pubsub/subscription:Subscription"
"""pulumi-gcp's subscription (a public contract of the pack)."""
NATIVE_SUBSCRIPTION: Final = "google-native:pubsub/v1:Subscription"
"""Google Cloud Native's Pub/Sub v1 subscription."""
KCC_SUBSCRIPTION: Final = "kubernetes:pubsub.cnrm.cloud.google.com/v1beta1:PubSubSubscription"
"""Config Connector's ``PubSubSubscription`` through pulumi-kubernetes."""
TERRAFORM_PACKAGES: Final = ("google", "google-beta")
"""The package names of the bridged Terraform providers."""
TERRAFORM_SUBSCRIPTIONS: Final = tuple(
    f"{package}:index/pubsubSubscription:PubsubSubscription" for package in TERRAFORM_PACKAGES
)
"""The bridged Terraform providers' subscription (``google_pubsub_subscription``)."""
DM_DEPLOYMENT: Final = "gcp:deploymentmanager/deployment:Deployment"
"""pulumi-gcp's Deployment Manager deployment."""
DM_DEPLOYMENTS: Final = (
    DM_DEPLOYMENT,
    *(
        f"{package}:index/deploymentManagerDeployment:DeploymentManagerDeployment"
        for package in TERRAFORM_PACKAGES
    ),
)
"""Deployment Manager deployments: pulumi-gcp's and the bridged Terraform providers'
(``google_deployment_manager_deployment``, the same schema)."""
CROSSPLANE_SUBSCRIPTIONS: Final = (
    "kubernetes:pubsub.gcp.upbound.io/v1beta1:Subscription",
    "kubernetes:pubsub.gcp.upbound.io/v1beta2:Subscription",
    "kubernetes:pubsub.gcp.m.upbound.io/v1beta1:Subscription",
)
"""Crossplane's (provider-upjet-gcp) ``Subscription`` through pulumi-kubernetes: the
cluster-scoped group's v1beta1 (blocks as lists) and v1beta2 (blocks as objects), and the
namespaced group of Crossplane v2, ``pubsub.gcp.m.upbound.io``, v1beta1 (objects)."""
EXTERNAL_NAME: Final = "crossplane.io/external-name"
"""The annotation that names a Crossplane managed resource's external resource; Crossplane sets
it to ``metadata.name`` when it is empty (crossplane-runtime ``NameAsExternalName``)."""

STATE_SUBSCRIPTION_TYPES: Final = frozenset(
    {
        GCP_SUBSCRIPTION,
        NATIVE_SUBSCRIPTION,
        KCC_SUBSCRIPTION,
        *TERRAFORM_SUBSCRIPTIONS,
        *DM_DEPLOYMENTS,
        *CROSSPLANE_SUBSCRIPTIONS,
    }
)
"""The types whose state records subscriptions' paths and push configs
(:func:`recorded_subscriptions`; a Deployment Manager deployment records those its
configuration declares)."""

PROJECT_ANNOTATION: Final = "cnrm.cloud.google.com/project-id"

PATH: Final = re.compile(r"^projects/([^/]+)/subscriptions/([^/]+)$")
"""A subscription's path, ``projects/P/subscriptions/S``."""

PUSH_FIELDS: Final = RECORDED_SETTINGS
"""The push settings a state records, compared field by field with the export's
(:data:`pushguard.rules.managed.RECORDED_SETTINGS`)."""


class _UnreadableError(Exception):
    """A value below an encrypted secret or an output value without one."""


@dataclass(frozen=True)
class RecordedSubscription:
    """One subscription a state manages: its ``path`` (``None`` when the state does not say
    it), the push ``settings`` it recorded (field of :data:`PUSH_FIELDS` -> value: strings, a
    bool, or sorted ``key=value`` strings for ``attributes``; an absent field is ``None``) and
    ``not_checked``: the fields whose recorded value is an encrypted secret or unknown, which
    cannot be compared; ``secret``: the fields read from a ``--show-secrets`` plaintext (their
    values are compared, never shown); ``part``: see below."""

    path: str | None
    settings: Mapping[str, Any] = field(default_factory=dict)
    not_checked: tuple[str, ...] = ()
    secret: tuple[str, ...] = ()
    part: str = ""
    """The Deployment Manager resource's name for a subscription a deployment's configuration
    declares (its record is the deployment's URN followed by ``#PART``, as the pack names it);
    ``""`` for a resource that is one subscription, or a deployment's unread remainder."""


def _open(value: Any, seen: list[bool] | None = None) -> Any:
    """``value`` with secret envelopes and output values opened (``seen`` gets ``True`` for each
    secret opened).

    Raises:
        _UnreadableError: an encrypted secret, or an output value whose value is unknown.
    """
    while isinstance(value, dict):
        if is_secret(value):
            if seen is not None:
                seen.append(True)
            try:
                value = secret_value("", "", value)
            except StateFileError:  # a malformed envelope: not readable, never guessed
                raise _UnreadableError from None
            if value is ENCRYPTED:
                raise _UnreadableError
            continue
        if value.get(SIG_KEY) == OUTPUT_VALUE_SIG:
            if "value" not in value:
                raise _UnreadableError
            value = value["value"]
            continue
        return value
    return value


def _at(value: Any, *keys: str, seen: list[bool] | None = None) -> Any:
    """The value under ``keys`` (``None`` when a level is missing or not an object), secrets
    opened on the way (``seen``: as for :func:`_open`).

    Raises:
        _UnreadableError: a level is an encrypted secret (its value cannot be read).
    """
    value = _open(value, seen)
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = _open(value.get(key), seen)
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _settings(
    push: Callable[..., Any],
) -> tuple[dict[str, Any], tuple[str, ...], tuple[str, ...]]:
    """The :data:`PUSH_FIELDS` read with ``push(*keys, seen=...)`` under the push config; the
    fields not readable (encrypted); the fields read through a plaintext secret."""
    settings: dict[str, Any] = {}
    hidden: list[str] = []
    secret: list[str] = []
    reads: dict[str, tuple[str, ...]] = {
        "push_endpoint": ("pushEndpoint",),
        "push_auth_account": ("oidcToken", "serviceAccountEmail"),
        "audience": ("oidcToken", "audience"),
        "no_wrapper": ("noWrapper",),
        "write_metadata": ("noWrapper", "writeMetadata"),
        "attributes": ("attributes",),
    }
    for name, keys in reads.items():
        seen: list[bool] = []
        try:
            value = push(*keys, seen=seen)
            if name == "attributes" and isinstance(value, dict):
                value = {k: _open(v, seen) for k, v in value.items()}
        except _UnreadableError:
            hidden.append(name)
            continue
        if seen:
            secret.append(name)
        if name == "no_wrapper":
            settings[name] = isinstance(value, dict)
        elif name == "write_metadata":
            settings[name] = value if isinstance(value, bool) else None
        elif name == "attributes":
            settings[name] = _attributes(value)
        else:
            text = _text(value)
            settings[name] = text.lower() if text and name == "push_auth_account" else text
    return settings, tuple(hidden), tuple(secret)


def _attributes(value: Any) -> tuple[str, ...]:
    """Push attributes as sorted ``key=value`` strings (``x-goog-version``; an absent map is
    no attributes). Raises :class:`_UnreadableError` for an encrypted value inside."""
    if not isinstance(value, dict):
        return ()
    return tuple(sorted(f"{k}={v}" for k, v in value.items()))


def _kcc_path(outputs: Any) -> str | None:
    spec = _at(outputs, "spec")
    name = _text(_at(spec, "resourceID")) or _text(_at(outputs, "metadata", "name"))
    project = (
        _text(_at(spec, "projectRef", "external"))
        or _text(_at(outputs, "metadata", "annotations", PROJECT_ANNOTATION))
        or _text(_at(outputs, "metadata", "namespace"))
    )
    if not name or not project:
        return None
    return f"projects/{project.removeprefix('projects/')}/subscriptions/{name}"


def _block(value: Any, *keys: str, seen: list[bool] | None = None) -> Any:
    """:func:`_at` that also reads through a one-element list (an Upjet v1beta1 block)."""
    value = _open(value, seen)
    for key in keys:
        if isinstance(value, list) and len(value) == 1:
            value = _open(value[0], seen)
        if not isinstance(value, dict):
            return None
        value = _open(value.get(key), seen)
    if isinstance(value, list) and len(value) == 1:
        value = _open(value[0], seen)
    return value


def _empty(value: Any) -> bool:
    """Empty as Upjet's merge of ``initProvider`` into ``forProvider`` counts it (``mergo``'s
    ``isEmptyValue``): absent, ``""``, ``false``, zero, or an empty object or list."""
    if isinstance(value, bool | int | float):
        return not value
    return value is None or (isinstance(value, str | dict | list) and not value)


def _crossplane_value(outputs: Any, *keys: str, seen: list[bool] | None = None) -> Any:
    """``spec.forProvider.KEYS``, else (absent, or empty where ``initProvider`` sets it)
    ``spec.initProvider.KEYS``: field by field what Upjet's merge gives; an ``attributes`` map
    is both, ``forProvider``'s keys winning."""
    mine = _block(outputs, "spec", "forProvider", *keys, seen=seen)
    init = _block(outputs, "spec", "initProvider", *keys, seen=seen)
    if keys[-1:] == ("attributes",) and isinstance(mine, dict) and isinstance(init, dict):
        return {**init, **mine}
    return init if mine is None or (_empty(mine) and init is not None) else mine


def _crossplane_path(outputs: Any) -> str | None:
    found = _at(outputs, "status", "atProvider", "id")
    if isinstance(found, str) and PATH.match(found):
        return found
    project = _text(_crossplane_value(outputs, "project"))
    name = _text(_at(outputs, "metadata", "annotations", EXTERNAL_NAME)) or _text(
        _at(outputs, "metadata", "name")
    )
    if not project or not name or "/" in name or "/" in project:
        return None
    return f"projects/{project}/subscriptions/{name}"


def _path(resource_type: str, resource_id: str, outputs: Any) -> str | None:
    """The subscription's path from the resource's ``id`` or outputs (see the module)."""
    if resource_type == KCC_SUBSCRIPTION:
        return _kcc_path(outputs)
    if resource_type in CROSSPLANE_SUBSCRIPTIONS:
        return _crossplane_path(outputs)
    for candidate in (resource_id, _at(outputs, "name"), _at(outputs, "id")):
        if isinstance(candidate, str) and PATH.match(candidate):
            return candidate
    project, name = _text(_at(outputs, "project")), _text(_at(outputs, "name"))
    if project and name and "/" not in name:
        return f"projects/{project}/subscriptions/{name}"
    return None


def recorded_subscription(
    resource_type: str, resource_id: str, outputs: Mapping[str, Any] | None
) -> RecordedSubscription | None:
    """What a state resource of :data:`STATE_SUBSCRIPTION_TYPES` that is one subscription
    records of it (``None`` for any other type, a Deployment Manager deployment included:
    :func:`recorded_subscriptions`). ``outputs`` are the resource's outputs as the state holds
    them (secret envelopes and version 4 output values included). Never raises: a path below
    an encrypted secret is ``None``; a push field below one is in ``not_checked``."""
    if resource_type not in STATE_SUBSCRIPTION_TYPES or resource_type in DM_DEPLOYMENTS:
        return None
    try:
        path = _path(resource_type, resource_id, outputs or {})
    except _UnreadableError:
        path = None
    kcc = resource_type == KCC_SUBSCRIPTION
    base: tuple[str, ...] = ("spec", "pushConfig") if kcc else ("pushConfig",)

    def push(*keys: str, seen: list[bool]) -> Any:
        if resource_type in CROSSPLANE_SUBSCRIPTIONS:
            return _crossplane_value(outputs or {}, "pushConfig", *keys, seen=seen)
        return _at(outputs or {}, *base, *keys, seen=seen)

    settings, hidden, secret = _settings(push)
    return RecordedSubscription(path, settings, hidden, secret)


def recorded_subscriptions(
    resource_type: str, resource_id: str, outputs: Mapping[str, Any] | None
) -> list[RecordedSubscription]:
    """Every subscription a state resource records: :func:`recorded_subscription`'s one, or
    for a Deployment Manager deployment one per subscription of its configuration, plus one
    without a path when part of the configuration cannot be read (templates, a configuration
    that is encrypted or does not parse: the subscriptions it may hold are counted, never
    matched). Never raises."""
    if resource_type in DM_DEPLOYMENTS:
        return _deployment_subscriptions(outputs or {})
    found = recorded_subscription(resource_type, resource_id, outputs)
    return [] if found is None else [found]


_UNREAD = RecordedSubscription(None, {}, PUSH_FIELDS)


def _deployment_subscriptions(outputs: Mapping[str, Any]) -> list[RecordedSubscription]:
    seen: list[bool] = []  # a configuration read through a --show-secrets plaintext
    try:
        content = _at(outputs, "target", "config", "content", seen=seen)
        imports = _at(outputs, "target", "imports")
        project = _text(_at(outputs, "project"))
        document = parse_config(content) if isinstance(content, str) else None
    except (_UnreadableError, ConfigError):
        return [_UNREAD]
    if document is None:
        return [_UNREAD]
    entries = document.get("resources")
    found: list[RecordedSubscription] = []
    unread = bool(imports) or bool(imports_of(document)) or not isinstance(entries, list)
    for entry in entries if isinstance(entries, list) else []:
        kind = entry.get("type") if isinstance(entry, dict) else None
        if isinstance(kind, str) and is_template(kind):
            unread = True
        elif kind in SUBSCRIPTION_KINDS and isinstance(entry.get("name"), str):
            declared = _declared(entry.get("properties"), project)
            secret = tuple(f for f in PUSH_FIELDS if f not in declared.not_checked) if seen else ()
            found.append(replace(declared, part=entry["name"], secret=secret))
    return [*found, _UNREAD] if unread else found


def _declared(properties: Any, project: str | None) -> RecordedSubscription:
    """One subscription of a configuration: its path and push settings; a value holding a
    reference (``$(ref...)``, resolved by Deployment Manager) is never read as itself."""
    props = properties if isinstance(properties, dict) else {}
    name, ident = _text(props.get("name")), _text(props.get("subscription"))
    path = name if name and PATH.match(name) else None
    if path is None and project and (ident or name):
        path = f"projects/{project}/subscriptions/{ident or name}"
    if path is not None and ("$(" in path or not PATH.match(path)):
        path = None
    push = props.get("pushConfig")
    if "$(" in repr(push):
        return RecordedSubscription(path, {}, PUSH_FIELDS)

    def read(*keys: str, seen: list[bool]) -> Any:
        return _at(push if isinstance(push, dict) else None, *keys, seen=seen)

    settings, hidden, secret = _settings(read)
    return RecordedSubscription(path, settings, hidden, secret)


__all__ = [
    "CROSSPLANE_SUBSCRIPTIONS",
    "DM_DEPLOYMENTS",
    "ENCRYPTED",
    "EXTERNAL_NAME",
    "GCP_SUBSCRIPTION",
    "KCC_SUBSCRIPTION",
    "NATIVE_SUBSCRIPTION",
    "PUSH_FIELDS",
    "STATE_SUBSCRIPTION_TYPES",
    "TERRAFORM_SUBSCRIPTIONS",
    "RecordedSubscription",
    "recorded_subscription",
    "recorded_subscriptions",
]
