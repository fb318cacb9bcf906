"""The component's spec as rule facts, including the grants the component itself makes.

Feeding the component's own grants to the rules makes "correct by construction" a checked claim:
if a change to the component stopped granting token creator or the invoker role, the component's
own rule check would report it.
"""

from __future__ import annotations

from pushguard.components.args import TokenCreatorGrant
from pushguard.components.audience import effective_audience
from pushguard.components.endpoints import target_service
from pushguard.components.spec import DEFERRED, PushSubscriptionSpec
from pushguard.rules.accounts import member, normalise_email, pubsub_service_agent_email
from pushguard.rules.facts import IamGrant, InvokerTarget, SubscriptionFacts
from pushguard.rules.iam import ACT_AS, INVOKER, PUBLISHER, SUBSCRIBER, TOKEN_CREATOR


def component_facts(
    name: str, spec: PushSubscriptionSpec, endpoint_prefix: str = ""
) -> SubscriptionFacts:
    """Rule facts for a component named ``name`` with a (possibly partly deferred) ``spec``;
    ``endpoint_prefix``: what is known of a ``push_endpoint`` that is not known yet, the text
    before the unknown sentinel (:func:`~pushguard.components.inputs.known_prefix`)."""
    audience = effective_audience(spec)
    unknown = {
        fact
        for fact, field in (
            ("push_endpoint", "push_endpoint"),
            ("push_auth_account", "push_auth_service_account_email"),
        )
        if spec.is_deferred(field)
    }
    if audience is DEFERRED:
        unknown.add("audience")
    if spec.is_deferred("project") and spec.push_auth_service_account_email is None:
        # The account the component makes is in the project, an Output (its provider's project).
        unknown.add("push_auth_account")
    given_email = spec.known("push_auth_service_account_email")
    email = normalise_email(given_email) if given_email else None
    project = spec.known("project")
    number = spec.known("project_number")
    agent = member(pubsub_service_agent_email(number)) if number else None

    def agent_grants(role: str) -> tuple[IamGrant, ...]:
        return (IamGrant(role=role, member=agent),) if agent else ()

    account_grants = [IamGrant(role=ACT_AS.granted, member=d) for d in spec.deployers]
    if spec.token_creator_grant is not TokenCreatorGrant.NONE:
        account_grants += agent_grants(TOKEN_CREATOR.granted)

    kind = spec.target.kind
    target_grants: tuple[IamGrant, ...] = ()
    if email and kind in INVOKER:
        target_grants = (IamGrant(role=INVOKER[kind].granted, member=member(email)),)

    dead_letter_topic = None
    if spec.dead_letter is not None:
        dead_letter_topic = spec.dead_letter.known("topic") or f"{name}-dead-letter"

    return SubscriptionFacts(
        resource=name,
        project_id=project,
        project_number=number,
        push_endpoint=spec.known("push_endpoint"),
        push_endpoint_prefix=endpoint_prefix if spec.is_deferred("push_endpoint") else "",
        push_auth_account=email,
        push_auth_account_project=None if spec.push_auth_service_account_email else project,
        audience=None if audience is DEFERRED else audience,
        in_service_perimeter=spec.in_service_perimeter,
        push_auth_account_grants=tuple(account_grants),
        token_creator_known_granted=spec.token_creator_grant is TokenCreatorGrant.NONE,
        invoker_target=InvokerTarget(kind=kind, name=_known_name(spec), grants=target_grants),
        dead_letter_topic=dead_letter_topic,
        dead_letter_topic_grants=agent_grants(PUBLISHER.granted),
        subscription_grants=agent_grants(SUBSCRIBER.granted),
        unknown=frozenset(unknown),
    )


def _known_name(spec: PushSubscriptionSpec) -> str:
    """The target's service name (for a 2nd-gen function its Cloud Run service's,
    :func:`~pushguard.components.endpoints.target_service`), or ``""`` when it is not given or
    not known yet."""
    name = target_service(spec)
    return name if isinstance(name, str) else ""
