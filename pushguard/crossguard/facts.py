"""A ``gcp:pubsub/subscription:Subscription``'s wire properties -> :class:`SubscriptionFacts`.

Read (camelCase, as pulumi-gcp sends them): ``pushConfig.pushEndpoint``,
``pushConfig.oidcToken.serviceAccountEmail``, ``pushConfig.oidcToken.audience``,
``enableExactlyOnceDelivery``, ``deadLetterPolicy.deadLetterTopic``, ``topic``, ``project``
(else the provider's ``project``, else the pack config's ``defaultProject``) and ``name``
(https://www.pulumi.com/registry/packages/gcp/api-docs/pubsub/subscription/).

Without a :class:`~pushguard.crossguard.graph.StackGraph` (a resource policy), IAM facts are "not
collected" and unknown values stay unknown. With one (a stack policy), unknown values are resolved
through the stack where the graph allows it; ``reasons`` says why what is left is unknown.

An endpoint not known at preview is never presumed to be a Google-issued URL, not even when it
is computed from a Cloud Run service's ``uri``/``urls`` or a function's URL in the same stack.
The reason: the pack cannot tell ``push_endpoint=svc.uri`` from ``svc.uri.apply(lambda u:
"http://" + ...)`` or ``Output.concat("http://relay.example/fwd?to=", svc.uri)``. Under the Pulumi
CLI and under ``pushguard preview`` both arrive as the unknown sentinel with a property
dependency on the service (the SDK serializes an unknown Output the same way whether or not an
apply produced it, and the mock runtime plans ``uri`` as unknown, as the provider does for a
create), so the offline preview has nothing the engine lacks to prove "the endpoint is that
output itself". Such an endpoint is undecided like any other unknown (an advisory "can't run
during preview" with ``unknownAtPreview: warn``, a violation with ``enforce``) and is checked at
``pulumi up``; only the service behind it (the invoker target) is taken from the dependency.
See :func:`_unknown_endpoint_from`.

A string endpoint that holds an unknown sentinel, or a fragment of one, is unknown too
(:func:`~pushguard.crossguard.wire.holds_unknown`: a program built it from a plain value an
offline preview does not know); the text before its first unknown part is kept
(``push_endpoint_prefix``, :func:`~pushguard.crossguard.wire.known_prefix`) for
``push-endpoint-https`` to judge the scheme it already decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pushguard.crossguard.graph import (
    ACCOUNT,
    FUNCTION_V1,
    FUNCTION_V2,
    RUN_V1,
    RUN_V2,
    TOPIC,
    ServiceInfo,
    StackGrant,
    StackGraph,
)
from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.urn import urn_name
from pushguard.crossguard.wire import UNKNOWN, get_bool, get_raw, get_str, known_prefix
from pushguard.policy.settings import PackSettings
from pushguard.rules.accounts import service_account_project
from pushguard.rules.endpoint import (
    EndpointError,
    cloud_run_default_url_form,
    is_google_serving_endpoint,
    parse_endpoint,
)
from pushguard.rules.facts import (
    EXTERNAL_TARGET,
    HeldGrant,
    IamBinding,
    IamGrant,
    InvokerTarget,
    SubscriptionFacts,
    TargetKind,
)


@dataclass
class Resolution:
    """One subscription's facts and, per unknown fact, why it is unknown (for diagnostics).

    ``unconfigured``: facts unknown for want of configuration rather than of values known only
    after deployment (no project anywhere, see :func:`_no_project`), fact -> reason: the rules
    that need them are *not checked*, whatever the stage."""

    facts: SubscriptionFacts
    reasons: dict[str, str] = field(default_factory=dict)
    unconfigured: dict[str, str] = field(default_factory=dict)


@dataclass
class _Builder:
    resource: WireResource
    graph: StackGraph | None
    values: dict[str, Any] = field(default_factory=dict)
    unknown: set[str] = field(default_factory=set)
    reasons: dict[str, str] = field(default_factory=dict)
    unconfigured: dict[str, str] = field(default_factory=dict)

    def mark_unknown(self, fact: str, prop: str) -> None:
        self.unknown.add(fact)
        deps = self.resource.depends_through(prop.split(".", 1)[0])
        names = ", ".join(self._describe(urn) for urn in deps)
        if names:
            self.reasons[fact] = f"{prop} is computed from {names}, not known until it is created"
        elif self.resource.unknown_reason:
            self.reasons[fact] = f"{prop} {self.resource.unknown_reason}"
        else:
            self.reasons[fact] = (
                f"{prop} is not known at preview (a secret, a data source's result or another "
                "stack's output, for example)"
            )

    def _describe(self, urn: str) -> str:
        other = self.graph.resources.get(urn) if self.graph else None
        if other is None:
            return urn_name(urn)
        return f"{other.type} {other.name!r}"

    def resolved(self, fact: str) -> None:
        self.unknown.discard(fact)
        self.reasons.pop(fact, None)


def subscription_facts(
    resource: WireResource, settings: PackSettings, graph: StackGraph | None = None
) -> Resolution:
    """The facts of one subscription: its own properties (:func:`wire_facts`), the policy
    config laid over them (:meth:`PackSettings.apply`), then, with a ``graph``, what the stack
    resolves.

    Raises:
        WireShapeError: a property has a shape the provider would reject (the caller reports it).
    """
    read = wire_facts(resource, settings.default_project, graph)
    facts = settings.apply(read.facts)
    doubt = settings.perimeter_doubt(read.facts)
    if doubt and "in_service_perimeter" not in read.unconfigured:
        read.unconfigured["in_service_perimeter"] = doubt
        facts = facts.model_copy(update={"unknown": facts.unknown | {"in_service_perimeter"}})
    if graph is None:
        return Resolution(facts, read.reasons, read.unconfigured)
    values = facts.model_dump(exclude={"unknown"})
    b = _Builder(
        resource, graph, values, set(facts.unknown), dict(read.reasons), dict(read.unconfigured)
    )
    _resolve_through_graph(b, graph, facts.in_service_perimeter)
    resolved = SubscriptionFacts(**b.values, unknown=frozenset(b.unknown))
    return Resolution(resolved, b.reasons, b.unconfigured)


def wire_facts(
    resource: WireResource, default_project: str | None = None, graph: StackGraph | None = None
) -> Resolution:
    """The facts a subscription's wire properties state, with no policy settings and no stack:
    the pure adapter of the pack (``default_project``: policy config ``defaultProject``, for a
    subscription whose provider sets no project either; ``graph`` only names the resources an
    unknown value is computed from).

    Raises:
        WireShapeError: a property has a shape the provider would reject.
    """
    b = _Builder(resource, graph)
    props = resource.props
    project = resource.project(default_project)
    if project is UNKNOWN:
        b.mark_unknown("project_id", "project")
        b.unknown.add("in_service_perimeter")  # whose perimeter is not known either
        project = None
    elif project is None:
        _no_project(b, resource.no_project)
    known_project = project if isinstance(project, str) else None
    is_number = known_project is not None and known_project.isdigit()

    endpoint = get_str(props, "pushConfig.pushEndpoint")
    endpoint_prefix = ""
    if endpoint is UNKNOWN:
        b.mark_unknown("push_endpoint", "pushConfig.pushEndpoint")
        endpoint_prefix = known_prefix(get_raw(props, "pushConfig.pushEndpoint"))
    account = get_str(props, "pushConfig.oidcToken.serviceAccountEmail")
    if account is UNKNOWN:
        b.mark_unknown("push_auth_account", "pushConfig.oidcToken.serviceAccountEmail")
    audience = get_str(props, "pushConfig.oidcToken.audience")
    if audience is UNKNOWN:
        b.unknown.add("audience")
    exactly_once = get_bool(props, "enableExactlyOnceDelivery")
    if exactly_once is UNKNOWN:
        b.mark_unknown("exactly_once_delivery", "enableExactlyOnceDelivery")
    dead_letter = get_str(props, "deadLetterPolicy.deadLetterTopic")
    if dead_letter is UNKNOWN:
        dead_letter = "a dead-letter topic not known yet"

    facts = SubscriptionFacts(
        resource=resource.urn,
        project_id=None if is_number else known_project,
        project_number=known_project if is_number else None,
        subscription_id=_known(props.get("name"), last_of="/subscriptions/"),
        topic=_known(props.get("topic")),
        push_endpoint=endpoint if isinstance(endpoint, str) else None,
        push_endpoint_prefix=endpoint_prefix,
        push_auth_account=account if isinstance(account, str) else None,
        audience=audience if isinstance(audience, str) else None,
        exactly_once_delivery=exactly_once is True,
        dead_letter_topic=dead_letter if isinstance(dead_letter, str) else None,
        unknown=frozenset(b.unknown),
    )
    return Resolution(facts, b.reasons, b.unconfigured)


def _known(value: object, last_of: str = "") -> str | None:
    """A top-level property's value when it is a known, non-empty string (``None`` for anything
    else: unknown, absent, another shape, which the rules read as they did); with ``last_of``,
    what follows its last occurrence (``S`` of ``projects/P/subscriptions/S``)."""
    if not isinstance(value, str) or not value:
        return None
    return value.rpartition(last_of)[2] if last_of else value


NO_PROJECT = (
    "the subscription's project is not known: the subscription names none, its provider's "
    "configuration has none (gcp:project for the default provider, the project input of an "
    "explicit one; the Google provider also reads GOOGLE_PROJECT, GOOGLE_CLOUD_PROJECT, "
    "GCLOUD_PROJECT and CLOUDSDK_CORE_PROJECT from its environment) and the policy config sets "
    "no defaultProject"
)
"""Why the project-dependent rules are not checked for a subscription without a project."""


def _no_project(b: _Builder, reason: str | None = None) -> None:
    """A subscription with no project anywhere: its own ``project``, its provider's (the
    provider's configuration as the engine sends it: an explicit provider's inputs, or for the
    default provider the stack's ``gcp:project`` and, in ``pushguard preview``, the provider's
    environment variables; https://www.pulumi.com/registry/packages/gcp/installation-configuration/)
    and ``defaultProject`` are all absent. The real provider would refuse to plan it; here every
    fact that depends on the project is *unconfigured* (:attr:`Resolution.unconfigured`), so each
    rule that needs it (the same-project comparison, the perimeter membership, the project number
    of the service agent) is listed as not checked with :data:`NO_PROJECT`, never passed: in
    particular whether the project is inside a perimeter is unknown, not "no". ``reason``: a
    route's own wording of where its project comes from (:attr:`WireResource.no_project`)."""
    b.unconfigured["project_id"] = reason or NO_PROJECT
    b.unconfigured["in_service_perimeter"] = reason or NO_PROJECT
    b.unknown.add("in_service_perimeter")


