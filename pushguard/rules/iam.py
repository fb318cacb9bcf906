"""IAM facts shared by several rules and every adapter: the table of roles, members and grant
lookup. Service account e-mails are spelled in :mod:`pushguard.rules.accounts`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pushguard.rules.facts import IamGrant, TargetKind


@dataclass(frozen=True)
class RoleSpec:
    """One IAM role in the push set-up: the role pushguard grants (``granted``) and the
    predefined roles a rule accepts in its place (``accepted``, ``granted`` included), with the
    page that says so (``source``)."""

    granted: str
    accepted: frozenset[str]
    source: str


TOKEN_CREATOR = RoleSpec(
    "roles/iam.serviceAccountTokenCreator",
    frozenset(
        {"roles/iam.serviceAccountTokenCreator", "roles/iam.serviceAccountOpenIdTokenCreator"}
    ),
    "https://cloud.google.com/iam/docs/service-account-permissions#token-creator-role",
)
"""``iam.serviceAccounts.getOpenIdToken``, which Pub/Sub's service agent needs on the push-auth
account to sign push tokens. Basic roles (owner, editor) do not carry it."""

ACT_AS = RoleSpec(
    "roles/iam.serviceAccountUser",
    frozenset({"roles/iam.serviceAccountUser"}),
    "https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication",
)
"""``iam.serviceAccounts.actAs``, which creating or changing a push subscription with an account
needs."""

PUBLISHER = RoleSpec(
    "roles/pubsub.publisher",
    frozenset({"roles/pubsub.publisher", "roles/pubsub.editor", "roles/pubsub.admin"}),
    "https://cloud.google.com/pubsub/docs/handling-failures#grant_forwarding_permissions",
)
"""Dead-letter forwarding: the service agent publishes to the dead-letter topic."""

SUBSCRIBER = RoleSpec(
    "roles/pubsub.subscriber",
    frozenset({"roles/pubsub.subscriber", "roles/pubsub.editor", "roles/pubsub.admin"}),
    "https://cloud.google.com/pubsub/docs/handling-failures#grant_forwarding_permissions",
)
"""Dead-letter forwarding: the service agent acknowledges on the subscription."""

RUN_INVOKER = RoleSpec(
    "roles/run.invoker",
    frozenset({"roles/run.invoker", "roles/run.servicesInvoker", "roles/run.admin"}),
    "https://cloud.google.com/run/docs/reference/iam/roles",
)
"""``run.routes.invoke`` on a Cloud Run service (2nd-gen functions included)."""

FUNCTIONS_INVOKER = RoleSpec(
    "roles/cloudfunctions.invoker",
    frozenset({"roles/cloudfunctions.invoker", "roles/cloudfunctions.admin"}),
    "https://cloud.google.com/functions/docs/reference/iam/roles",
)
"""``cloudfunctions.functions.invoke`` on a 1st-gen function."""

INVOKER: Mapping[TargetKind, RoleSpec] = MappingProxyType(
    {
        TargetKind.CLOUD_RUN: RUN_INVOKER,
        TargetKind.CLOUD_FUNCTION_V2: RUN_INVOKER,
        TargetKind.CLOUD_FUNCTION_V1: FUNCTIONS_INVOKER,
    }
)
"""The invoker role by target kind; an ``external`` target has none."""

BROAD_PRINCIPALS = ("allUsers", "allAuthenticatedUsers")
BROAD_PREFIXES = ("domain:", "principalSet://")
"""Members that stand for many identities. Source: https://cloud.google.com/iam/docs/principal-identifiers"""


_PUBLIC_MEMBERS = {"allusers": "allUsers", "allauthenticatedusers": "allAuthenticatedUsers"}
"""The members without a type prefix, as IAM spells them
(https://cloud.google.com/iam/docs/principals-overview#allusers)."""


def normalise_member(member: str) -> str:
    """An IAM member with its type prefix as IAM writes it and the email part lower-cased
    (``serviceAccount:A@B`` and ``serviceaccount:a@b`` are the same principal); ``allUsers`` and
    ``allAuthenticatedUsers`` in IAM's spelling, whatever their case (the Terraform provider
    once wrote ``allauthenticatedusers``: hashicorp/terraform-provider-google#10466)."""
    kind, sep, rest = member.strip().partition(":")
    if not sep:  # allUsers, allAuthenticatedUsers: older Terraform states hold them lower-cased
        return _PUBLIC_MEMBERS.get(kind.lower(), kind)
    canonical = {"serviceaccount": "serviceAccount", "user": "user", "group": "group"}
    return f"{canonical.get(kind.lower(), kind)}:{rest.lower()}"


def member_email(member: str) -> str | None:
    """The e-mail of a ``serviceAccount:`` member, normalised; ``None`` for any other member."""
    kind, sep, email = normalise_member(member).partition(":")
    return email if sep and kind == "serviceAccount" else None


def is_broad_member(member: str) -> bool:
    """True for members that stand for many identities: ``allUsers``, ``allAuthenticatedUsers``,
    ``domain:...`` and workforce/workload ``principalSet://...``."""
    stripped = member.strip()
    return stripped in BROAD_PRINCIPALS or stripped.startswith(BROAD_PREFIXES)


@dataclass(frozen=True)
class GrantMatch:
    """The grants of some roles to one member: ``unconditional`` ones count, ``conditional`` ones
    are reported as such (a rule cannot prove their condition holds)."""

    unconditional: tuple[IamGrant, ...]
    conditional: tuple[IamGrant, ...]

    @property
    def granted(self) -> bool:
        """True if at least one unconditional grant exists."""
        return bool(self.unconditional)


def find_grants(grants: Iterable[IamGrant], member: str, roles: frozenset[str]) -> GrantMatch:
    """The grants among ``grants`` of any of ``roles`` to ``member`` (compared normalised)."""
    wanted = normalise_member(member)
    hits = [g for g in grants if g.role in roles and normalise_member(g.member) == wanted]
    return GrantMatch(
        unconditional=tuple(g for g in hits if not g.condition),
        conditional=tuple(g for g in hits if g.condition),
    )
