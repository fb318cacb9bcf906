"""What a whole stack says that one resource cannot: accounts, services, grants and perimeters.

At preview, outputs of resources the stack is about to create are unknown: a push-auth account's
email, a Cloud Run service's ``uri``, a grant's ``serviceAccountId``. Pulumi still records which
resources each property was computed from (property dependencies), and the inputs that determine
those outputs are known. :class:`StackGraph` uses both:

- a ``gcp:serviceaccount/account:Account``'s email is ``ACCOUNT_ID@PROJECT.iam.gserviceaccount.com``
  (https://cloud.google.com/iam/docs/service-accounts-create), known from its ``accountId`` and
  project;
- a value computed from exactly one resource of a kind is taken to be that resource's identity
  (a member from one account) or to be served by it (an endpoint from one Cloud Run service: the
  service to check invoker grants on); an endpoint is never taken to be the service's URL, since
  ``svc.uri`` and a value computed from it look alike at preview
  (:mod:`pushguard.crossguard.facts`);
- a grant applies to whatever its target property names, literally or through its dependencies.

Identity keys: ``sa:EMAIL``, ``run:SERVICE``, ``fn:FUNCTION``, ``topic:projects/P/topics/T``,
``sub:projects/P/subscriptions/S``, ``project:ID_OR_NUMBER`` and ``urn:URN`` for any resource.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.urn import is_stack_urn
from pushguard.crossguard.wire import UNKNOWN, Unknown, WireShapeError, get, get_str, get_str_list
from pushguard.policy.settings import PackSettings
from pushguard.rules.accounts import service_account_email
from pushguard.rules.endpoint import EndpointError, parse_endpoint
from pushguard.rules.facts import IamBinding, IamGrant, TargetKind

ACCOUNT = "gcp:serviceaccount/account:Account"
RUN_V2 = "gcp:cloudrunv2/service:Service"
RUN_V1 = "gcp:cloudrun/service:Service"
FUNCTION_V2 = "gcp:cloudfunctionsv2/function:Function"
FUNCTION_V1 = "gcp:cloudfunctions/function:Function"
TOPIC = "gcp:pubsub/topic:Topic"
PERIMETER = "gcp:accesscontextmanager/servicePerimeter:ServicePerimeter"
PERIMETERS = "gcp:accesscontextmanager/servicePerimeters:ServicePerimeters"
PERIMETER_RESOURCE = "gcp:accesscontextmanager/servicePerimeterResource:ServicePerimeterResource"
PUBSUB_API = "pubsub.googleapis.com"

# IAM resource types: type token -> (target property, key kind). Member resources carry
# ``member`` and add one grant; binding resources ``members`` and policy resources ``policyData``
# are authoritative: they set every member of a role (see :class:`StackBinding`).
IAM_TARGETS: Mapping[str, tuple[str, str]] = {
    "gcp:serviceaccount/iAMMember:IAMMember": ("serviceAccountId", "sa"),
    "gcp:serviceaccount/iAMBinding:IAMBinding": ("serviceAccountId", "sa"),
    "gcp:serviceaccount/iAMPolicy:IAMPolicy": ("serviceAccountId", "sa"),
    "gcp:projects/iAMMember:IAMMember": ("project", "project"),
    "gcp:projects/iAMBinding:IAMBinding": ("project", "project"),
    "gcp:projects/iAMPolicy:IAMPolicy": ("project", "project"),
    "gcp:cloudrunv2/serviceIamMember:ServiceIamMember": ("name", "run"),
    "gcp:cloudrunv2/serviceIamBinding:ServiceIamBinding": ("name", "run"),
    "gcp:cloudrunv2/serviceIamPolicy:ServiceIamPolicy": ("name", "run"),
    "gcp:cloudrun/iamMember:IamMember": ("service", "run"),
    "gcp:cloudrun/iamBinding:IamBinding": ("service", "run"),
    "gcp:cloudrun/iamPolicy:IamPolicy": ("service", "run"),
    "gcp:cloudfunctions/functionIamMember:FunctionIamMember": ("cloudFunction", "fn"),
    "gcp:cloudfunctions/functionIamBinding:FunctionIamBinding": ("cloudFunction", "fn"),
    "gcp:cloudfunctions/functionIamPolicy:FunctionIamPolicy": ("cloudFunction", "fn"),
    "gcp:pubsub/topicIAMMember:TopicIAMMember": ("topic", "topic"),
    "gcp:pubsub/topicIAMBinding:TopicIAMBinding": ("topic", "topic"),
    "gcp:pubsub/topicIAMPolicy:TopicIAMPolicy": ("topic", "topic"),
    "gcp:pubsub/subscriptionIAMMember:SubscriptionIAMMember": ("subscription", "sub"),
    "gcp:pubsub/subscriptionIAMBinding:SubscriptionIAMBinding": ("subscription", "sub"),
    "gcp:pubsub/subscriptionIAMPolicy:SubscriptionIAMPolicy": ("subscription", "sub"),
}


def _last_segment(value: str, marker: str) -> str:
    """``projects/p/serviceAccounts/x`` -> ``x`` (for marker ``serviceAccounts/``); else value."""
    _, found, rest = value.rpartition(marker)
    return rest if found else value


@dataclass(frozen=True)
class StackGrant:
    """A grant declared in the stack and the identity keys of what it is granted on.
    ``grant.member`` is empty when the member is not known yet (``member_unknown``)."""

    grant: IamGrant
    targets: frozenset[str]
    member_unknown: bool = False
    kind: str = ""
    """The target's key kind: ``sa``, ``project``, ``run``, ``fn``, ``topic`` or ``sub``."""
    parent: str | None = None
    """The URN of the granting resource's parent (a component), if any."""
    holder: str = ""
    """The granting resource's URN."""
    additive: bool = False
    """Made by an additive ``*IAMMember`` (one binding), not a binding or policy."""


