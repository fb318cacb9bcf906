"""The component's spec as rule facts, including the grants the component itself makes.

Feeding the component's own grants to the rules makes "correct by construction" a checked claim:
if a change to the component stopped granting token creator or the invoker role, the component's
own rule check would report it.
"""

from __future__ import annotations

from pushguard.components.args import TargetKind, TokenCreatorGrant
from pushguard.components.spec import DEFERRED, PushSubscriptionSpec
from pushguard.rules.facts import IamGrant, InvokerTarget, SubscriptionFacts, pubsub_service_agent_email
from pushguard.rules.iam import ACT_AS_ROLES

_TARGET_KIND = {
    TargetKind.CLOUD_RUN: "cloud-run",
    TargetKind.CLOUD_FUNCTION_V2: "cloud-run",
    TargetKind.CLOUD_FUNCTION_V1: "cloud-function-v1",
    TargetKind.EXTERNAL: "external",
}
_INVOKER_ROLE = {"cloud-run": "roles/run.invoker", "cloud-function-v1": "roles/cloudfunctions.invoker"}

FACT_TO_INPUT = {
    "push_endpoint": "push_endpoint",
    "push_auth_account": "push_auth_service_account_email",
    "audience": "audience",
    "in_service_perimeter": "in_service_perimeter",
    "project_number": "project_number",
    "token_creator_grant": "token_creator_grant",
    "target": "target",
    "dead_letter": "dead_letter",
}
"""Rule result fields (fact names) to the component's input names, for error messages."""


def component_facts(name: str, spec: PushSubscriptionSpec) -> SubscriptionFacts:
    """Rule facts for a component named ``name`` with a (possibly partly deferred) ``spec``."""
    unknown = set()
    endpoint = spec.known("push_endpoint")
    if endpoint is None:
        unknown.add("push_endpoint")
    audience = spec.audience if spec.audience is not None else spec.push_endpoint
    if audience is DEFERRED:
        unknown.add("audience")
    email = spec.known("push_auth_service_account_email")
    if spec.push_auth_service_account_email is DEFERRED:
        unknown.add("push_auth_account")
    project = spec.known("project")
    number = spec.known("project_number")
    agent = f"serviceAccount:{pubsub_service_agent_email(number)}" if number else None

    account_grants: list[IamGrant] = [IamGrant(role=r, member=d) for d in spec.deployers for r in ACT_AS_ROLES]
    if agent and spec.token_creator_grant is not TokenCreatorGrant.NONE:
        account_grants.append(IamGrant(role="roles/iam.serviceAccountTokenCreator", member=agent))

    kind = _TARGET_KIND[spec.target.kind]
    target_grants = (
        (IamGrant(role=_INVOKER_ROLE[kind], member=f"serviceAccount:{email}"),)
        if email and kind in _INVOKER_ROLE
        else ()
    )
    dead_letter_topic = None
    if spec.dead_letter is not None:
        dead_letter_topic = spec.dead_letter.topic or f"{name}-dead-letter"

    def agent_grants(role: str) -> tuple[IamGrant, ...]:
        return (IamGrant(role=role, member=agent),) if agent else ()

    return SubscriptionFacts(
        resource=name,
        project_id=project,
        project_number=number,
        push_endpoint=endpoint,
        push_auth_account=email,
        push_auth_account_project=None if spec.push_auth_service_account_email else project,
        audience=None if audience is DEFERRED else audience,
        in_service_perimeter=spec.in_service_perimeter,
        push_auth_account_grants=tuple(account_grants),
        token_creator_known_granted=spec.token_creator_grant is TokenCreatorGrant.NONE,
        invoker_target=InvokerTarget(kind=kind, grants=target_grants),  # type: ignore[arg-type]
        dead_letter_topic=None if dead_letter_topic is DEFERRED else dead_letter_topic,
        dead_letter_topic_grants=agent_grants("roles/pubsub.publisher"),
        subscription_grants=agent_grants("roles/pubsub.subscriber"),
        unknown=frozenset(unknown),
    )
