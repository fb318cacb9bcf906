"""Deployment Manager deployments declared with pulumi-gcp -> pulumi-gcp's wire form.

pulumi-gcp's ``gcp.deploymentmanager.Deployment`` (``gcp:deploymentmanager/deployment:Deployment``;
https://www.pulumi.com/registry/packages/gcp/api-docs/deploymentmanager/deployment/,
https://github.com/pulumi/pulumi-gcp ``sdk/python/pulumi_gcp/deploymentmanager/deployment.py``)
sends ``target.config.content`` ("The full YAML contents of your configuration file"),
``target.imports`` (``name``, ``content``: templates and other files the configuration imports),
``project`` ("If it is not provided, the provider project is used"), ``name`` and ``preview``.
The same Terraform schema (``google_deployment_manager_deployment``) bridged with ``pulumi package
add terraform-provider`` is ``google:index/deploymentManagerDeployment:DeploymentManagerDeployment``
(and ``google-beta:``...; :mod:`.terraform` names the rule). Deployment Manager then creates every
resource the configuration lists, so one Pulumi resource may create many push subscriptions.

The configuration (https://cloud.google.com/deployment-manager/docs/configuration/syntax-reference,
https://cloud.google.com/deployment-manager/docs/fundamentals): a YAML document whose
``resources`` each have a ``name``, a ``type`` (a base type such as ``pubsub.v1.subscription``,
a type provider's ``gcp-types/pubsub-v1:projects.subscriptions``, an imported ``.jinja``/``.py``
template or a composite type ``PROJECT/composite:NAME``) or an ``action`` (an API method call),
``properties`` and ``accessControl`` (an IAM policy set on the resource); ``imports`` name
templates, which Deployment Manager expands into more resources (``{{ }}`` and ``{% %}`` are
their Jinja syntax; https://cloud.google.com/deployment-manager/docs/configuration/templates/create-composite-types
for composite types); ``$(ref.NAME.PROPERTY)`` is a reference to another resource's property,
resolved only when that resource exists. The two Pub/Sub subscription types mapped
(https://cloud.google.com/deployment-manager/docs/configuration/supported-resource-types,
https://cloud.google.com/deployment-manager/docs/configuration/supported-gcp-types; Google's
samples in https://github.com/GoogleCloudPlatform/deploymentmanager-samples
``google/resource-snippets/pubsub-v1/pubsub.jinja`` and
https://github.com/GoogleCloudPlatform/cloud-foundation-toolkit ``dm/templates/pubsub/pubsub.py``)
take the Pub/Sub v1 REST ``Subscription`` as their properties
(https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions): ``subscription``
(the ID), ``name`` (``projects/P/subscriptions/ID``, which names the project), ``topic``,
``pushConfig`` (pulumi-gcp's field names), ``deadLetterPolicy.deadLetterTopic``,
``enableExactlyOnceDelivery``. Each becomes one ``gcp:pubsub/subscription:Subscription`` whose
project is the one in ``name``, else the deployment's ``project``, else the provider's (as for
any pulumi-gcp resource); its URN is the deployment's with ``#`` and the Deployment Manager
resource name, so its findings stay apart from its siblings', and they are placed on the
deployment (:attr:`WireResource.reported_on`).

What cannot be read offline is never passed (:attr:`Config.unreadable`, "cannot be checked"): a
``content`` not known yet, YAML that does not parse, imports, templates and composite types (their
expansion is not run), template syntax, a reference in a field the rules read, and a resource of
any other type or an action whose properties carry a push configuration (``pushConfig``,
``pushEndpoint``, in any spelling). IAM granted inside the deployment (``accessControl``, a
``setIamPolicy`` action, an ``iamMemberBinding`` virtual type) is not mapped: the grant rules are
then not checked for the stack (:attr:`Config.grants`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from pushguard.crossguard.resources import SUBSCRIPTION_TYPE, WireResource
from pushguard.crossguard.routes.names import PUSH_CONFIG, bridged, keys_of
from pushguard.crossguard.wire import UNKNOWN, WireShapeError, get, holds_unknown
from pushguard.state.deployment_manager import (
    SUBSCRIPTION_KINDS,
    ConfigError,
    imports_of,
    is_template,
    parse_config,
)
from pushguard.state.subscriptions import DM_DEPLOYMENT, DM_DEPLOYMENTS, PATH

DEPLOYMENT = DM_DEPLOYMENT
DEPLOYMENTS = DM_DEPLOYMENTS
"""The deployment types this adapter maps (pulumi-gcp's and the bridged Terraform providers'),
in the order the routes table lists them."""
TYPES: frozenset[str] = frozenset(DEPLOYMENTS)

_READ = ("pushConfig", "deadLetterPolicy", "enableExactlyOnceDelivery", "name", "subscription")
"""The subscription properties the rules read (directly or for the project and ID)."""
_SCHEMA: dict[str, Any] = {
    "pushConfig": PUSH_CONFIG,
    "subscription": None,
    "name": None,
    "topic": None,
    "enableExactlyOnceDelivery": None,
    "deadLetterPolicy": keys_of("deadLetterTopic"),
}
_PUSH_SHAPED = frozenset({"pushconfig", "pushendpoint"})
_IAM_MARKS = ("setiampolicy", "iammemberbinding")


@dataclass(frozen=True)
class Config:
    """What one deployment's configuration gives the pack: ``subscriptions`` in pulumi-gcp's
    form; ``unreadable``: why part of it cannot be checked (each a sentence, naming the
    Deployment Manager resource); ``grants``: where it grants IAM roles pushguard does not map."""

    subscriptions: tuple[WireResource, ...] = ()
    unreadable: tuple[str, ...] = ()
    grants: tuple[str, ...] = ()


class _UnreadableError(Exception):
    """Why a configuration (or part of it) cannot be read."""


@dataclass
class _Reading:
    resource: WireResource
    subscriptions: list[WireResource] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    grants: list[str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)


def read(resource: WireResource) -> Config:
    """The configuration of ``resource`` (a type of :data:`TYPES`), read as Deployment Manager
    would expand it (see the module docstring). Never raises: what cannot be read is in
    :attr:`Config.unreadable`, and its grants are then presumed (:attr:`Config.grants`)."""
    try:
        props = bridged(resource.props)
        content, imports = _target(props)
        document = parse_config(content)
    except (_UnreadableError, ConfigError, WireShapeError) as why:
        return Config(unreadable=(str(why),), grants=(_UNREAD_GRANTS,))
    reading = _Reading(replace(resource, props=props))
    if imports or document.get("imports"):
        listed = dict.fromkeys([*imports, *imports_of(document)])
        named = ", ".join(repr(n) for n in listed) or "unnamed files"
        reading.unreadable.append(
            f"its configuration imports {named}: templates expand into resources pushguard "
            "does not see (it does not run their expansion); declare the subscriptions in the "
            "configuration itself, or with pulumi-gcp"
        )
    if "{{" in content or "{%" in content:
        reading.unreadable.append(
            "its configuration holds template syntax ({{ }} or {% %}), which only a template "
            "expansion resolves"
        )
    entries = document.get("resources") or []
    if not isinstance(entries, list):
        reading.unreadable.append("its configuration's resources is not a list")
        entries = []
    for entry in entries:
        _entry(reading, entry)
    if reading.unreadable:
        reading.grants.append(_UNREAD_GRANTS)
    return Config(tuple(reading.subscriptions), tuple(reading.unreadable), tuple(reading.grants))


_UNREAD_GRANTS = "a configuration pushguard cannot read in full, which may grant roles"


def _target(props: Mapping[str, Any]) -> tuple[str, list[str]]:
    """``(target.config.content, the names in target.imports)``.

    Raises:
        _UnreadableError: the content is not known (at preview) or not a string.
        WireShapeError: ``target`` or ``config`` is not an object.
    """
    content = get(props, "target.config.content")
    if content is UNKNOWN:
        raise _UnreadableError(
            "its target.config.content is not known offline (computed from a value known only "
            "at deployment, or a secret that stays encrypted), so the subscriptions it declares "
            "are not known"
        )
    if not isinstance(content, str):
        raise _UnreadableError("its target.config.content is not set to the configuration's YAML")
    imports = get(props, "target.imports")
    if imports is UNKNOWN or holds_unknown(repr(imports)):
        raise _UnreadableError("its target.imports are not known offline")
    listed = imports if isinstance(imports, list) else [] if imports is None else [imports]
    names = [str(i.get("name")) if isinstance(i, Mapping) else "?" for i in listed]
    return content, names


def _entry(reading: _Reading, entry: Any) -> None:
    """One item of ``resources``: mapped, refused or passed over."""
    if not isinstance(entry, Mapping):
        reading.unreadable.append("an item of its configuration's resources is not a mapping")
        return
    name = entry.get("name")
    kind = entry.get("type")
    label = f"Deployment Manager resource {name!r}"
    if isinstance(kind, str) and is_template(kind):
        reading.unreadable.append(
            f"{label} is of type {kind!r}, a template or composite type whose resources "
            "pushguard does not see (it does not run their expansion)"
        )
        return
    _grants(reading, entry, label)
    properties = entry.get("properties")
    if kind in SUBSCRIPTION_KINDS:
        _subscription(reading, name, properties, label)
        return
    key = _push_shaped(properties)
    if key is not None:
        what = f"type {kind!r}" if kind is not None else f"action {entry.get('action')!r}"
        reading.unreadable.append(
            f"{label} ({what}) sets {key}, a push configuration pushguard does not read for "
            f"it (mapped: {', '.join(SUBSCRIPTION_KINDS)})"
        )


def _grants(reading: _Reading, entry: Mapping[str, Any], label: str) -> None:
    if entry.get("accessControl") is not None:
        reading.grants.append(f"accessControl of {label}")
    for key in ("type", "action"):
        value = entry.get(key)
        if isinstance(value, str) and any(m in value.lower() for m in _IAM_MARKS):
            reading.grants.append(f"{key} {value!r} of {label}")


def _push_shaped(value: Any) -> str | None:
    """The first key at any depth of ``value`` that spells ``pushConfig`` or ``pushEndpoint``
    (case, ``_`` and ``-`` aside)."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if re.sub(r"[^a-z]", "", str(key).lower()) in _PUSH_SHAPED:
                return str(key)
            found = _push_shaped(inner)
            if found is not None:
                return found
    elif isinstance(value, list):
        for inner in value:
            found = _push_shaped(inner)
            if found is not None:
                return found
    return None


