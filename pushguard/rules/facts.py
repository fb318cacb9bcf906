"""Plain facts about one push subscription and its surroundings: what every rule reads.

The same model carries what an Eventarc trigger sets of the push subscription Eventarc manages for
it (:data:`EVENTARC_TRIGGER`); a rule judges a trigger only when its
:attr:`~pushguard.rules.base.Rule.kinds` say so.

Each enforcement point fills these models from its own world (component args, Pulumi wire
properties, Cloud Asset Inventory rows); the rules never see anything else.

Unknown versus absent: a field whose value is not known yet (an unresolved Pulumi Output at
preview) is listed in :attr:`SubscriptionFacts.unknown` and holds ``None``; an absent value is
``None`` and not listed. For the IAM facts, ``None`` means "not collected here" (the component does
not look at IAM policies it did not write), while an empty tuple means "collected, and there is no
grant".
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pushguard.rules.accounts import normalise_email, pubsub_service_agent_email
from pushguard.rules.managed import Management

PROJECT_ID_PATTERN = r"^(?:[a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$"
"""A project ID: 6 to 30 lower-case letters, digits and hyphens, starting with a letter, optionally
domain-scoped (``example.com:proj``); https://cloud.google.com/resource-manager/docs/creating-managing-projects"""
PROJECT_NUMBER_PATTERN = r"^[0-9]{1,20}$"
"""A project number: digits only."""


class ProjectNames(NamedTuple):
    """One project by both of its names, each ``None`` where not known: the project ID and the
    project number (https://cloud.google.com/resource-manager/docs/creating-managing-projects#identifying_projects)."""

    id: str | None = None
    number: str | None = None

    def same_as(self, other: ProjectNames) -> bool | None:
        """True or False when a name known on both sides decides it (IDs compared
        case-insensitively); ``None`` when no name is known on both sides."""
        if self.id and other.id:
            return self.id.lower() == other.id.lower()
        if self.number and other.number:
            return self.number == other.number
        return None


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class IamGrant(_Frozen):
    """One role granted to one member on one resource.

    ``resource`` is where the grant is made, as a resource name: ``projects/my-proj``,
    ``projects/my-proj/serviceAccounts/sa@my-proj.iam.gserviceaccount.com``, ``folders/123``,
    ``organizations/456``, a topic, a subscription or a Cloud Run service. Grants made on an
    ancestor are listed with the ancestor's name: they are inherited (IAM policy inheritance,
    https://cloud.google.com/iam/docs/resource-hierarchy-access-control).
    ``condition`` is the condition's title or expression for a conditional binding, which a rule
    cannot prove holds; rules report such grants as such instead of counting them.
    ``permissions``: what the role carries of
    :data:`~pushguard.rules.iam.IMPERSONATION_PERMISSIONS`, when the source of the grant says so
    (the audit reads a custom role's ``includedPermissions`` from the export's
    ``iam.googleapis.com/Role`` asset); ``None``: the rules look the role up in the table of
    Google's predefined roles (:func:`~pushguard.rules.iam.role_permissions`).
    """

    role: str
    member: str
    resource: str = ""
    condition: str | None = None
    permissions: tuple[str, ...] | None = None


class IamBinding(_Frozen):
    """An authoritative binding as a deployment declares it: Pulumi's ``*IAMBinding``, or one
    binding in the ``policyData`` of a ``*IAMPolicy``. Applying it makes ``members`` the *only*
    members of ``role`` on ``resource`` (for its ``condition``): a member it does not list loses
    the role there (https://www.pulumi.com/registry/packages/gcp/api-docs/projects/iambinding/).

    Its members are also listed as :class:`IamGrant` objects where grants are collected; this
    model adds what a grant cannot say: who would lose the role. ``resource`` and ``condition`` are
    spelled as for :class:`IamGrant`.
    """

    role: str
    members: tuple[str, ...] = ()
    resource: str = ""
    condition: str | None = None