def _resolve_through_graph(b: _Builder, graph: StackGraph, in_perimeter: bool) -> None:
    pushed_from = b.resource.depends_through("pushConfig")
    service = _endpoint_service(b, graph, pushed_from)
    account_keys = _resolve_account(b, graph, pushed_from)
    if not in_perimeter:
        _resolve_perimeter(b, graph)

    project = b.values["project_id"] or b.values["project_number"]
    project_keys = graph.project_keys(project)
    account_project = _account_project(b)
    on_account = account_keys | graph.project_keys(account_project)
    b.values["push_auth_account_grants"] = _grants(b, graph, on_account, "push_auth_account_grants")
    b.values["push_auth_account_bindings"] = _bindings(b, graph, on_account)
    if service is not None:
        grants = _grants(b, graph, set(service.keys) | project_keys, "invoker_target")
        b.values["invoker_target"] = InvokerTarget(
            kind=service.kind,
            name=service.name,
            grants=grants,
            grants_complete=bool(service.urn),  # a service not declared: only the stack's grants
        )
    elif b.values["push_endpoint"] and not is_google_serving_endpoint(b.values["push_endpoint"]):
        b.values["invoker_target"] = EXTERNAL_TARGET

    topic_keys = {
        f"urn:{t.urn}" for t in graph.of_type(b.resource.depends_through("deadLetterPolicy"), TOPIC)
    }
    if b.values["dead_letter_topic"] and b.values["dead_letter_topic"].startswith("projects/"):
        topic_keys.add(f"topic:{b.values['dead_letter_topic']}")
    b.values["dead_letter_topic_grants"] = _grants(
        b, graph, topic_keys | project_keys, "dead_letter_topic_grants"
    )
    sub_keys = {f"urn:{b.resource.urn}"}
    name = get_str(b.resource.props, "name")
    if isinstance(name, str) and project:
        sub_keys.add(f"sub:projects/{project}/subscriptions/{name}")
    b.values["subscription_grants"] = _grants(
        b, graph, sub_keys | project_keys, "subscription_grants"
    )
    relied_on = on_account | sub_keys | topic_keys | project_keys
    if service is not None:
        relied_on |= set(service.keys)
    account = b.values["push_auth_account"]
    pusher = {f"serviceAccount:{account}"} if account else set()
    b.values["held_grants"] = held_grants(graph, relied_on, pusher)


