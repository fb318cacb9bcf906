"""IAM facts shared by several rules and every adapter: the roles pushguard grants, which roles
carry which service-account permissions (:mod:`pushguard.rules.role_table`, generated from
Google's roles), members and grant lookup. Service account e-mails are spelled in
:mod:`pushguard.rules.accounts`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pushguard.rules import role_table
from pushguard.rules.facts import IamGrant, TargetKind

GET_OPENID_TOKEN = "iam.serviceAccounts.getOpenIdToken"
ACT_AS_PERMISSION = "iam.serviceAccounts.actAs"

IMPERSONATION_PERMISSIONS: frozenset[str] = frozenset(role_table.PERMISSIONS)
"""The permissions on a service account that let a principal use it as its own identity:
``getOpenIdToken`` and ``getAccessToken`` (mint its tokens), ``signJwt`` and ``signBlob`` (sign
as it), ``implicitDelegation`` (mint them through a chain of accounts), ``actAs`` (attach it to a
resource that then runs as it) and the account's ``setIamPolicy`` (grant any of those to
oneself). Source: https://cloud.google.com/iam/docs/service-account-permissions (the roles that
let principals impersonate service accounts, and the Service Account Admin role's management of
their allow policies)."""

_PERMISSION_PREFIX = "iam.serviceAccounts."
_CUSTOM_ROLE_PREFIXES = ("projects/", "organizations/")
"""Custom roles are named ``projects/PROJECT_ID/roles/ROLE_ID`` or
``organizations/ORGANIZATION_ID/roles/ROLE_ID``
(https://cloud.google.com/iam/docs/reference/rest/v1/projects.roles/get)."""


def role_permissions(grant: IamGrant) -> frozenset[str] | None:
    """The permissions of :data:`IMPERSONATION_PERMISSIONS` that ``grant``'s role carries: those
    the grant states itself (:attr:`IamGrant.permissions`: a custom role the audit read from the
    export), else those the generated table of Google's predefined roles gives
    (:mod:`pushguard.rules.role_table`, whose ``SOURCE`` and ``DATE`` say which roles it knows).
    ``None`` when they are not known: a custom role the grant does not describe, a predefined
    role the table's source lists without its permissions, or a role newer than the table."""
    if grant.permissions is not None:
        return frozenset(grant.permissions) & IMPERSONATION_PERMISSIONS
    short = role_table.CARRYING.get(grant.role)
    if short is not None:
        return frozenset(_PERMISSION_PREFIX + name for name in short)
    if grant.role in role_table.CARRYING_NONE:
        return frozenset()
    return None


def unknown_role(role: str) -> str:
    """Why the permissions of ``role`` are not known (for a message): a custom role's, or a role
    the generated table does not hold."""
    if role.startswith(_CUSTOM_ROLE_PREFIXES):
        return (
            f"{role} is a custom role and pushguard does not know its permissions (the audit "
            "reads them from the export's iam.googleapis.com/Role assets, when it has them)"
        )
    if role in role_table.UNREAD:
        return (
            f"the source of pushguard's table of Google's predefined roles (taken "
            f"{role_table.DATE}) lists {role} without its permissions"
        )
    return (
        f"{role} is not in pushguard's table of Google's predefined roles (taken "
        f"{role_table.DATE}), so pushguard does not know its permissions"
    )


def permission_names(permissions: frozenset[str]) -> str:
    """``permissions`` for a message, in :data:`role_table.PERMISSIONS` order."""
    return ", ".join(p for p in role_table.PERMISSIONS if p in permissions)


@dataclass(frozen=True)
class RoleSpec:
    """One IAM role in the push set-up: the role pushguard grants (``granted``), the roles the
    page that documents it names in its place (``accepted``, ``granted`` included; an
    authoritative binding of one of these is what can remove the grant), the page (``source``)
    and, when what counts is a permission and not a role name, that ``permission``: then any
    role that carries it counts as well (:meth:`carried_by`)."""

    granted: str
    accepted: frozenset[str]
    source: str
    permission: str | None = None

    def carried_by(self, grant: IamGrant) -> bool | None:
        """True when ``grant``'s role is accepted or carries :attr:`permission`; ``None`` when
        it may (its permissions are not known: :func:`role_permissions`); False otherwise."""
        if grant.role in self.accepted:
            return True
        if self.permission is None:
            return False
        carried = role_permissions(grant)
        return None if carried is None else self.permission in carried


TOKEN_CREATOR = RoleSpec(
    "roles/iam.serviceAccountTokenCreator",
    frozenset(
        {"roles/iam.serviceAccountTokenCreator", "roles/iam.serviceAccountOpenIdTokenCreator"}
    ),
    "https://cloud.google.com/iam/docs/service-account-permissions#token-creator-role",
    GET_OPENID_TOKEN,
)
"""``iam.serviceAccounts.getOpenIdToken``, which Pub/Sub's service agent needs on the push-auth
account to sign push tokens: any role that carries it counts (the generated table names them,
the Pub/Sub service agent's own ``roles/pubsub.serviceAgent`` among them); the basic roles
(owner, editor) do not carry it."""

ACT_AS = RoleSpec(
    "roles/iam.serviceAccountUser",
    frozenset({"roles/iam.serviceAccountUser"}),
    "https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication",
    ACT_AS_PERMISSION,
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
BROAD_PREFIXES = ("domain:", "principalset://")
"""Members that stand for many identities (https://cloud.google.com/iam/docs/principal-identifiers):
all users, all authenticated users, every account of a Google domain (``domain:``), and every
``principalSet://`` form: all identities of a workforce or workload identity pool, those of a
pool's group or with an attribute value, all GKE Pods of a Kubernetes service account, and all
service accounts of a project, folder or organization. A ``group:`` is a named set of members
and a ``principal://`` one identity: neither is broad. Prefixes are compared lower-cased."""


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
    """True for members that stand for many identities (:data:`BROAD_PREFIXES`):
    ``allUsers``, ``allAuthenticatedUsers`` (in any case, as :func:`normalise_member` reads
    them), ``domain:...`` and every ``principalSet://...``."""
    normalised = normalise_member(member)
    return normalised in BROAD_PRINCIPALS or normalised.lower().startswith(BROAD_PREFIXES)


@dataclass(frozen=True)
class GrantMatch:
    """The grants of some roles to one member: ``unconditional`` ones count, ``conditional`` ones
    are reported as such (a rule cannot prove their condition holds), and ``unknown`` ones, of
    roles whose permissions are not known (:func:`role_permissions`), may carry what is looked
    for: a rule says it could not check rather than pass or fail."""

    unconditional: tuple[IamGrant, ...]
    conditional: tuple[IamGrant, ...]
    unknown: tuple[IamGrant, ...] = ()

    @property
    def granted(self) -> bool:
        """True if at least one unconditional grant exists."""
        return bool(self.unconditional)


def find_grants(
    grants: Iterable[IamGrant], member: str, roles: frozenset[str] | RoleSpec
) -> GrantMatch:
    """The grants among ``grants`` to ``member`` (compared normalised) of any of ``roles``, or,
    given a :class:`RoleSpec`, of a role that carries it (:meth:`RoleSpec.carried_by`; those of
    roles whose permissions are not known are :attr:`GrantMatch.unknown`)."""
    wanted = normalise_member(member)
    mine = [g for g in grants if normalise_member(g.member) == wanted]
    if isinstance(roles, RoleSpec):
        verdicts = [(g, roles.carried_by(g)) for g in mine]
        hits = [g for g, carried in verdicts if carried]
        unknown = tuple(g for g, carried in verdicts if carried is None)
    else:
        hits, unknown = [g for g in mine if g.role in roles], ()
    return GrantMatch(
        unconditional=tuple(g for g in hits if not g.condition),
        conditional=tuple(g for g in hits if g.condition),
        unknown=unknown,
    )
