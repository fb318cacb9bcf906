"""What an exception's ``resource`` can name, its one spelling, and the names it matches.

An exception (:mod:`pushguard.policy.exceptions`) names one resource in one of these forms; any
other value is refused when the policy config is read (exit 2 in ``pushguard preview``,
``analyze`` and ``audit``; the pack reports the bad setting on every subscription), so a typo
never becomes an exception that silently matches nothing:

============================================  =====================================================
form                                          matched by
============================================  =====================================================
``projects/P/subscriptions/S``                the audit; the pack, the preview and analyze when the
                                              subscription's project and name are known
``//pubsub.googleapis.com/projects/P/...``    the same: the Cloud Asset Inventory full name (the
                                              audit's ``asset_name``) is normalised to the path
``projects/P/locations/L/triggers/T``         an Eventarc trigger, in the pack, preview and analyze
``urn:pulumi:STACK::PROJECT::TYPE::NAME``     the pack, preview and analyze (a Deployment Manager
                                              resource: the deployment's URN or ``URN#RESOURCE``)
============================================  =====================================================

- ``P`` is a project ID or a project number. A project ID is 6 to 30 lower-case letters, digits
  and hyphens, starts with a letter and does not end with a hyphen
  (https://cloud.google.com/resource-manager/docs/creating-managing-projects, "Project ID
  requirements"; :data:`~pushguard.rules.facts.PROJECT_ID_PATTERN`, which also accepts the
  domain-scoped ``example.com:proj``): ``Acme-Orders`` cannot exist and is refused. A path
  names a subscription by either of its project's names: ``projectNumbers`` (and, in the audit,
  the export's project number) make ``projects/123456789012/subscriptions/S`` and
  ``projects/acme-orders/subscriptions/S`` the same resource (:func:`project_variants`).
- ``S`` starts with a letter and has 3 to 255 letters, digits and ``- _ . ~ + %``, not starting
  with ``goog`` (the ``Subscription.name`` field of google/pubsub/v1/pubsub.proto in
  googleapis/googleapis; https://cloud.google.com/pubsub/docs/pubsub-basics#resource_names).
- ``L`` is a location such as ``europe-west1`` or ``global``, ``T`` a trigger ID (the resource name
  pattern of https://cloud.google.com/eventarc/docs/reference/rest/v1/projects.locations.triggers).
- A URN has its four parts (https://www.pulumi.com/docs/iac/concepts/resources/names/#urns).
- There are no wildcards: ``*`` (alone or as a part) is refused. An exception accepts one risk on
  one resource.

The audit reads subscriptions from Cloud Asset Inventory, so a URN or a trigger path in a config it
reads matches nothing there; it lists such an exception as unused, with that reason
(:mod:`pushguard.audit.exception_use`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final, Literal

from pushguard.rules.facts import PROJECT_ID_PATTERN, PROJECT_NUMBER_PATTERN

ResourceKind = Literal["subscription", "trigger", "urn"]
"""What an exception's resource names: a subscription path, an Eventarc trigger path, a URN."""

CAI_PUBSUB_PREFIX: Final = "//pubsub.googleapis.com/"
"""Cloud Asset Inventory's prefix of a Pub/Sub asset's full resource name
(https://cloud.google.com/asset-inventory/docs/resource-name-format)."""

ALLOWED: Final = (
    "projects/PROJECT/subscriptions/SUBSCRIPTION (or its Cloud Asset Inventory name "
    "//pubsub.googleapis.com/projects/PROJECT/subscriptions/SUBSCRIPTION), "
    "projects/PROJECT/locations/LOCATION/triggers/TRIGGER, or a Pulumi URN "
    "urn:pulumi:STACK::PROJECT::TYPE::NAME; PROJECT is a project ID or number, and there are "
    "no wildcards"
)
"""What a resource may be, as error messages say it."""

_PROJECT_ID = re.compile(PROJECT_ID_PATTERN)
_PROJECT_NUMBER = re.compile(PROJECT_NUMBER_PATTERN)
_SUBSCRIPTION_ID = re.compile(r"^(?!goog)[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$")
_LOCATION = re.compile(r"^[a-z][a-z0-9-]*$")
_TRIGGER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.~+%-]*$")
_SUBSCRIPTION_PATH = re.compile(r"^projects/([^/]*)/subscriptions/([^/]*)$")
_TRIGGER_PATH = re.compile(r"^projects/([^/]*)/locations/([^/]*)/triggers/([^/]*)$")
_URN_PREFIX: Final = "urn:pulumi:"