class HeldGrant(_Frozen):
    """One additive grant (a Pulumi ``*IAMMember``) and the resources of the stack that hold it,
    by name. An ``*IAMMember`` manages one (resource, role, member) binding: when any of its
    holders is deleted, the binding is removed, for every holder
    (https://www.pulumi.com/registry/packages/gcp/api-docs/projects/iammember/)."""

    grant: IamGrant
    holders: tuple[str, ...]


class TargetKind(StrEnum):
    """What serves the push endpoint, which decides the invoker binding
    (:data:`pushguard.rules.iam.INVOKER`). The component's ``target.kind`` input, the pack's and
    the audit's facts all use this one type."""

    CLOUD_RUN = "cloud-run"
    """A Cloud Run service: ``roles/run.invoker`` on the service."""
    CLOUD_FUNCTION_V1 = "cloud-function-v1"
    """A 1st-gen Cloud Function: ``roles/cloudfunctions.invoker`` on the function."""
    CLOUD_FUNCTION_V2 = "cloud-function-v2"
    """A 2nd-gen Cloud Function: ``roles/run.invoker`` on its Cloud Run service."""
    EXTERNAL = "external"
    """An endpoint outside Google Cloud: no invoker binding."""


class InvokerTarget(_Frozen):
    """The service behind the push endpoint and the grants that are effective on it.

    ``grants`` includes grants inherited from the target's project and ancestors; ``None`` means
    the grants were not collected. ``grants_complete`` is ``False`` when ``grants`` are only the
    ones seen, not the target's whole IAM policy: a stack's own grants on a service it does not
    declare (its policy is kept outside the stack), so a grant found there proves itself, but
    none found proves nothing.
    """

    kind: TargetKind
    name: str = ""
    grants: tuple[IamGrant, ...] | None = None
    grants_complete: bool = True


EXTERNAL_TARGET = InvokerTarget(kind=TargetKind.EXTERNAL)
"""The target of an endpoint that Google does not serve: nothing to invoke, no IAM to check."""

FactsKind = Literal["subscription", "eventarc-trigger"]
"""What a :class:`SubscriptionFacts` describes: a Pub/Sub subscription, or an Eventarc trigger
(whose push subscription Eventarc creates and manages; see :data:`EVENTARC_TRIGGER`)."""

EVENTARC_TRIGGER: FactsKind = "eventarc-trigger"
"""The kind of facts read from an Eventarc trigger
(https://cloud.google.com/eventarc/docs/reference/rest/v1/projects.locations.triggers). Eventarc
creates and manages the Pub/Sub subscription behind a trigger (``transport.pubsub.subscription``:
"created and managed by Eventarc system as a transport for the event delivery"), so its push
config is Google's; what the trigger itself sets is read into these fields:
``push_endpoint`` is ``destination.httpEndpoint.uri`` (an HTTP endpoint in a VPC network, reached
through a network attachment), ``push_auth_account`` is ``serviceAccount`` ("the identity of the
trigger"; for Cloud Run destinations the account Eventarc generates identity tokens for), and
``trigger_destination`` names the destination. Only the rules whose
:attr:`~pushguard.rules.base.Rule.kinds` include it judge such facts."""

TRIGGER_DESTINATIONS: Mapping[str, str] = {
    "httpEndpoint": "HTTP endpoint",
    "cloudRunService": "Cloud Run service",
    "gke": "GKE service",
    "workflow": "Workflows workflow",
    "cloudFunction": "Cloud Function",
}
"""An Eventarc trigger's destinations, by pulumi-gcp's name of the ``destination`` field
(https://www.pulumi.com/registry/packages/gcp/api-docs/eventarc/trigger/), in words. Only
``httpEndpoint`` is a URL of the trigger's own; Eventarc addresses the others itself."""