def held_grants(graph: StackGraph, keys: set[str], members: set[str]) -> tuple[HeldGrant, ...]:
    """The additive grants with a known member that are on ``keys`` or to one of ``members``
    (wherever they are: the push-auth account's invoker grant on a service the stack does not
    declare), each once with the names of every resource that holds it (same role, member and
    condition on an intersecting target), in declaration order; for the
    ``push-shared-iam-binding`` rule."""
    found = [g for g in graph.grants_on_or_to(keys, members) if g.additive and not g.member_unknown]
    held: list[tuple[StackGrant, list[str]]] = []
    for g in found:
        same = next(
            (
                names
                for first, names in held
                if (first.grant.role, first.grant.member, first.grant.condition)
                == (g.grant.role, g.grant.member, g.grant.condition)
                and first.targets & g.targets
            ),
            None,
        )
        resource = graph.resources.get(g.holder)
        name = resource.name if resource is not None else urn_name(g.holder)
        if same is None:
            held.append((g, [name]))
        elif name not in same:
            same.append(name)
    return tuple(HeldGrant(grant=g.grant, holders=tuple(names)) for g, names in held)


def _endpoint_service(
    b: _Builder, graph: StackGraph, pushed_from: tuple[str, ...]
) -> ServiceInfo | None:
    """The Cloud Run service or function behind the endpoint, if it is in the stack.

    An endpoint not known yet that depends on exactly one service in the stack is served by it
    (the invoker grant is checked there), but it stays unknown: see :func:`_unknown_endpoint_from`.
    """
    endpoint = b.values["push_endpoint"]
    if "push_endpoint" in b.unknown:
        return _unknown_endpoint_from(b, graph, pushed_from)
    if not endpoint:
        return None
    found = graph.service_for_url(endpoint)
    if found is not None:
        return found
    try:
        parsed = parse_endpoint(endpoint)
    except EndpointError:
        return None
    if cloud_run_default_url_form(parsed) == "deterministic":
        label = parsed.host.split(".", 1)[0].rpartition("---")[2]
        kind, name = TargetKind.CLOUD_RUN, label.rsplit("-", 1)[0]
        key = f"run:{name}"
    elif parsed.host.endswith(".cloudfunctions.net"):
        kind, name = TargetKind.CLOUD_FUNCTION_V1, parsed.path.strip("/").split("/", 1)[0]
        key = f"fn:{name}"
    else:
        return graph.sibling_service(b.resource.parent)
    declared = next((s for s in graph.services.values() if key in s.keys), None)
    return declared or ServiceInfo(urn="", kind=kind, name=name, url=None, keys=frozenset({key}))


