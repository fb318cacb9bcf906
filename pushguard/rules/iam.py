"""IAM facts shared by several rules: service account emails, roles, members and grant lookup."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pushguard.rules.facts import IamGrant

TOKEN_CREATOR_ROLES = frozenset(
    {"roles/iam.serviceAccountTokenCreator", "roles/iam.serviceAccountOpenIdTokenCreator"}
)
"""Predefined roles with ``iam.serviceAccounts.getOpenIdToken``, which Pub/Sub's service agent
needs to sign push tokens. Basic roles (owner, editor) do not carry it.
Source: https://cloud.google.com/iam/docs/service-account-permissions#token-creator-role"""

ACT_AS_ROLES = frozenset({"roles/iam.serviceAccountUser"})
"""The role with ``iam.serviceAccounts.actAs`` that creating a push subscription with an account
needs. Source: https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication"""

RUN_INVOKER_ROLES = frozenset({"roles/run.invoker", "roles/run.servicesInvoker", "roles/run.admin"})
"""Roles with ``run.routes.invoke`` on a Cloud Run service (2nd-gen functions included).
Source: https://cloud.google.com/run/docs/reference/iam/roles"""

FUNCTIONS_INVOKER_ROLES = frozenset({"roles/cloudfunctions.invoker", "roles/cloudfunctions.admin"})
"""Roles with ``cloudfunctions.functions.invoke`` on a 1st-gen function.
Source: https://cloud.google.com/functions/docs/reference/iam/roles"""

PUBLISHER_ROLES = frozenset({"roles/pubsub.publisher", "roles/pubsub.editor", "roles/pubsub.admin"})
SUBSCRIBER_ROLES = frozenset(
    {"roles/pubsub.subscriber", "roles/pubsub.editor", "roles/pubsub.admin"}
)
"""Dead-letter forwarding: the service agent publishes to the dead-letter topic and acknowledges
on the subscription. Source: https://cloud.google.com/pubsub/docs/handling-failures#grant_forwarding_permissions"""

BROAD_PRINCIPALS = ("allUsers", "allAuthenticatedUsers")
BROAD_PREFIXES = ("domain:", "principalSet://")
"""Members that stand for many identities. Source: https://cloud.google.com/iam/docs/principal-identifiers"""

_SA_DOMAIN = ".iam.gserviceaccount.com"
_SERVICE_AGENT = re.compile(r"^service-(?P<number>[0-9]+)$")
_PROJECT_NUMBER_LOCAL = re.compile(r"^(?P<number>[0-9]+)(?:-compute)?$")


@dataclass(frozen=True)
class AccountProject:
    """The project a service account email belongs to: one of ``project_id`` or
    ``project_number`` is set."""

    project_id: str | None = None
    project_number: str | None = None


def service_account_project(email: str) -> AccountProject | None:
    """The project of a service account, read from its email; ``None`` if the email is not a
    service account's.

    Forms (https://cloud.google.com/iam/docs/service-account-types):
    ``NAME@PROJECT_ID.iam.gserviceaccount.com`` (user-managed; a domain-scoped project
    ``example.com:proj`` gives ``NAME@proj.example.com.iam.gserviceaccount.com``),
    ``service-NUMBER@gcp-sa-SERVICE.iam.gserviceaccount.com`` (service agents),
    ``NUMBER-compute@developer.gserviceaccount.com`` (Compute Engine default),
    ``PROJECT_ID@appspot.gserviceaccount.com`` (App Engine default),
    ``NUMBER@cloudservices.gserviceaccount.com`` and ``NUMBER@cloudbuild.gserviceaccount.com``.
    """
    local, at, domain = email.strip().lower().rpartition("@")
    if not at or not local or not domain:
        return None
    if domain.endswith(_SA_DOMAIN):
        scope = domain[: -len(_SA_DOMAIN)]
        if scope.startswith("gcp-sa-"):
            agent = _SERVICE_AGENT.match(local)
            return AccountProject(project_number=agent["number"]) if agent else None
        if not scope:
            return None
        project, _, org_domain = scope.partition(".")
        return AccountProject(project_id=f"{org_domain}:{project}" if org_domain else project)
    if domain == "appspot.gserviceaccount.com":
        return AccountProject(project_id=local)
    if domain in (
        "developer.gserviceaccount.com",
        "cloudservices.gserviceaccount.com",
        "cloudbuild.gserviceaccount.com",
    ):
        number = _PROJECT_NUMBER_LOCAL.match(local)
        return AccountProject(project_number=number["number"]) if number else None
    return None


def normalise_member(member: str) -> str:
    """An IAM member with its type prefix as IAM writes it and the email part lower-cased
    (``serviceAccount:A@B`` and ``serviceaccount:a@b`` are the same principal)."""
    kind, sep, rest = member.strip().partition(":")
    if not sep:
        return kind
    canonical = {"serviceaccount": "serviceAccount", "user": "user", "group": "group"}
    return f"{canonical.get(kind.lower(), kind)}:{rest.lower()}"


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
