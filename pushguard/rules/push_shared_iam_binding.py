"""No grant a push subscription relies on is held by several resources of one stack.

An additive ``*IAMMember`` resource (``gcp.projects.IAMMember``,
``gcp.serviceaccount.IAMMember``, ``gcp.cloudrunv2.ServiceIamMember``,
``gcp.pubsub.TopicIAMMember``, ...) manages exactly one (resource, role, member) binding. When two
resources of a stack hold the same binding, deleting either one (a team removes one of its
subscriptions, or renames a component) removes the binding for both, and the remaining
subscription's pushes fail: the Pub/Sub service agent cannot mint the token (403 on the token
creator), Cloud Run refuses the push (403 on the invoker), or dead letters stop
(https://www.pulumi.com/registry/packages/gcp/api-docs/projects/iammember/). The seven-subscription
stack with ``token_creator_grant: "project"`` and subscriptions sharing a push-auth account or a
dead-letter topic are the usual causes.

pushguard's ``PushSubscription`` makes such a grant once per program and shares it; a project-level
grant many stacks need is best held once, in one platform stack, with ``token_creator_grant:
"none"`` and ``grant_invoker: false`` in the team stacks.

The Pub/Sub service agent's member is ``service-PROJECT_NUMBER@gcp-sa-pubsub...``
(https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication). With the project's
number (``projectNumbers``) the rule checks the grants to that agent; without it, grants to any
member of the agent's form are checked, and the finding says the agent was matched by its form:
whichever project's agent it is, identical bindings held twice are lost together.

The rule reads the stack's declarations, so it is not applicable to the organisation audit (Cloud
Asset Inventory has no notion of who declared a binding).
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.accounts import is_pubsub_service_agent, member
from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """One violation per grant the subscription relies on (to its push-auth account or to the
    Pub/Sub service agent) that several resources hold."""
    if not facts.is_push() or facts.held_grants is None:
        return
    agent = facts.service_agent_member()
    relied_on = {agent} if agent else set()
    if facts.push_auth_account:
        relied_on.add(member(facts.push_auth_account))
    for held in facts.held_grants:
        if len(held.holders) < 2:
            continue
        grant = held.grant
        by_form = agent is None and _is_agent_member(grant.member)
        if grant.member not in relied_on and not by_form:
            continue
        where = f" on {grant.resource}" if grant.resource else ""
        note = (
            " (the project number is not configured, so the Pub/Sub service agent was matched "
            "by its form; add the project to the policy config's top-level "
            "projectNumbers to check only this project's agent)"
            if by_form
            else ""
        )
        yield Result.violation(
            f"{grant.role} for {grant.member}{where} is held by {len(held.holders)} resources "
            f"({', '.join(held.holders)}): deleting any one of them removes the binding for all"
            f"{note}.",
            None,
            role=grant.role,
            member=grant.member,
            holders=", ".join(held.holders),
        )


def _is_agent_member(grant_member: str) -> bool:
    """Whether an IAM member is a Pub/Sub service agent of any project
    (``serviceAccount:service-N@gcp-sa-pubsub.iam.gserviceaccount.com``)."""
    kind, _, email = grant_member.partition(":")
    return kind == "serviceAccount" and is_pubsub_service_agent(email)


RULE = Rule(
    id="push-shared-iam-binding",
    title="A grant the push relies on is held by one resource",
    default_level=EnforcementLevel.ADVISORY,
    severity="medium",
    remediation=(
        "Declare each (resource, role, member) binding once: keep one *IAMMember and remove the "
        "others, or hold a project-level grant in one platform stack and set "
        'token_creator_grant: "none" / grant_invoker: false on the components of team stacks.'
    ),
    check=check,
    # it reads the stack's declarations: the audit (one asset per binding) cannot see them
    enforcement_points=("pack", "preview", "analyze"),
)
