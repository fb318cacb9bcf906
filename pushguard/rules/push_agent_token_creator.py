"""The Pub/Sub service agent may mint OIDC tokens for the push-auth service account.

Pub/Sub signs push tokens as the project's service agent
``service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com``, which needs
``roles/iam.serviceAccountTokenCreator`` (permission ``iam.serviceAccounts.getOpenIdToken``) on the
push-auth account or on an ancestor (https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication).
One language version of that page says this is needed only for projects created on or before
2021-04-08; newer versions say it is needed. Granting it on the service account is least privilege
and always safe; without it, authenticated pushes fail. A conditional grant is reported, since its
condition may not hold when Pub/Sub signs.

What counts is the permission, not the role's name: any role that carries
``iam.serviceAccounts.getOpenIdToken`` satisfies the rule (the table generated from Google's
predefined roles by ``scripts/generate_role_table.py``, ``pushguard/rules/role_table.py``, whose
source and date ``push-sa-broad-grants`` names, lists them: the two token creator roles, the
Pub/Sub service agent's own ``roles/pubsub.serviceAgent``, Workload Identity User and some other
service agents' roles; not the basic roles). When the service agent's only grants are of roles
whose permissions are not known (a custom role the source does not describe, a role newer than
the table), the rule says it could not check, never that the grant is missing.

Two mistakes are reported even when the project number (and so the service agent's e-mail) is not
known. Granting the role to the push-auth account *itself* (``serviceAccount:PUSH_AUTH_EMAIL``), a
misconception copied from published examples, lets nothing sign push tokens: the grant must go to
the service agent. An authoritative binding of the role (``gcp.projects.IAMBinding``, a
``gcp.projects.IAMPolicy`` whose ``policyData`` binds it, or the service account's own
``IAMBinding`` / ``IAMPolicy``) sets every member of the role on its resource, so unless a Pub/Sub
service agent is among its members it removes the service agent's grant there
(https://www.pulumi.com/registry/packages/gcp/api-docs/projects/iambinding/). Such a binding is
reported even when the grant is known to be made elsewhere (``tokenCreatorGrantedProjects``),
since it would remove that grant too when it is on the same resource.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pushguard.rules.accounts import is_pubsub_service_agent
from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import IamBinding, IamGrant, SubscriptionFacts
from pushguard.rules.iam import (
    GET_OPENID_TOKEN,
    TOKEN_CREATOR,
    GrantMatch,
    find_grants,
    member_email,
    normalise_member,
    unknown_role,
)

_AGENT_FORM = "service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com"
_LISTED = 3
"""Members named in a message about a binding; the rest are counted."""


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when no unconditional token-creator grant to the service agent is found, when the
    role goes to the push-auth account itself instead, or when an authoritative binding of the
    role leaves the service agent out."""
    if not facts.is_push():
        return
    if not facts.has_push_auth_account():
        if "push_auth_account" in facts.unknown:  # not known yet: undecided, never passed
            yield Result.unknown("the push-auth service account is not known", "push_auth_account")
        return  # push-auth-oidc reports a push subscription without an account
    yield from _bindings_without_agent(facts, facts.push_auth_account_bindings or ())
    grants = facts.push_auth_account_grants
    if facts.token_creator_known_granted:
        return
    agent = facts.service_agent_member()
    to_itself = _granted_to_itself(facts, grants or ())
    if agent is None:
        if to_itself is not None and not _any_agent_granted(grants or ()):
            yield _to_itself_violation(facts, to_itself)
            return
        yield Result.unknown(
            "the project number is not known, so the Pub/Sub service agent cannot be named",
            "project_number",
        )
        return
    if grants is None:
        yield Result.unknown(
            "the push-auth account's IAM grants were not collected", "push_auth_account"
        )
        return
    match = find_grants(grants, agent, TOKEN_CREATOR)
    if not match.granted:
        yield _not_granted(facts, agent, match, to_itself)


