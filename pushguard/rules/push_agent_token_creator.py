"""The Pub/Sub service agent may mint OIDC tokens for the push-auth service account.

Pub/Sub signs push tokens as the project's service agent
``service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com``, which needs
``roles/iam.serviceAccountTokenCreator`` (permission ``iam.serviceAccounts.getOpenIdToken``) on the
push-auth account or on an ancestor (https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication).
One language version of that page says this is needed only for projects created on or before
2021-04-08; newer versions say it is needed. Granting it on the service account is least privilege
and always safe; without it, authenticated pushes fail. A conditional grant is reported, since its
condition may not hold when Pub/Sub signs.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts
from pushguard.rules.iam import TOKEN_CREATOR, find_grants


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when no unconditional token-creator grant to the service agent is found."""
    if not facts.is_push() or facts.token_creator_known_granted:
        return
    if not facts.has_push_auth_account():
        return  # push-auth-oidc reports it
    agent = facts.service_agent_member()
    if agent is None:
        yield Result.unknown(
            "the project number is not known, so the Pub/Sub service agent cannot be named",
            "project_number",
        )
        return
    if facts.push_auth_account_grants is None:
        yield Result.unknown(
            "the push-auth account's IAM grants were not collected", "push_auth_account"
        )
        return
    match = find_grants(facts.push_auth_account_grants, agent, TOKEN_CREATOR.accepted)
    if match.granted:
        return
    conditional = ""
    if match.conditional:
        conditional = (
            f" A conditional grant exists ({match.conditional[0].condition}), which pushguard "
            "cannot prove holds."
        )
    yield Result.violation(
        f"The Pub/Sub service agent {agent.removeprefix('serviceAccount:')} has no "
        "roles/iam.serviceAccountTokenCreator on the push-auth service account or its project, "
        f"so Pub/Sub cannot sign push tokens.{conditional}",
        "token_creator_grant",
        service_agent=agent,
        push_auth_account=facts.push_auth_account or "",
    )


RULE = Rule(
    id="push-agent-token-creator",
    title="The Pub/Sub service agent can create tokens for the push-auth account",
    default_level=EnforcementLevel.ADVISORY,
    severity="medium",
    remediation=(
        "Grant roles/iam.serviceAccountTokenCreator on the push-auth service account to "
        "serviceAccount:service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com "
        "(pushguard's PushSubscription does), or list the project in the policy config's "
        "tokenCreatorGrantedProjects if the grant is made elsewhere."
    ),
    check=check,
)
