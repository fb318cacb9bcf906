"""Nobody broad may impersonate the push-auth account.

Whoever can mint the push-auth account's tokens can send requests that the push endpoint accepts
as Pub/Sub's; whoever can attach it to their own subscriptions and resources can have Pub/Sub (or
anything else) push as it; whoever can set its allow policy can grant themselves either
(https://cloud.google.com/iam/docs/service-account-permissions). So what counts is not a role's
name but the permissions it carries on service accounts: ``iam.serviceAccounts.getOpenIdToken``,
``getAccessToken``, ``actAs``, ``implicitDelegation``, ``signJwt``, ``signBlob`` and the
account's ``setIamPolicy``. Which of Google's predefined roles carry them is a table generated
from Google's own role definitions, the output of ``gcloud iam roles list`` and ``gcloud iam
roles describe`` for every predefined role (the data of Google's IAM roles reference,
https://cloud.google.com/iam/docs/roles-permissions), as the public repository
iann0036/iam-dataset keeps it:
https://github.com/iann0036/iam-dataset/tree/2073fa52ac008a45477aa0b1b4580cd99135bf60/gcp,
taken 2026-08-22 (``pushguard/rules/role_table.py``; ``scripts/generate_role_table.py`` makes it
again from newer output). Besides Token Creator and Service Account User, they include Workload
Identity User, Service Account Admin, the basic roles Editor (``actAs``) and Owner (``actAs``,
``setIamPolicy``), and several service agent roles.

Granting any of them to ``allUsers``, ``allAuthenticatedUsers``, a whole ``domain:`` or a
``principalSet://`` (a workforce or workload identity pool, or every service account of a
project, folder or organization; https://cloud.google.com/iam/docs/principal-identifiers) lets
many identities forge pushes. Grants on the account and inherited from its project (and, in the
audit, its folders and organization) count. A custom role (``projects/P/roles/R``,
``organizations/N/roles/R``) granted to such a member is judged by its permissions when they are
known (the audit reads them from the export's ``iam.googleapis.com/Role`` assets); otherwise,
like a role newer than the table, the grant is reported as not checked, never passed.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts
from pushguard.rules.iam import is_broad_member, permission_names, role_permissions, unknown_role


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """One violation per broad member holding a role that carries an impersonation permission on
    the push-auth account; one undecided result per broad member holding a role whose
    permissions are not known."""
    if not facts.is_push() or facts.push_auth_account_grants is None:
        return
    for grant in facts.push_auth_account_grants:
        if not is_broad_member(grant.member):
            continue
        where = f" on {grant.resource}" if grant.resource else ""
        carried = role_permissions(grant)
        if carried is None:
            yield Result.unknown(
                f"{grant.member} holds {grant.role}{where}: {unknown_role(grant.role)}, so "
                "whether it lets them impersonate the push-auth service account is not checked",
                None,
                member=grant.member,
                role=grant.role,
                resource=grant.resource,
            )
        elif carried:
            yield Result.violation(
                f"{grant.member} holds {grant.role}{where}, which carries "
                f"{permission_names(carried)}, so it can impersonate the push-auth service "
                "account and forge push requests.",
                "push_auth_account",
                member=grant.member,
                role=grant.role,
                resource=grant.resource,
            )


RULE = Rule(
    id="push-sa-broad-grants",
    title="No broad principal can impersonate the push-auth account",
    default_level=EnforcementLevel.ADVISORY,
    severity="high",
    remediation=(
        "Remove the grant to allUsers, allAuthenticatedUsers, domain: or principalSet:// (of any "
        "role that carries iam.serviceAccounts.getOpenIdToken, getAccessToken, actAs, "
        "implicitDelegation, signJwt, signBlob or setIamPolicy, basic roles included); grant "
        "token creator only to the Pub/Sub service agent and service account user only to named "
        "deployers."
    ),
    check=check,
)