def _not_granted(
    facts: SubscriptionFacts, agent: str, match: GrantMatch, to_itself: IamGrant | None
) -> Result:
    """The result when the service agent holds no role that surely carries the permission:
    undecided when it holds one whose permissions are not known, else a violation."""
    if match.unknown:
        first = match.unknown[0]
        return Result.unknown(
            f"the Pub/Sub service agent holds {first.role}{_on(first)}, and "
            f"{unknown_role(first.role)}: whether it carries {GET_OPENID_TOKEN} is not checked",
            "token_creator_grant",
        )
    notes = ""
    if match.conditional:
        notes = (
            f" A conditional grant exists ({match.conditional[0].condition}), which pushguard "
            "cannot prove holds."
        )
    if to_itself is not None:
        notes += (
            f" The token-creator grant{_on(to_itself)} goes to the push-auth service account "
            "itself; it should go to the Pub/Sub service agent."
        )
    return Result.violation(
        f"The Pub/Sub service agent {agent.removeprefix('serviceAccount:')} has no "
        "roles/iam.serviceAccountTokenCreator (nor another role that carries "
        f"{GET_OPENID_TOKEN}) on the push-auth service account or its project, so Pub/Sub "
        f"cannot sign push tokens.{notes}",
        "token_creator_grant",
        service_agent=agent,
        push_auth_account=facts.push_auth_account or "",
    )


def _on(grant: IamGrant) -> str:
    return f" on {grant.resource}" if grant.resource else ""


def _granted_to_itself(facts: SubscriptionFacts, grants: Sequence[IamGrant]) -> IamGrant | None:
    """A token-creator grant to the push-auth account itself, if any."""
    account = facts.push_auth_account
    if not account:
        return None
    return next(
        (
            g
            for g in grants
            if g.role in TOKEN_CREATOR.accepted and member_email(g.member) == account
        ),
        None,
    )


def _any_agent_granted(grants: Sequence[IamGrant]) -> bool:
    """True if some Pub/Sub service agent (of any project) holds a role that carries the
    permission unconditionally."""
    return any(
        not g.condition and _is_agent(g.member) and TOKEN_CREATOR.carried_by(g) for g in grants
    )


def _is_agent(member: str) -> bool:
    email = member_email(member)
    return email is not None and is_pubsub_service_agent(email)


def _to_itself_violation(facts: SubscriptionFacts, grant: IamGrant) -> Result:
    return Result.violation(
        f"{grant.role}{_on(grant)} is granted to the push-auth service account itself "
        f"({facts.push_auth_account}), not to the Pub/Sub service agent ({_AGENT_FORM}). Pub/Sub "
        "signs push tokens as its service agent, so this grant does not let it sign: the grant "
        "should go to the Pub/Sub service agent.",
        "token_creator_grant",
        member=grant.member,
        role=grant.role,
        resource=grant.resource,
    )


def _bindings_without_agent(
    facts: SubscriptionFacts, bindings: Sequence[IamBinding]
) -> Iterator[Result]:
    """One violation per unconditional authoritative binding of a token-creator role that does
    not list the service agent (any Pub/Sub service agent when the project number is unknown).

    A conditional binding is authoritative only for its own condition, so it removes no
    unconditional grant and is not reported here."""
    agent = facts.service_agent_member()
    for binding in bindings:
        if binding.condition or binding.role not in TOKEN_CREATOR.accepted:
            continue
        if agent is not None:
            keeps = normalise_member(agent) in {normalise_member(m) for m in binding.members}
            missing = f"the Pub/Sub service agent {agent.removeprefix('serviceAccount:')}"
        else:
            keeps = any(_is_agent(m) for m in binding.members)
            missing = f"a Pub/Sub service agent ({_AGENT_FORM})"
        if keeps:
            continue
        listed = sorted(set(binding.members))
        names = ", ".join(listed[:_LISTED]) or "no member"
        if len(listed) > _LISTED:
            names += f" and {len(listed) - _LISTED} more"
        where = f" on {binding.resource}" if binding.resource else ""
        yield Result.violation(
            f"An authoritative binding of {binding.role}{where} (an IAMBinding or IAMPolicy sets "
            f"every member of the role) lists {names} but not {missing}, so applying it would "
            "remove the Pub/Sub service agent's token-creator grant there, which Pub/Sub needs to "
            "sign push tokens. Add the service agent to its members, or grant with IAMMember "
            "instead.",
            "token_creator_grant",
            role=binding.role,
            resource=binding.resource,
            members=", ".join(listed),
        )


RULE = Rule(
    id="push-agent-token-creator",
    title="The Pub/Sub service agent can create tokens for the push-auth account",
    default_level=EnforcementLevel.ADVISORY,
    severity="medium",
    remediation=(
        "Grant roles/iam.serviceAccountTokenCreator on the push-auth service account to "
        "serviceAccount:service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com "
        "(pushguard's PushSubscription does), not to the push-auth account itself, or list the "
        "project in the policy config's tokenCreatorGrantedProjects if the grant is made "
        "elsewhere. Grant it additively (IAMMember); an authoritative IAMBinding or IAMPolicy of "
        "the role must list the service agent."
    ),
    check=check,
)
