"""Nobody broad may impersonate the push-auth service account.

Whoever holds ``roles/iam.serviceAccountTokenCreator`` on the push-auth account can mint tokens
that the push endpoint accepts as Pub/Sub's; whoever holds ``roles/iam.serviceAccountUser`` can
attach it to their own subscriptions and resources (https://cloud.google.com/iam/docs/service-account-permissions).
Granting either to ``allUsers``, ``allAuthenticatedUsers``, a whole ``domain:`` or a
``principalSet://`` lets many identities forge pushes. Grants on the account and inherited from its
project count.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts
from pushguard.rules.iam import ACT_AS, TOKEN_CREATOR, is_broad_member

_IMPERSONATION_ROLES = TOKEN_CREATOR.accepted | ACT_AS.accepted


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """One violation per broad member holding an impersonation role on the push-auth account."""
    if not facts.is_push() or facts.push_auth_account_grants is None:
        return
    for grant in facts.push_auth_account_grants:
        if grant.role in _IMPERSONATION_ROLES and is_broad_member(grant.member):
            where = f" on {grant.resource}" if grant.resource else ""
            yield Result.violation(
                f"{grant.member} holds {grant.role}{where}, so it can impersonate the push-auth "
                "service account and forge push requests.",
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
        "Remove the grant to allUsers, allAuthenticatedUsers, domain: or principalSet:// and grant "
        "token creator only to the Pub/Sub service agent and service account user only to named "
        "deployers."
    ),
    check=check,
)