def _subscription(reading: _Reading, name: Any, properties: Any, label: str) -> None:
    """A mapped subscription, or why it cannot be read."""
    if not isinstance(name, str) or not name or name in reading.names:
        reading.unreadable.append(f"{label}: a subscription needs a name of its own")
        return
    reading.names.add(name)
    if properties is not None and not isinstance(properties, Mapping):
        reading.unreadable.append(f"{label}: its properties are not a mapping")
        return
    props = properties or {}
    referenced = [k for k in _READ if "$(" in repr(props.get(k))]
    if referenced:
        reading.unreadable.append(
            f"{label}: {', '.join(referenced)} holds a reference ($(ref.NAME.PROPERTY)), "
            "resolved by Deployment Manager only once the referenced resource exists"
        )
        return
    spelt = _misspelt(props, _SCHEMA, "") or _push_shaped(
        {k: v for k, v in props.items() if k != "pushConfig"}
    )
    if spelt is not None:
        reading.unreadable.append(
            f"{label}: {spelt!r} is not the name of a property pushguard reads (pushConfig, "
            "pushConfig.pushEndpoint...) but spells one: Deployment Manager sends the properties "
            "to the Pub/Sub API under the names given, and what the API makes of it is not "
            "presumed"
        )
        return
    reading.subscriptions.append(_as_gcp(reading.resource, name, props))


