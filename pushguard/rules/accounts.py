"""Service account e-mail formats: the one place that spells them, building and reading.

Sources: https://cloud.google.com/iam/docs/service-account-types (user-managed accounts, default
accounts, service agents) and https://cloud.google.com/iam/docs/service-agents (the
``service-PROJECT_NUMBER@gcp-sa-SERVICE.iam.gserviceaccount.com`` form).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SA_DOMAIN = ".iam.gserviceaccount.com"
"""The domain suffix of user-managed accounts and service agents."""

_SERVICE_AGENT = re.compile(r"^service-(?P<number>[0-9]+)$")
_PROJECT_NUMBER_LOCAL = re.compile(r"^(?P<number>[0-9]+)(?:-compute)?$")


def service_account_email(account_id: str, project: str) -> str:
    """A user-managed service account's e-mail, lower-case.

    ``account_id`` is the account ID (6 to 30 characters); ``project`` a project ID. A
    domain-scoped project ``example.com:proj`` gives
    ``ID@proj.example.com.iam.gserviceaccount.com``.
    """
    domain, colon, name = project.partition(":")
    scope = f"{name}.{domain}" if colon else project
    return f"{account_id}@{scope}{SA_DOMAIN}".lower()


def service_agent_email(project_number: str, service: str = "pubsub") -> str:
    """A Google service agent's e-mail for a project number (digits, no ``projects/``).

    ``service`` is the agent's short name: ``pubsub`` gives the Pub/Sub service agent that signs
    push tokens (https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication).
    """
    return f"service-{project_number}@gcp-sa-{service}{SA_DOMAIN}"


def pubsub_service_agent_email(project_number: str) -> str:
    """The Pub/Sub service agent's e-mail: :func:`service_agent_email` for ``pubsub``."""
    return service_agent_email(project_number, "pubsub")


def is_pubsub_service_agent(email: str) -> bool:
    """True for the e-mail of a Pub/Sub service agent of any project
    (``service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com``, compared normalised)."""
    local, at, domain = normalise_email(email).rpartition("@")
    return bool(at) and domain == f"gcp-sa-pubsub{SA_DOMAIN}" and bool(_SERVICE_AGENT.match(local))


def member(email: str) -> str:
    """The IAM member of a service account: ``serviceAccount:EMAIL``."""
    return f"serviceAccount:{email}"


def normalise_email(email: str) -> str:
    """A service account e-mail as IAM compares it: stripped and lower-cased."""
    return email.strip().lower()


@dataclass(frozen=True)
class AccountProject:
    """The project a service account e-mail belongs to: one of ``project_id`` or
    ``project_number`` is set."""

    project_id: str | None = None
    project_number: str | None = None


def service_account_project(email: str) -> AccountProject | None:
    """The project of a service account, read from its e-mail; ``None`` if the e-mail is not a
    service account's.

    Forms (https://cloud.google.com/iam/docs/service-account-types):
    ``NAME@PROJECT_ID.iam.gserviceaccount.com`` (user-managed; a domain-scoped project
    ``example.com:proj`` gives ``NAME@proj.example.com.iam.gserviceaccount.com``),
    ``service-NUMBER@gcp-sa-SERVICE.iam.gserviceaccount.com`` (service agents),
    ``NUMBER-compute@developer.gserviceaccount.com`` (Compute Engine default),
    ``PROJECT_ID@appspot.gserviceaccount.com`` (App Engine default),
    ``NUMBER@cloudservices.gserviceaccount.com`` and ``NUMBER@cloudbuild.gserviceaccount.com``.
    """
    local, at, domain = normalise_email(email).rpartition("@")
    if not at or not local or not domain:
        return None
    if domain.endswith(SA_DOMAIN):
        scope = domain[: -len(SA_DOMAIN)]
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