def _unknown_endpoint_from(
    b: _Builder, graph: StackGraph, pushed_from: tuple[str, ...]
) -> ServiceInfo | None:
    """The one Cloud Run service or Cloud Function in the stack an unknown endpoint depends on,
    or ``None``; the endpoint stays unknown either way, and its reason names the service.

    Decision (issue 20): at preview, ``push_endpoint=svc.uri`` and any value computed from it
    (``svc.uri.apply(lambda u: "http://" + ...)``, ``Output.concat("http://relay/?to=",
    svc.uri)``, a custom domain built from it) reach the pack identically, from the Pulumi engine
    and from ``pushguard preview`` alike: the unknown sentinel with a property dependency on the
    service. The SDK serializes an unknown Output passed through unchanged and one returned by an
    apply the same way (the apply's callback never runs on an unknown value, and custom resources
    never receive Output values on the wire), and the mock runtime plans the service's
    ``uri``/``urls`` as unknown, as the provider does for a create. Nothing on the wire proves
    "the endpoint IS the service's URL", so it is never presumed to be a Google-issued ``https://``
    or ``run.app`` URL: the rules that read the endpoint (``push-endpoint-https``,
    ``push-vpcsc-default-url``, ``push-no-query-token``) report it as undecided at preview, and
    check the real value at ``pulumi up``, when it is known. What the dependency does prove is
    which service serves the push (the only one the value is computed from), so the invoker
    target is still that service, and a 1st-gen function's only URL still fails in a perimeter.
    """
    sources = graph.of_type(pushed_from, RUN_V2, RUN_V1, FUNCTION_V2, FUNCTION_V1)
    if len(sources) != 1:
        return None
    source = sources[0]
    output = "uri" if source.type == RUN_V2 else "URL"
    b.reasons["push_endpoint"] = (
        f"pushConfig.pushEndpoint is computed from {source.type} {source.name!r}, not known "
        f"until it is created; at preview its {output} itself and a value computed from it look "
        "alike, so neither is presumed to be a Google-issued URL"
    )
    return graph.services.get(source.urn)