def _folded(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


def _misspelt(props: Any, schema: Mapping[str, Any], path: str) -> str | None:
    """The first key of ``props`` (at the depths ``schema`` describes) that folds (case, ``_``
    and ``-`` aside) to a key of ``schema`` it is not, as a dotted path; ``None`` if none."""
    if not isinstance(props, Mapping):
        return None
    folded = {_folded(k): k for k in schema}
    for key, value in props.items():
        where = f"{path}.{key}" if path else str(key)
        meant = folded.get(_folded(str(key)))
        if meant is not None and meant != key:
            return where
        inner = schema.get(str(key)) if meant == key else None
        found = _misspelt(value, inner, where) if inner is not None else None
        if found is not None:
            return found
    return None


def _as_gcp(deployment: WireResource, name: str, props: Mapping[str, Any]) -> WireResource:
    """One subscription of ``deployment`` as a ``gcp:pubsub/subscription:Subscription``."""
    path = props.get("name")
    project: Any = None
    ident = props.get("subscription")
    if isinstance(path, str) and (match := PATH.match(path)):
        project, ident = match.group(1), ident or match.group(2)
    elif isinstance(path, str) and ident is None:
        ident = path
    if project is None:
        project = _deployment_project(deployment)
    canonical: dict[str, Any] = {
        key: copy.deepcopy(props[key])
        for key in ("topic", "pushConfig", "deadLetterPolicy", "enableExactlyOnceDelivery")
        if props.get(key) is not None
    }
    if ident is not None:
        canonical["name"] = ident
    if project is not None:
        canonical["project"] = project
    through = deployment.depends_through("target")
    deps = {key: through for key in canonical if key != "project" and through}
    if deployment.depends_through("project"):
        deps["project"] = deployment.depends_through("project")
    return replace(
        deployment,
        urn=f"{deployment.urn}#{name}",
        type=SUBSCRIPTION_TYPE,
        name=f"{deployment.name}/{name}",
        props=canonical,
        property_dependencies=deps,
        reported_on=deployment.urn,
        no_project=(
            f"the project of Deployment Manager resource {name!r} is not known: its name is not "
            "projects/P/subscriptions/S, the deployment names no project and neither does its "
            "provider's configuration (or GOOGLE_PROJECT...), and the policy config sets no "
            "defaultProject"
        ),
    )


def _deployment_project(deployment: WireResource) -> str | None:
    """The deployment's own ``project`` (Pulumi's unknown sentinel when not known yet; its
    provider's is read through the resource)."""
    value = get(deployment.props, "project")
    if value is UNKNOWN:
        return UNKNOWN_STRING_VALUE
    return value if isinstance(value, str) and value else None


def to_gcp(resource: WireResource) -> list[WireResource]:
    """The push subscriptions ``resource`` (a type of :data:`TYPES`) declares, in pulumi-gcp's
    form (:func:`read`)."""
    return list(read(resource).subscriptions)


def cannot_check(resource: WireResource) -> str | None:
    """Why part of ``resource``'s configuration cannot be checked (each reason once, joined),
    or ``None`` when all of it is read."""
    found = read(resource).unreadable
    return "; ".join(dict.fromkeys(found)) if found else None


def unmapped_grants(resource: WireResource) -> str | None:
    """The grants ``resource``'s configuration makes that pushguard does not map, described,
    or ``None``."""
    found = read(resource).grants
    return f"{resource.type} ({'; '.join(dict.fromkeys(found))})" if found else None