@dataclass(frozen=True)
class StackBinding:
    """An authoritative binding declared in the stack (a ``*IAMBinding``, or one binding of a
    ``*IAMPolicy``'s ``policyData``) and the identity keys of what it is on. Its members are in
    :attr:`StackGraph.grants` too; ``members_unknown`` when one of them is not known yet (it is
    then left out of ``binding.members``)."""

    binding: IamBinding
    targets: frozenset[str]
    members_unknown: bool = False


@dataclass(frozen=True)
class ServiceInfo:
    """A Cloud Run service (or 2nd-gen function) or a 1st-gen function declared in the stack."""

    urn: str
    kind: TargetKind
    name: str
    url: str | None
    keys: frozenset[str]


@dataclass
class StackGraph:
    """An index over every resource of one stack, for resolving one subscription's facts.

    ``problems`` collects resources whose properties could not be read (URN, message); the
    policies report them instead of raising.
    """

    settings: PackSettings
    resources: Mapping[str, WireResource] = field(default_factory=dict)
    accounts: dict[str, str | None] = field(default_factory=dict)
    """Account URN -> email (``None`` when it cannot be derived)."""
    account_projects: dict[str, str | None] = field(default_factory=dict)
    services: dict[str, ServiceInfo] = field(default_factory=dict)
    grants: list[StackGrant] = field(default_factory=list)
    bindings: list[StackBinding] = field(default_factory=list)
    perimeter_numbers: set[str] = field(default_factory=set)
    """Project numbers inside a stack-declared perimeter that restricts Pub/Sub."""
    perimeter_uncertain: list[str] = field(default_factory=list)
    """Why some perimeter membership cannot be decided (unknown values)."""
    problems: list[tuple[str, str]] = field(default_factory=list)
    _grants_on: dict[str, list[int]] = field(default_factory=dict, repr=False)
    """Target key -> positions in :attr:`grants` (kept by :meth:`_add_grant`, so a query reads
    the grants it matches, not every grant of the stack once per subscription)."""
    _grants_to: dict[str, list[int]] = field(default_factory=dict, repr=False)
    """Member -> positions in :attr:`grants`."""
    _grants_by_parent: dict[str | None, list[int]] = field(default_factory=dict, repr=False)
    """Granting resource's parent -> positions in :attr:`grants`."""
    _bindings_on: dict[str, list[int]] = field(default_factory=dict, repr=False)
    """Target key -> positions in :attr:`bindings`."""

    @classmethod
    def build(cls, resources: Iterable[WireResource], settings: PackSettings) -> StackGraph:
        """Index ``resources``; never raises on malformed properties (see ``problems``)."""
        graph = cls(settings=settings, resources={r.urn: r for r in resources})
        # Grants last: an unknown member is resolved through the accounts indexed first.
        ordered = sorted(graph.resources.values(), key=lambda r: r.type in IAM_TARGETS)
        for resource in ordered:
            try:
                graph._index(resource)
            except WireShapeError as error:
                graph.problems.append((resource.urn, str(error)))
        return graph

    def _project(self, resource: WireResource) -> str | None:
        project = resource.project(self.settings.default_project)
        return project if isinstance(project, str) else None

    def _index(self, resource: WireResource) -> None:
        kind = resource.type
        if kind == ACCOUNT:
            self._index_account(resource)
        elif kind in (RUN_V2, RUN_V1, FUNCTION_V2, FUNCTION_V1):
            self._index_service(resource)
        elif kind in (PERIMETER, PERIMETERS, PERIMETER_RESOURCE):
            self._index_perimeter(resource)
        elif kind in IAM_TARGETS:
            self._index_grants(resource)

    def _index_account(self, resource: WireResource) -> None:
        project = self._project(resource)
        self.account_projects[resource.urn] = project
        email = get_str(resource.props, "email")
        if isinstance(email, str):
            self.accounts[resource.urn] = email.lower()
            return
        account_id = get_str(resource.props, "accountId")
        ok = isinstance(account_id, str) and project is not None
        self.accounts[resource.urn] = service_account_email(account_id, project) if ok else None  # type: ignore[arg-type]

    def _index_service(self, resource: WireResource) -> None:
        name = get_str(resource.props, "name")
        name = name if isinstance(name, str) else None
        if resource.type == FUNCTION_V1:
            kind, url_path, prefix = TargetKind.CLOUD_FUNCTION_V1, "httpsTriggerUrl", "fn"
        else:
            kind, prefix = TargetKind.CLOUD_RUN, "run"
            url_path = {RUN_V2: "uri", RUN_V1: "statuses.url", FUNCTION_V2: "url"}[resource.type]
        try:
            url = get_str(resource.props, url_path)
        except WireShapeError:
            url = None
        keys = {f"urn:{resource.urn}"}
        if name:
            keys.add(f"{prefix}:{_last_segment(name, '/')}")
        self.services[resource.urn] = ServiceInfo(
            urn=resource.urn,
            kind=kind,
            name=name or resource.name,
            url=url if isinstance(url, str) else None,
            keys=frozenset(keys),
        )

    def _index_perimeter(self, resource: WireResource) -> None:
        if resource.type == PERIMETER_RESOURCE:
            project = get_str(resource.props, "resource")
            self._add_perimeter_members((project,), restricted=self._linked_restriction(resource))
            return
        bodies: list[Any]
        if resource.type == PERIMETERS:
            listed = get(resource.props, "servicePerimeters")
            if listed is UNKNOWN:
                self.perimeter_uncertain.append(f"the perimeters of {resource.name} are not known")
                return
            bodies = list(listed or [])
        else:
            bodies = [resource.props]
        for body in bodies:
            if not isinstance(body, Mapping):
                raise WireShapeError("servicePerimeters[]", "an object", body)
            if get_str(body, "perimeterType") == "PERIMETER_TYPE_BRIDGE":
                continue  # bridges connect perimeters; they restrict nothing themselves
            members = get_str_list(body, "status.resources")
            services = get_str_list(body, "status.restrictedServices")
            restricted = _restricts_pubsub(services)
            if isinstance(members, Unknown):
                self.perimeter_uncertain.append(f"the projects of {resource.name} are not known")
                continue
            self._add_perimeter_members(members, restricted)

    def _linked_restriction(self, resource: WireResource) -> bool | None:
        """Whether the perimeter a ``ServicePerimeterResource`` joins restricts Pub/Sub: known
        when that perimeter is declared in the stack, ``None`` (assume yes) otherwise."""
        for urn in resource.depends_through("perimeterName"):
            other = self.resources.get(urn)
            if other is not None and other.type == PERIMETER:
                return _restricts_pubsub(get_str_list(other.props, "status.restrictedServices"))
        return None

    def _add_perimeter_members(
        self, members: Iterable[str | Unknown | None], restricted: bool | None
    ) -> None:
        if restricted is False:
            return
        for member in members:
            if isinstance(member, str):
                self.perimeter_numbers.add(member.removeprefix("projects/"))
            else:
                self.perimeter_uncertain.append("a perimeter's project list is not known yet")

    def _index_grants(self, resource: WireResource) -> None:
        target_prop, key_kind = IAM_TARGETS[resource.type]
        targets = self._target_keys(resource, target_prop, key_kind)
        condition = get(resource.props, "condition")
        title = None
        if isinstance(condition, Mapping):
            found = condition.get("title") or condition.get("expression")
            title = found if isinstance(found, str) else "condition"
        elif condition is UNKNOWN:
            title = "a condition not known yet"
        role = get_str(resource.props, "role")
        if "policyData" in resource.props:
            self._index_policy_data(resource, targets)
            return
        if not isinstance(role, str):
            return
        listed: list[str | Unknown | None]
        if "members" not in resource.props:
            member = get_str(resource.props, "member")
            self._add_grant(resource, role, member, title, targets, additive=True)
            return
        members = get_str_list(resource.props, "members")
        listed = [UNKNOWN] if isinstance(members, Unknown) else list(members)
        self._add_binding(resource, role, listed, title, targets)

    def _index_policy_data(self, resource: WireResource, targets: frozenset[str]) -> None:
        data = get_str(resource.props, "policyData")
        if not isinstance(data, str):
            return
        try:
            bindings = json.loads(data).get("bindings", [])
        except (ValueError, AttributeError):
            raise WireShapeError("policyData", "an IAM policy in JSON", data) from None
        for binding in bindings if isinstance(bindings, list) else []:
            role = binding.get("role") if isinstance(binding, Mapping) else None
            if not isinstance(role, str):
                continue
            condition = binding.get("condition")
            title = None
            if isinstance(condition, Mapping):
                title = str(condition.get("title") or condition.get("expression") or "condition")
            members = binding.get("members") or []
            listed = [m for m in members if isinstance(m, str)] if isinstance(members, list) else []
            self._add_binding(resource, role, listed, title, targets)

    def _add_binding(
        self,
        resource: WireResource,
        role: str,
        members: Sequence[str | Unknown | None],
        condition: str | None,
        targets: frozenset[str],
    ) -> None:
        """Each member as a grant, and the binding as a whole (who it would leave out)."""
        added = [self._add_grant(resource, role, m, condition, targets) for m in members]
        grants = [g for g in added if g is not None]
        known = tuple(g.grant.member for g in grants if not g.member_unknown)
        binding = IamBinding(
            role=role, members=known, resource=self._where(resource, targets), condition=condition
        )
        unknown = any(g.member_unknown for g in grants)
        for key in targets:
            self._bindings_on.setdefault(key, []).append(len(self.bindings))
        self.bindings.append(StackBinding(binding, targets, unknown))

    def _add_grant(
        self,
        resource: WireResource,
        role: str,
        member: str | Unknown | None,
        condition: str | None,
        targets: frozenset[str],
        *,
        additive: bool = False,
    ) -> StackGrant | None:
        if member is None:
            return None
        unknown = False
        if not isinstance(member, str):
            deps = resource.depends_through("member") + resource.depends_through("members")
            emails = {self.accounts.get(urn) for urn in deps} - {None}
            member, unknown = (
                (f"serviceAccount:{emails.pop()}", False) if len(emails) == 1 else ("", True)
            )
        where = self._where(resource, targets)
        grant = IamGrant(role=role, member=member, resource=where, condition=condition)
        kind = IAM_TARGETS[resource.type][1]
        added = StackGrant(grant, targets, unknown, kind, resource.parent, resource.urn, additive)
        position = len(self.grants)
        for key in targets:
            self._grants_on.setdefault(key, []).append(position)
        self._grants_to.setdefault(member, []).append(position)
        self._grants_by_parent.setdefault(resource.parent, []).append(position)
        self.grants.append(added)
        return added

    @staticmethod
    def _where(resource: WireResource, targets: frozenset[str]) -> str:
        """How a grant names what it is on: its first literal key, else the granting resource."""
        return next((t for t in sorted(targets) if not t.startswith("urn:")), resource.name)

    def _target_keys(self, resource: WireResource, prop: str, kind: str) -> frozenset[str]:
        keys = {f"urn:{urn}" for urn in resource.depends_through(prop)}
        value = get_str(resource.props, prop)
        if isinstance(value, str):
            keys.add(self._literal_key(resource, kind, value))
        return frozenset(keys)

    def _literal_key(self, resource: WireResource, kind: str, value: str) -> str:
        if kind == "sa":
            return f"sa:{_last_segment(value, 'serviceAccounts/').lower()}"
        if kind == "project":
            return f"project:{value.removeprefix('projects/')}"
        if kind in ("run", "fn"):
            return f"{kind}:{_last_segment(value, '/')}"
        collection = "topics" if kind == "topic" else "subscriptions"
        if value.startswith("projects/"):
            return f"{kind}:{value}"
        return f"{kind}:projects/{self._project(resource)}/{collection}/{value}"

    # --- queries -------------------------------------------------------------------------

    def of_type(self, urns: Iterable[str], *types: str) -> list[WireResource]:
        """The resources among ``urns`` (in the stack) whose type is one of ``types``."""
        found = (self.resources.get(urn) for urn in urns)
        return [r for r in found if r is not None and r.type in types]

    def grants_on(self, keys: Iterable[str]) -> Iterator[StackGrant]:
        """Grants whose target matches any of ``keys``, in declaration order."""
        return (self.grants[i] for i in _positions(self._grants_on, keys))

    def grants_on_or_to(self, keys: Iterable[str], members: Iterable[str]) -> list[StackGrant]:
        """Grants whose target matches any of ``keys`` or whose member is one of ``members``,
        each once, in declaration order."""
        on, to = _positions(self._grants_on, keys), _positions(self._grants_to, members)
        return [self.grants[i] for i in sorted({*on, *to})]

    def bindings_on(self, keys: Iterable[str]) -> Iterator[StackBinding]:
        """Authoritative bindings whose target matches any of ``keys``, in declaration
        order."""
        return (self.bindings[i] for i in _positions(self._bindings_on, keys))

    def project_keys(self, project: str | None) -> set[str]:
        """Identity keys of a project given by ID or number: by both names where
        ``projectNumbers`` gives the other (:meth:`PackSettings.resolve`)."""
        if not project:
            return set()
        names = self.settings.resolve(project)
        return {f"project:{project}"} | {f"project:{name}" for name in names if name}

    def sibling_service(self, parent: str | None) -> ServiceInfo | None:
        """The service that invoker grants made by the same component (``parent``) are on:
        pushguard's component grants the invoker role next to the subscription it creates.

        Never a guess: ``None`` when ``parent`` is the stack itself (every top-level resource
        is a sibling there, so a grant says nothing of where a subscription pushes) and when
        the component's grants are on more than one service."""
        if not parent or is_stack_urn(parent):
            return None
        siblings = (self.grants[i] for i in self._grants_by_parent.get(parent, ()))
        grants = [g for g in siblings if g.kind in ("run", "fn")]
        if not grants:
            return None
        keys = frozenset().union(*(g.targets for g in grants))
        declared = {
            service.urn or service.name: service
            for service in self.services.values()
            if keys & service.keys
        }
        if len(declared) > 1:
            return None
        if declared:
            return next(iter(declared.values()))
        named = sorted({k.split(":", 1)[1] for k in keys if not k.startswith("urn:")})
        if len(named) > 1 or len({g.kind for g in grants}) > 1:
            return None
        kind = TargetKind.CLOUD_RUN if grants[0].kind == "run" else TargetKind.CLOUD_FUNCTION_V1
        return ServiceInfo(urn="", kind=kind, name=named[0] if named else "", url=None, keys=keys)

    def service_for_url(self, url: str) -> ServiceInfo | None:
        """The service in the stack whose known URL has the same scheme, host and port as
        ``url`` (both read by :func:`~pushguard.rules.endpoint.parse_endpoint`)."""
        origin = _origin(url)
        if origin is None:
            return None
        for service in self.services.values():
            if service.url and _origin(service.url) == origin:
                return service
        return None


def _positions(index: Mapping[Any, list[int]], keys: Iterable[Any]) -> list[int]:
    """The positions ``index`` lists under any of ``keys``, each once, in ascending order."""
    return sorted({i for key in set(keys) for i in index.get(key, ())})


def _restricts_pubsub(services: tuple[str | Unknown, ...] | Unknown) -> bool | None:
    """Whether a perimeter's restricted services include Pub/Sub; ``None`` if not known."""
    if isinstance(services, Unknown) or UNKNOWN in services:
        return None
    return PUBSUB_API in services


def _origin(url: str) -> tuple[str, str, int] | None:
    try:
        endpoint = parse_endpoint(url)
    except EndpointError:
        return None
    return endpoint.scheme, endpoint.host, endpoint.effective_port