def _resolve_account(b: _Builder, graph: StackGraph, pushed_from: tuple[str, ...]) -> set[str]:
    """Identity keys of the push-auth account; resolves an email not known yet."""
    email = b.values["push_auth_account"]
    if "push_auth_account" in b.unknown:
        accounts = graph.of_type(pushed_from, ACCOUNT)
        if len(accounts) != 1:
            return set()
        urn = accounts[0].urn
        derived = graph.accounts.get(urn)
        if derived:
            b.values["push_auth_account"] = derived
        elif graph.account_projects.get(urn):
            b.values["push_auth_account_project"] = graph.account_projects[urn]
        else:
            return set()
        b.resolved("push_auth_account")
        return {f"urn:{urn}"} | ({f"sa:{derived}"} if derived else set())
    if not email:
        return set()
    keys = {f"sa:{email}"}
    keys |= {f"urn:{urn}" for urn, known in graph.accounts.items() if known == email}
    return keys


def _account_project(b: _Builder) -> str | None:
    email = b.values["push_auth_account"]
    if email:
        owner = service_account_project(email)
        return (owner.project_id or owner.project_number) if owner else None
    project = b.values.get("push_auth_account_project")
    return project if isinstance(project, str) else None


def _resolve_perimeter(b: _Builder, graph: StackGraph) -> None:
    number = b.values["project_number"]
    if number and number in graph.perimeter_numbers:
        b.values["in_service_perimeter"] = True
    elif graph.perimeter_uncertain:
        b.unknown.add("in_service_perimeter")
        b.reasons["in_service_perimeter"] = graph.perimeter_uncertain[0]
    elif graph.perimeter_numbers and not number:
        project = b.values["project_id"] or "the subscription's project"
        b.unknown.add("in_service_perimeter")
        b.reasons["in_service_perimeter"] = (
            f"the stack declares service perimeters by project number and the number of {project} "
            "is not configured (policy config projectNumbers)"
        )


def _bindings(b: _Builder, graph: StackGraph, keys: set[str]) -> tuple[IamBinding, ...] | None:
    """Authoritative bindings on ``keys``; ``None`` (and the fact unknown) if a member of one is
    not known yet, since it may be the member a rule looks for."""
    found = list(graph.bindings_on(keys))
    if any(sb.members_unknown for sb in found):
        fact = "push_auth_account_bindings"
        b.unknown.add(fact)
        b.reasons[fact] = (
            "a binding's member is computed from a value not known until it is created"
        )
        return None
    return tuple(sb.binding for sb in found)


def _grants(
    b: _Builder, graph: StackGraph, keys: set[str], fact: str
) -> tuple[IamGrant, ...] | None:
    """Grants on ``keys``; ``None`` (and the fact unknown) if a member is not known yet."""
    found: list[StackGrant] = list(graph.grants_on(keys))
    if any(g.member_unknown for g in found):
        b.unknown.add(fact)
        b.reasons[fact] = "a grant's member is computed from a value not known until it is created"
        return None
    return tuple(g.grant for g in found)