_PROJECT_RULES: Final = (
    "a project ID is 6 to 30 lower-case letters, digits and hyphens, starts with a letter and "
    "does not end with a hyphen: https://cloud.google.com/resource-manager/docs/"
    "creating-managing-projects"
)


def _project(value: str, resource: str) -> None:
    if _PROJECT_NUMBER.match(value) or _PROJECT_ID.match(value):
        return
    if value.lower() != value and _PROJECT_ID.match(value.lower()):
        raise ValueError(
            f"{resource!r}: the project ID {value!r} cannot exist: it has upper-case letters "
            f"({_PROJECT_RULES})"
        )
    raise ValueError(
        f"{resource!r}: {value!r} is neither a project ID nor a project number ({_PROJECT_RULES})"
    )


def _subscription(project: str, name: str, resource: str) -> None:
    _project(project, resource)
    if not _SUBSCRIPTION_ID.match(name):
        raise ValueError(
            f"{resource!r}: {name!r} is not a subscription ID (it starts with a letter, has 3 to "
            "255 letters, digits and - _ . ~ + %, and does not start with goog)"
        )


def _trigger(project: str, location: str, name: str, resource: str) -> None:
    _project(project, resource)
    if not _LOCATION.match(location):
        raise ValueError(f"{resource!r}: {location!r} is not a location (such as europe-west1)")
    if not _TRIGGER_ID.match(name):
        raise ValueError(f"{resource!r}: {name!r} is not a trigger ID")


def _urn(value: str) -> None:
    parts = value[len(_URN_PREFIX) :].split("::", 3)
    if len(parts) != 4 or not all(p.strip() for p in parts):
        raise ValueError(f"{value!r} is not a Pulumi URN (urn:pulumi:STACK::PROJECT::TYPE::NAME)")
    if "*" in (p.strip() for p in parts):
        raise ValueError(f"{value!r}: wildcards are not supported; an exception names one resource")


def normalise_resource(value: str) -> str:
    """``value`` (already stripped) as an exception's resource in its one spelling: a Cloud Asset
    Inventory full name becomes the subscription path it ends in; every other accepted form is
    kept as given (see the module docstring).

    Raises:
        ValueError: ``value`` is none of the accepted forms, or a part of it cannot exist (an
            upper-case project ID, a subscription ID Pub/Sub refuses, a wildcard); the message
            names the value and what is allowed.
    """
    if value.startswith(_URN_PREFIX):
        _urn(value)
        return value
    path = value.removeprefix(CAI_PUBSUB_PREFIX)
    if "*" in path:
        raise ValueError(
            f"{value!r}: wildcards are not supported; an exception names one resource: {ALLOWED}"
        )
    subscription = _SUBSCRIPTION_PATH.match(path)
    if subscription:
        project, name = subscription.groups()
        _subscription(project, name, value)
        return path
    trigger = _TRIGGER_PATH.match(path)
    if trigger and path == value:
        project, location, name = trigger.groups()
        _trigger(project, location, name, value)
        return path
    raise ValueError(f"{value!r} is not a resource an exception can name: {ALLOWED}")


def resource_kind(resource: str) -> ResourceKind:
    """The kind of a normalised resource (:func:`normalise_resource`)."""
    if resource.startswith(_URN_PREFIX):
        return "urn"
    return "trigger" if _TRIGGER_PATH.match(resource) else "subscription"


def path_project(name: str) -> str | None:
    """The project part of a subscription or trigger path (its CAI prefix ignored), else
    ``None``."""
    path = name.removeprefix(CAI_PUBSUB_PREFIX)
    match = _SUBSCRIPTION_PATH.match(path) or _TRIGGER_PATH.match(path)
    return match.group(1) if match else None


def project_variants(name: str, projects: Iterable[str | None]) -> list[str]:
    """``name`` (CAI prefix removed) followed by the same subscription or trigger path with its
    project replaced by each of ``projects`` (the other names of that project: its ID, its
    number); a URN or a name that is no such path comes back alone."""
    path = name.removeprefix(CAI_PUBSUB_PREFIX)
    own = path_project(path)
    if own is None:
        return [path]
    rest = path[len("projects/") + len(own) :]
    others = [f"projects/{p}{rest}" for p in projects if p and p != own]
    return [path, *dict.fromkeys(others)]