class SubscriptionFacts(_Frozen):
    """Everything the rules know about one subscription.

    ``resource`` names it in findings (a Pulumi URN, a CAI asset name, a component name).
    Project identifiers are plain (``my-proj``, ``123456789012``), not ``projects/...``.
    ``push_endpoint`` ``None`` or empty means a pull (or BigQuery / Cloud Storage) subscription: no
    push rule applies to it, which is also how a paused push subscription looks
    (https://cloud.google.com/pubsub/docs/push#stop_and_resume_push_delivery).
    """

    resource: str
    project_id: str | None = None
    project_number: str | None = None
    subscription_id: str | None = None
    """The subscription's ID (``S`` of ``projects/P/subscriptions/S``), ``None`` when not known:
    with :attr:`topic`, what tells a Google-managed subscription
    (:mod:`pushguard.rules.google_managed`)."""
    topic: str | None = None
    """The subscription's topic (``projects/P/topics/T``, or ``T`` in the subscription's
    project as pulumi-gcp accepts it), ``None`` when not known."""
    project_number_claimed: bool = False
    """``project_number`` is only what the checked program says of itself (a
    ``PushSubscription``'s ``project_number``), not the source's nor the policy config's: good
    enough to name the service agent, never to decide that two projects are the same."""
    push_endpoint: str | None = None
    push_endpoint_source: Literal["cloud-run", "cloud-function"] | None = None
    """Set when the endpoint is not known yet but is computed from one service in the same
    deployment: a Cloud Run service (its default URL, ``uri``) or a Cloud Function (its
    ``cloudfunctions.net`` or ``run.app`` URL). Both are ``https://`` URLs Google issues; the
    rules presume the endpoint is that URL, perhaps with a path, until the real value is known."""
    push_endpoint_prefix: str = ""
    """What is known of an endpoint not known yet (``push_endpoint`` in :attr:`unknown`): the
    text before its first unknown part, when the program built it from known text and a value
    not known yet (``"http://" + host + "/push"`` gives ``http://``); ``""`` when nothing of it
    is known. Only ``push-endpoint-https`` judges it (the scheme); the rules that need the host
    wait for the whole value."""
    exempt_endpoint_prefixes: tuple[str, ...] = ()
    """Endpoint prefixes exempt from ``push-endpoint-https`` (policy config
    ``exemptEndpointPrefixes``), compared against the raw endpoint."""
    push_auth_account: str | None = None
    """The OIDC token's service account email (``pushConfig.oidcToken.serviceAccountEmail``)."""
    push_auth_account_project: str | None = None
    """The push-auth account's project when its email is not known yet (an account created in the
    same Pulumi stack). Project ID or number."""
    push_auth_account_project_names: ProjectNames | None = None
    """The push-auth account's project by both names, as far as the enforcement point knows them
    (the policy config's ``projectNumbers``; :meth:`pushguard.policy.settings.PackSettings.apply`).
    ``None``: only what the e-mail or :attr:`push_auth_account_project` says."""
    audience: str | None = None
    exactly_once_delivery: bool = False
    dead_letter_topic: str | None = None
    in_service_perimeter: bool = False
    """The subscription's project is inside a VPC Service Controls service perimeter."""
    service_perimeters: tuple[str, ...] = ()
    """The names (``accessPolicies/POLICY/servicePerimeters/NAME``) of the perimeters that put the
    project inside, where the source knows them (the audit, from the export's perimeters); empty
    otherwise. Only for people: reports name the perimeter, nothing is decided by it."""
    push_auth_account_grants: tuple[IamGrant, ...] | None = None
    """Grants effective on the push-auth account: on the account itself and inherited from its
    project, folders and organization. ``None``: not collected."""
    push_auth_account_bindings: tuple[IamBinding, ...] | None = None
    """Authoritative bindings a deployment declares on the push-auth account or its project, which
    would replace the members of their role there when applied (the pack reads them from the
    stack). ``None``: not collected (the component declares none; the audit reads policies as they
    are, with nothing to apply)."""
    token_creator_known_granted: bool = False
    """The service agent's token-creator grant is known to exist outside what was collected
    (policy config ``tokenCreatorGrantedProjects``)."""
    invoker_target: InvokerTarget | None = None
    """The service behind the endpoint; ``None``: not known."""
    dead_letter_topic_grants: tuple[IamGrant, ...] | None = None
    subscription_grants: tuple[IamGrant, ...] | None = None
    held_grants: tuple[HeldGrant, ...] | None = None
    """The additive grants the subscription relies on (push-auth account, invoker, dead letter)
    with the stack resources that hold each; ``None`` where there is no stack (the audit)."""
    unknown: frozenset[str] = Field(default_factory=frozenset)
    """Names of fields whose value is not known yet (see the module docstring)."""
    management: Management | None = None
    """What the given Pulumi stacks say of the subscription beside what runs
    (:mod:`pushguard.rules.managed`); ``None`` where no stack states were given (every
    enforcement point but the audit with ``--stacks``)."""
    kind: FactsKind = "subscription"
    """What these facts describe: a Pub/Sub subscription (every enforcement point), or an
    Eventarc trigger (:data:`EVENTARC_TRIGGER`; the policy pack only)."""
    trigger_destination: str | None = None
    """An Eventarc trigger's destination, a key of :data:`TRIGGER_DESTINATIONS` (``None``: a
    subscription, or a trigger whose destination is not known)."""

    @field_validator("push_auth_account")
    @classmethod
    def _normalise_account(cls, value: str | None) -> str | None:
        return normalise_email(value) if value else value

    def is_push(self) -> bool:
        """True when the subscription pushes, or may push (its endpoint is not known yet). An
        Eventarc trigger always delivers through the push subscription Eventarc manages."""
        return (
            self.kind == EVENTARC_TRIGGER
            or bool(self.push_endpoint)
            or "push_endpoint" in self.unknown
            or self.push_endpoint_source is not None
        )

    @property
    def is_trigger(self) -> bool:
        """True for an Eventarc trigger's facts (:data:`EVENTARC_TRIGGER`)."""
        return self.kind == EVENTARC_TRIGGER

    def noun(self) -> str:
        """What the facts describe, for messages: ``subscription`` or ``trigger``."""
        return "trigger" if self.is_trigger else "subscription"

    def endpoint_noun(self) -> str:
        """The endpoint, for messages: ``push endpoint``, or ``trigger's HTTP endpoint``."""
        return "trigger's HTTP endpoint" if self.is_trigger else "push endpoint"

    def account_noun(self) -> str:
        """The account, for messages: ``push-auth service account``, or ``trigger's service
        account``."""
        return "trigger's service account" if self.is_trigger else "push-auth service account"

    def google_managed_endpoint(self) -> str | None:
        """For an Eventarc trigger with no HTTP endpoint of its own (a Cloud Run, GKE, Workflows
        or Cloud Functions destination, which Eventarc addresses itself through the push
        subscription it creates and manages): why there is no endpoint of the trigger's to judge.
        ``None`` for a subscription, a trigger with an HTTP endpoint and an endpoint not known
        yet."""
        if not self.is_trigger or self.push_endpoint or "push_endpoint" in self.unknown:
            return None
        destination = TRIGGER_DESTINATIONS.get(self.trigger_destination or "")
        if destination is None:
            return "the trigger names no destination this rule can read"
        if self.trigger_destination == "httpEndpoint":
            return "the trigger's HTTP endpoint destination has no uri"
        return (
            f"Google manages the endpoint: Eventarc delivers to the trigger's {destination} "
            "destination through a push subscription it creates and manages, so no URL of the "
            "trigger's is there to check"
        )

    def has_push_auth_account(self) -> bool:
        """True when a push-auth service account is set: by email, or by project for an account
        whose email is not known yet."""
        return bool(self.push_auth_account or self.push_auth_account_project)

    def service_agent_member(self) -> str | None:
        """The IAM member of the project's Pub/Sub service agent, or ``None`` if the project
        number is not known.

        Source: https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication
        (``service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com``).
        """
        if not self.project_number:
            return None
        return f"serviceAccount:{pubsub_service_agent_email(self.project_number)}"
