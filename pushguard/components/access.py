"""The grants and dead-letter resources of
:class:`~pushguard.components.push_subscription.PushSubscription`: the service agent's
token-creator grant, the deployers' act-as grants, the invoker grant on the push target, and the
dead-letter topic, its pull subscription and the service agent's publisher and subscriber grants.
Each method registers what its docstring names and returns it for the subscription's
``depends_on``."""

import hashlib
import re
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_gcp as gcp

from pushguard.components.args import TokenCreatorGrant
from pushguard.components.ids import pubsub_id
from pushguard.components.limits import function_service_name
from pushguard.components.plumbing import NEVER_EXPIRES, ChildPlumbing
from pushguard.rules.facts import TargetKind
from pushguard.rules.iam import ACT_AS, INVOKER, PUBLISHER, SUBSCRIBER, TOKEN_CREATOR


def _member_slug(member: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", member.lower()).strip("-")[:40]
    return f"{slug}-{hashlib.sha256(member.encode()).hexdigest()[:6]}"


class AccessChildren(ChildPlumbing):
    """The grants and dead-letter children (see the module's docstring)."""

    def _token_creator(
        self, project: Any, account_path: pulumi.Output[str], agent_member: pulumi.Output[str]
    ) -> pulumi.Resource | None:
        """The Pub/Sub service agent's token-creator grant, so it can mint the push OIDC tokens.

        Registers ``NAME-token-creator``, as ``token_creator_grant`` says: a
        ``gcp.serviceaccount.IAMMember`` on the push-auth account (``service-account``), a
        ``gcp.projects.IAMMember`` on the project (``project``), or nothing (``none``). The grant
        on the project, or on an existing account, is shared (:func:`shared_grant`).

        Returns:
            The grant, or ``None`` when none is registered.
        """
        grant = self._spec.token_creator_grant
        role = TOKEN_CREATOR.granted
        known_project = self._project_key
        # The service agent is the subscription project's: no key while that is not known.
        agent_of = f"agent-of:{known_project}" if known_project else None
        if grant is TokenCreatorGrant.SERVICE_ACCOUNT:
            existing = self._plain("push_auth_service_account_email")
            return self._grant(
                "token-creator",
                (role, f"account:{existing}", agent_of) if existing else None,
                lambda name, opts: gcp.serviceaccount.IAMMember(
                    name,
                    service_account_id=account_path,
                    role=role,
                    member=agent_member,
                    opts=opts,
                ),
            )
        if grant is TokenCreatorGrant.PROJECT:
            return self._grant(
                "token-creator",
                (role, f"project:{known_project}", agent_of),
                lambda name, opts: gcp.projects.IAMMember(
                    name, project=project, role=role, member=agent_member, opts=opts
                ),
            )
        return None

    def _deployer_grants(self, account_path: pulumi.Output[str]) -> list[pulumi.Resource]:
        """Act-as on the push-auth account for each of ``deployers``, in their order.

        Registers one ``gcp.serviceaccount.IAMMember`` per deployer, ``NAME-act-as-SLUG`` (a slug
        of the member with a short hash).

        Returns:
            The grants (empty without deployers).
        """
        existing = self._plain("push_auth_service_account_email")

        def make(deployer: str) -> Callable[[str, pulumi.ResourceOptions], pulumi.Resource]:
            return lambda name, opts: gcp.serviceaccount.IAMMember(
                name,
                service_account_id=account_path,
                role=ACT_AS.granted,
                member=deployer,
                opts=opts,
            )

        return [
            self._grant(
                f"act-as-{_member_slug(deployer)}",
                (ACT_AS.granted, f"account:{existing}", deployer) if existing else None,
                make(deployer),
            )
            for deployer in dict.fromkeys(self._spec.deployers)  # each binding once
        ]

    def _invoker(self, email: pulumi.Input[str], project: Any) -> pulumi.Resource | None:
        """The push-auth account's invoker grant on the push target.

        Registers ``NAME-invoker``: a ``gcp.cloudrunv2.ServiceIamMember`` for a Cloud Run service
        or a 2nd gen function (on its Cloud Run service,
        :func:`~pushguard.components.limits.function_service_name`), a
        ``gcp.cloudfunctions.FunctionIamMember`` for a 1st gen function,
        in the target's project (the subscription's unless given); nothing for external targets or
        with ``grant_invoker`` false. For an existing push-auth account the grant is shared
        (:func:`shared_grant`).

        Returns:
            The grant, or ``None`` when none is registered.
        """
        kind = self._spec.target.kind
        if not self._spec.grant_invoker or kind not in INVOKER:
            return None
        target_project = self._input("target", "project") or project
        service = self._input("target", "name")
        if kind is TargetKind.CLOUD_FUNCTION_V2:  # the function's Cloud Run service
            service = (
                function_service_name(service)
                if isinstance(service, str)
                else pulumi.Output.from_input(service).apply(function_service_name)
            )
        push_member = pulumi.Output.concat("serviceAccount:", email)
        role = INVOKER[kind].granted
        existing = self._plain("push_auth_service_account_email")
        where = (
            self._plain("target", "project") or self._project_key,
            self._plain("target", "location"),
            service if isinstance(service, str) else None,
        )
        key = None
        if existing and all(where):
            key = (role, f"{kind.value}:{'/'.join(map(str, where))}", f"serviceAccount:{existing}")
        if kind in (TargetKind.CLOUD_RUN, TargetKind.CLOUD_FUNCTION_V2):
            return self._grant(
                "invoker",
                key,
                lambda name, opts: gcp.cloudrunv2.ServiceIamMember(
                    name,
                    project=target_project,
                    location=self._input("target", "location"),
                    name=service,
                    role=role,
                    member=push_member,
                    opts=opts,
                ),
            )
        return self._grant(
            "invoker",
            key,
            lambda name, opts: gcp.cloudfunctions.FunctionIamMember(
                name,
                project=target_project,
                region=self._input("target", "location"),
                cloud_function=self._input("target", "name"),
                role=role,
                member=push_member,
                opts=opts,
            ),
        )

    def _dead_letter(
        self, project: Any, agent_member: pulumi.Output[str]
    ) -> (
        tuple[
            gcp.pubsub.SubscriptionDeadLetterPolicyArgs,
            pulumi.Resource,
            gcp.pubsub.Subscription | None,
        ]
        | None
    ):
        """The dead-letter topic, a subscription that keeps its messages, and the service agent's
        right to forward to it.

        Registers, when ``dead_letter`` is set, unless ``dead_letter.topic`` names an existing
        topic by ID or path: the topic ``NAME-dead-letter`` (``gcp.pubsub.Topic``) and, unless
        ``dead_letter.subscription`` is false, the pull subscription ``NAME-dead-letter`` on it
        (``gcp.pubsub.Subscription``, retention ``dead_letter.message_retention_duration``, never
        expiring): messages published to a topic with no subscription are lost
        (https://cloud.google.com/pubsub/docs/handling-failures#dead_letter_topic). Both get the
        generated ID :func:`~pushguard.components.ids.pubsub_id` with suffix ``dead-letter``.
        Then ``NAME-dead-letter-publisher`` (``gcp.pubsub.TopicIAMMember``) for the service agent,
        shared by the program's components that name the same existing topic
        (:func:`shared_grant`). The subscriber grant is on the subscription, so
        :meth:`_dead_letter_subscriber` registers it after the subscription.

        Returns:
            The subscription's dead-letter policy, the publisher grant and the pull subscription
            (``None`` when none is made), or ``None`` without ``dead_letter``.
        """
        spec = self._spec.dead_letter
        if spec is None:
            return None
        topic, kept = self._dead_letter_topic(project, spec.subscription)
        path = self._plain("dead_letter", "topic")
        project_key = self._project_key
        if path and not path.startswith("projects/"):
            path = f"projects/{project_key}/topics/{path}"
        publisher = self._grant(
            "dead-letter-publisher",
            (PUBLISHER.granted, f"topic:{path}", f"agent-of:{project_key}")
            if path and project_key
            else None,
            lambda name, opts: gcp.pubsub.TopicIAMMember(
                name, topic=topic, role=PUBLISHER.granted, member=agent_member, opts=opts
            ),
        )
        policy = gcp.pubsub.SubscriptionDeadLetterPolicyArgs(
            dead_letter_topic=topic,
            max_delivery_attempts=self._input("dead_letter", "max_delivery_attempts"),
        )
        return policy, publisher, kept

    def _dead_letter_topic(
        self, project: Any, keep_messages: bool
    ) -> tuple[Any, gcp.pubsub.Subscription | None]:
        """The dead-letter topic's path and the pull subscription made on it (see
        :meth:`_dead_letter`): the topic ``dead_letter.topic`` names, or a new ``NAME-dead-letter``
        topic with, when ``keep_messages``, its ``NAME-dead-letter`` pull subscription."""
        given = self._input("dead_letter", "topic")
        if given is not None:
            topic = pulumi.Output.all(project, given).apply(
                lambda pair: (
                    pair[1]
                    if pair[1].startswith("projects/")
                    else f"projects/{pair[0]}/topics/{pair[1]}"
                )
            )
            return topic, None
        topic_id = self._generated_id(project, lambda p, urn: pubsub_id(p, urn, "dead-letter"))
        created = gcp.pubsub.Topic(
            f"{self._name}-dead-letter", name=topic_id, project=project, opts=self._child()
        )
        topic = pulumi.Output.concat("projects/", project, "/topics/", created.name)
        if not keep_messages:
            return topic, None
        kept = gcp.pubsub.Subscription(
            f"{self._name}-dead-letter",
            name=topic_id,
            project=project,
            topic=topic,
            message_retention_duration=self._input("dead_letter", "message_retention_duration"),
            expiration_policy=gcp.pubsub.SubscriptionExpirationPolicyArgs(ttl=NEVER_EXPIRES),
            opts=self._child(),
        )
        return topic, kept

    def _dead_letter_subscriber(
        self,
        project: Any,
        subscription: gcp.pubsub.Subscription,
        agent_member: pulumi.Output[str],
    ) -> pulumi.Resource | None:
        """The service agent's right to acknowledge the messages it forwards to the dead letter.

        Registers, when ``dead_letter`` is set, ``NAME-dead-letter-subscriber``
        (``gcp.pubsub.SubscriptionIAMMember`` on the subscription, so after it).

        Returns:
            The grant, or ``None`` without ``dead_letter``.
        """
        if self._spec.dead_letter is None:
            return None
        return gcp.pubsub.SubscriptionIAMMember(
            f"{self._name}-dead-letter-subscriber",
            project=project,
            subscription=subscription.name,
            role=SUBSCRIBER.granted,
            member=agent_member,
            opts=self._child(),
        )
