"""A ``gcp:eventarc/trigger:Trigger``'s wire properties -> the facts of an Eventarc trigger.

Every route's trigger reaches here in pulumi-gcp's form
(:mod:`pushguard.crossguard.routes.eventarc`).
Eventarc creates and manages the trigger's push subscription, so most of what the rules judge of a
subscription is Google's; the facts (:data:`~pushguard.rules.facts.EVENTARC_TRIGGER`) hold what the
trigger itself sets:

- ``push_endpoint``: ``destination.httpEndpoint.uri``, the one destination that is a URL of the
  trigger's own; ``trigger_destination`` names whichever destination is set;
- ``push_auth_account``: ``serviceAccount``, "the identity of the trigger"
  (https://cloud.google.com/eventarc/docs/reference/rest/v1/projects.locations.triggers);
- the project: ``project``, else the provider's, else the policy config's ``defaultProject``
  (as for a subscription, :meth:`WireResource.project`).

A value not known at preview is unknown, with the reason (the resources it is computed from; of an
HTTP endpoint built from known text and an unknown value, its known start is kept, as for a
subscription's, :mod:`pushguard.crossguard.facts`); with
a :class:`~pushguard.crossguard.graph.StackGraph`, an account created in the same stack stands for
its email (its project, when only that is known), as for a subscription's push-auth account.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pushguard.crossguard.facts import Resolution
from pushguard.crossguard.graph import ACCOUNT, StackGraph
from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.urn import urn_name
from pushguard.crossguard.wire import UNKNOWN, Unknown, get, get_raw, get_str, known_prefix
from pushguard.policy.settings import PackSettings
from pushguard.rules.facts import EVENTARC_TRIGGER, TRIGGER_DESTINATIONS, SubscriptionFacts

NO_PROJECT = (
    "the trigger's project is not known: the trigger names none, its provider's configuration "
    "has none and the policy config sets no defaultProject"
)
"""Why the project-dependent rules are not checked for a trigger without a project."""


def trigger_path(trigger: WireResource, resolution: Resolution) -> str:
    """``projects/P/locations/L/triggers/T`` of a trigger whose project, location and name are
    known (``""`` otherwise): the name an exception may use besides the URN."""
    name, location = trigger.props.get("name"), trigger.props.get("location")
    project = resolution.facts.project_id
    if not (isinstance(name, str) and isinstance(location, str) and name and location):
        return ""
    if not project or "unknown" in f"{name}{location}".lower():
        return ""
    return f"projects/{project}/locations/{location}/triggers/{name.rsplit('/', 1)[-1]}"


def trigger_facts(
    resource: WireResource, settings: PackSettings, graph: StackGraph | None = None
) -> Resolution:
    """The facts of one trigger (``resource`` in pulumi-gcp's form): its own properties, the
    policy config laid over them (:meth:`PackSettings.apply`), then, with a ``graph``, its
    account resolved through the stack.

    Raises:
        WireShapeError: a property has a shape the provider would reject.
    """
    read = _read(resource, settings.default_project, graph)
    facts = settings.apply(read.facts)
    if graph is None or "push_auth_account" not in facts.unknown:
        return Resolution(facts, read.reasons, read.unconfigured)
    accounts = graph.of_type(resource.depends_through("serviceAccount"), ACCOUNT)
    if len(accounts) != 1:
        return Resolution(facts, read.reasons, read.unconfigured)
    urn = accounts[0].urn
    email, project = graph.accounts.get(urn), graph.account_projects.get(urn)
    if not email and not project:
        return Resolution(facts, read.reasons, read.unconfigured)
    reasons = {k: v for k, v in read.reasons.items() if k != "push_auth_account"}
    resolved = facts.model_copy(
        update={
            "push_auth_account": email or None,
            "push_auth_account_project": None if email else project,
            "unknown": facts.unknown - {"push_auth_account"},
        }
    )
    return Resolution(resolved, reasons, read.unconfigured)


def _read(
    resource: WireResource, default_project: str | None, graph: StackGraph | None
) -> Resolution:
    """What the trigger's own properties state (no settings, no stack; ``graph`` only names the
    resources an unknown value is computed from)."""
    props = resource.props
    unknown: set[str] = set()
    reasons: dict[str, str] = {}
    unconfigured: dict[str, str] = {}

    def mark(fact: str, prop: str) -> None:
        unknown.add(fact)
        reasons[fact] = _why(resource, graph, prop)

    project = resource.project(default_project)
    if project is UNKNOWN:
        mark("project_id", "project")
        project = None
    elif project is None:
        unconfigured["project_id"] = resource.no_project or NO_PROJECT
    destination, endpoint = _destination(props)
    endpoint_prefix = ""
    if endpoint is UNKNOWN:
        mark("push_endpoint", "destination")
        if destination == "httpEndpoint":
            endpoint_prefix = known_prefix(get_raw(props, "destination.httpEndpoint.uri"))
    account = get_str(props, "serviceAccount")
    if account is UNKNOWN:
        mark("push_auth_account", "serviceAccount")
    known = project if isinstance(project, str) else None
    number = known is not None and known.isdigit()
    facts = SubscriptionFacts(
        resource=resource.urn,
        kind=EVENTARC_TRIGGER,
        trigger_destination=destination,
        project_id=None if number else known,
        project_number=known if number else None,
        push_endpoint=endpoint if isinstance(endpoint, str) else None,
        push_endpoint_prefix=endpoint_prefix,
        push_auth_account=account if isinstance(account, str) else None,
        unknown=frozenset(unknown),
    )
    return Resolution(facts, reasons, unconfigured)


def _destination(props: Mapping[str, Any]) -> tuple[str | None, str | Unknown | None]:
    """``(destination, endpoint)``: the key of :data:`TRIGGER_DESTINATIONS` the trigger sets
    (``None``: none, or the whole destination not known yet) and ``destination.httpEndpoint.uri``
    (:data:`UNKNOWN` when the destination or the URI is not known yet).

    Raises:
        WireShapeError: ``destination`` or ``uri`` has a shape the provider would reject.
    """
    if get(props, "destination") is UNKNOWN:
        return None, UNKNOWN
    named = [key for key in TRIGGER_DESTINATIONS if get(props, f"destination.{key}") is not None]
    destination = named[0] if named else None
    if destination != "httpEndpoint":
        return destination, None
    return destination, get_str(props, "destination.httpEndpoint.uri")


def _why(resource: WireResource, graph: StackGraph | None, prop: str) -> str:
    """Why ``prop`` is not known: the resources it is computed from, the route's own reason, or
    the usual causes."""
    deps = resource.depends_through(prop)
    if deps:
        names = ", ".join(_describe(graph, urn) for urn in deps)
        return f"{prop} is computed from {names}, not known until it is created"
    if resource.unknown_reason:
        return f"{prop} {resource.unknown_reason}"
    return (
        f"{prop} is not known at preview (a secret, a data source's result or another stack's "
        "output, for example)"
    )


def _describe(graph: StackGraph | None, urn: str) -> str:
    other = graph.resources.get(urn) if graph else None
    return urn_name(urn) if other is None else f"{other.type} {other.name!r}"
