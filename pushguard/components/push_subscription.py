"""``PushSubscription``: a Pub/Sub push subscription with everything around it wired correctly."""

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_gcp as gcp

from pushguard.components.args import PushSubscriptionArgs, TokenCreatorGrant
from pushguard.components.facts import component_facts
from pushguard.components.inputs import Path, merge_resolved, split_inputs
from pushguard.components.spec import (
    PushSubscriptionInputError,
    PushSubscriptionSpec,
    validate_spec,
)
from pushguard.rules import EnforcementLevel, evaluate
from pushguard.rules.accounts import pubsub_service_agent_email
from pushguard.rules.base import COMPONENT_INPUTS
from pushguard.rules.facts import TargetKind
from pushguard.rules.iam import ACT_AS, INVOKER, PUBLISHER, SUBSCRIBER, TOKEN_CREATOR

TYPE_TOKEN = "pushguard:index:PushSubscription"


def default_account_id(name: str) -> str:
    """A valid service account ID (6 to 30 characters) derived from a component name.

    ``orders`` gives ``orders-push``; names too long keep a 4-character hash for uniqueness.
    """
    slug = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-") or "sub"
    if not slug[0].isalpha():
        slug = f"p-{slug}"
    if len(slug) + len("-push") <= 30:
        return f"{slug}-push"
    digest = hashlib.sha256(name.encode()).hexdigest()[:4]
    return f"{slug[:20].rstrip('-')}-{digest}-push"


def _member_slug(member: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", member.lower()).strip("-")[:40]
    return f"{slug}-{hashlib.sha256(member.encode()).hexdigest()[:6]}"


def _check_rules(
    name: str, spec: PushSubscriptionSpec, problems: list[tuple[str, str]], warned: set[str]
) -> None:
    """Add mandatory rule violations to ``problems``; log advisory ones once."""
    for finding in evaluate(component_facts(name, spec)):
        if not finding.is_violation:
            continue
        field = COMPONENT_INPUTS.get(finding.field, "args") if finding.field else "args"
        text = f"{finding.message} [{finding.rule_id}]"
        if finding.level is EnforcementLevel.MANDATORY:
            problems.append((field, text))
        elif text not in warned:
            warned.add(text)
            pulumi.log.warn(f"PushSubscription {name!r}: {field}: {text}")


def gcp_provider(opts: pulumi.ResourceOptions | None) -> pulumi.ProviderResource | None:
    """The explicit Google provider the component's children use, picked as the Pulumi SDK picks
    it for a ``gcp`` resource whose parent is the component: ``opts.provider`` when it is a
    ``gcp`` provider, else the ``gcp`` entry of ``opts.providers`` (a list or a map), else the
    one the parent passes down (``opts.parent``); ``None`` for the default provider."""
    if opts is None:
        return None
    if opts.provider is not None and opts.provider.package == "gcp":
        return opts.provider
    providers = opts.providers
    found: pulumi.ProviderResource | None = None
    if isinstance(providers, Mapping):
        found = providers.get("gcp")
    elif providers:
        found = next((p for p in providers if p.package == "gcp"), None)
    if found is None and opts.parent is not None:
        found = opts.parent.get_provider(_SUBSCRIPTION)
    return found


_SUBSCRIPTION = "gcp:pubsub/subscription:Subscription"
_PROVIDER_PROJECT = (
    "is required: set the input or the project of the component's gcp provider (an explicit "
    "provider does not read the gcp:project config)"
)


def _provider_project(name: str, opts: pulumi.ResourceOptions | None) -> Any:
    """The project of the resources the component makes when ``project`` is not given, as the
    Google provider resolves it for them: an explicit provider's ``project`` (an Output of the
    provider resource; pulumi-gcp's ``Provider`` fills it from ``GOOGLE_PROJECT`` and the other
    project variables when not set, never from the stack config), else the default provider's:
    ``gcp:project``, else the same environment variables (``gcp.config.project``;
    https://www.pulumi.com/registry/packages/gcp/installation-configuration/).

    Raises:
        PushSubscriptionInputError: no project anywhere (for an explicit provider, when its
            ``project`` resolves).
    """
    provider = gcp_provider(opts)
    if provider is None:
        configured = gcp.config.project
        if not configured:
            raise PushSubscriptionInputError(
                name, [("project", "is required: set the input or the gcp:project config")]
            )
        return configured

    if not isinstance(provider, gcp.Provider):  # a provider whose inputs cannot be read
        raise PushSubscriptionInputError(name, [("project", _PROVIDER_PROJECT)])

    def required(project: str | None) -> str:
        if not project:
            raise PushSubscriptionInputError(name, [("project", _PROVIDER_PROJECT)])
        return project

    return provider.project.apply(required)


class PushSubscription(pulumi.ComponentResource):
    """A Pub/Sub push subscription with its push-auth service account, the Pub/Sub service agent's
    token-creator grant, the invoker binding on the target and the dead-letter permissions.

    Every known input is validated (pydantic, then the rule set's input rules) before any resource
    is registered: bad inputs raise one
    :class:`~pushguard.components.spec.PushSubscriptionInputError` naming every bad field and leave
    no resource behind. Inputs that are Outputs are validated when they resolve; the subscription
    receives only validated values, so it is never created with a bad one (child resources
    registered before that, such as the service account, may exist).

    Children (all IAM is additive ``*IAMMember``, never an authoritative binding or policy):
    ``gcp.serviceaccount.Account`` (unless an existing account is given), the token-creator grant
    (``gcp.serviceaccount.IAMMember`` on the account, or ``gcp.projects.IAMMember``), the invoker
    grant (``gcp.cloudrunv2.ServiceIamMember`` or ``gcp.cloudfunctions.FunctionIamMember``),
    ``roles/iam.serviceAccountUser`` for each deployer, the dead-letter topic and its publisher /
    subscriber grants, and the ``gcp.pubsub.Subscription``, which depends on the grants so the first
    push already has its permissions (the dead-letter subscriber grant is on the subscription, so it
    follows it).

    Inside a VPC Service Controls perimeter (``in_service_perimeter``) Pub/Sub cannot update an
    existing push subscription's push config (https://cloud.google.com/pubsub/docs/push#vpc-service-controls),
    so a change of push config *replaces* the subscription (``replace_on_changes=["pushConfig"]``;
    with an explicit ``subscription_name``, delete before create). Messages not yet acknowledged by
    the old subscription, and messages published while it is replaced, are lost to it.

    Raises:
        PushSubscriptionInputError: bad inputs (at construction, or when Outputs resolve).
    """

    subscription_name: pulumi.Output[str]
    """The subscription ID."""
    subscription_id: pulumi.Output[str]
    """The provider's ID of the subscription."""
    subscription_path: pulumi.Output[str]
    """``projects/PROJECT/subscriptions/NAME``."""
    push_auth_service_account_email: pulumi.Output[str]
    """The push-auth service account: the ``email`` claim receivers check."""
    audience: pulumi.Output[str]
    """The token audience: the ``aud`` claim receivers check."""
    service_agent_email: pulumi.Output[str]
    """The project's Pub/Sub service agent."""

    def __init__(
        self,
        name: str,
        args: PushSubscriptionArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        values: dict[str, Any] = dict(args)
        if "project" not in values:
            values["project"] = _provider_project(name, opts)
        substituted, deferred, problems = split_inputs(values)
        spec = self._validate(name, substituted, problems, set())
        super().__init__(TYPE_TOKEN, name, None, opts)
        self._name = name
        self._spec = spec
        self._gated = self._gate(name, substituted, deferred)
        self._build()

    @staticmethod
    def _validate(
        name: str,
        values: Mapping[str, Any],
        problems: list[tuple[str, str]],
        warned: set[str],
    ) -> PushSubscriptionSpec:
        try:
            spec = validate_spec(name, values)
        except PushSubscriptionInputError as error:
            reported = {field for field, _ in problems}
            problems = [*problems, *(p for p in error.problems if p[0] not in reported)]
            # Check the rules on the inputs that did validate, so one error lists every problem.
            failed = {field.split(".")[0] for field, _ in error.problems}
            try:
                rest = validate_spec(name, {k: v for k, v in values.items() if k not in failed})
            except PushSubscriptionInputError:
                raise PushSubscriptionInputError(name, problems) from None
            _check_rules(name, rest, problems, warned)
            raise PushSubscriptionInputError(name, problems) from None
        _check_rules(name, spec, problems, warned)
        if problems:
            raise PushSubscriptionInputError(name, problems)
        return spec

    def _gate(
        self, name: str, substituted: dict[str, Any], deferred: dict[Path, Any]
    ) -> dict[Path, pulumi.Output[Any]]:
        """Each deferred input, passed on only after the whole spec validated with it resolved."""
        if not deferred:
            return {}
        paths = list(deferred)
        warned: set[str] = set()

        def validate_resolved(resolved: list[Any]) -> bool:
            merged = merge_resolved(substituted, dict(zip(paths, resolved, strict=True)))
            self._validate(name, merged, [], warned)
            return True

        # The gate carries no data, only success, so its secretness must not spread to every input.
        gate = pulumi.Output.unsecret(
            pulumi.Output.all(*deferred.values()).apply(validate_resolved)
        )
        return {
            path: pulumi.Output.all(value, gate).apply(lambda pair: pair[0])
            for path, value in deferred.items()
        }

    def _input(self, *path: str) -> Any:
        """A validated input: the plain value, or the gated Output for a deferred one."""
        if path in self._gated:
            return self._gated[path]
        value: Any = self._spec
        for part in path:
            value = getattr(value, part) if value is not None else None
        return value

    def _child(self, **extra: Any) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, **extra)

    def _build(self) -> None:
        """Register every child, one resource family at a time.

        The order below is the order of registration, which Pulumi's URNs and the tests rely on:
        the push-auth account, the token-creator grant, the deployers' grants, the invoker grant,
        the dead-letter topic and publisher grant, the subscription (depending on every grant
        before it, so the first push already has its permissions), then the dead-letter
        subscriber grant (it is on the subscription, so it follows it) and the outputs.
        """
        project = self._input("project")
        agent_email, agent_member = self._service_agent(project)
        email, account_path = self._push_auth_account(project)
        token_creator = self._token_creator(project, account_path, agent_member)
        deployer_grants = self._deployer_grants(account_path)
        invoker = self._invoker(email, project)
        dead_letter = self._dead_letter(project, agent_member)
        dead_letter_policy, publisher = dead_letter if dead_letter else (None, None)
        grants = [
            grant
            for grant in (token_creator, *deployer_grants, invoker, publisher)
            if grant is not None
        ]
        audience = self._input("audience") or self._input("push_endpoint")
        subscription = self._subscription(project, email, audience, dead_letter_policy, grants)
        self._dead_letter_subscriber(project, subscription, agent_member)
        self._outputs(project, subscription, email, audience, agent_email)

    def _service_agent(self, project: Any) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
        """The project's Pub/Sub service agent; registers no resource.

        Uses the ``project_number`` input, or looks the number up
        (``gcp.organizations.get_project``, an invoke parented to the component) when not given.

        Returns:
            The agent's e-mail and its IAM member (``serviceAccount:EMAIL``).
        """
        number = self._input("project_number")
        if number is None:
            number = gcp.organizations.get_project_output(
                project_id=project, opts=pulumi.InvokeOptions(parent=self)
            ).number
        agent_email = pulumi.Output.from_input(number).apply(pubsub_service_agent_email)
        return agent_email, pulumi.Output.concat("serviceAccount:", agent_email)

    def _push_auth_account(self, project: Any) -> tuple[pulumi.Input[str], pulumi.Output[str]]:
        """The service account Pub/Sub signs push requests' OIDC tokens as.

        Registers ``NAME-push-auth`` (``gcp.serviceaccount.Account``, account ID from
        ``push_auth_account_id`` or :func:`default_account_id`) unless
        ``push_auth_service_account_email`` names an existing account, which is only referenced.

        Returns:
            The account's e-mail and its path (``projects/PROJECT/serviceAccounts/EMAIL``), the
            ``service_account_id`` of grants on the account.
        """
        if self._spec.push_auth_service_account_email is not None:
            email = self._input("push_auth_service_account_email")
            return email, pulumi.Output.concat("projects/", project, "/serviceAccounts/", email)
        account = gcp.serviceaccount.Account(
            f"{self._name}-push-auth",
            account_id=self._input("push_auth_account_id") or default_account_id(self._name),
            project=project,
            display_name=f"Pub/Sub push auth: {self._name}"[:100],
            description="Signs Pub/Sub push requests (OIDC). Managed by pushguard.",
            opts=self._child(),
        )
        return account.email, account.name

    def _token_creator(
        self, project: Any, account_path: pulumi.Output[str], agent_member: pulumi.Output[str]
    ) -> pulumi.Resource | None:
        """The Pub/Sub service agent's token-creator grant, so it can mint the push OIDC tokens.

        Registers ``NAME-token-creator``, as ``token_creator_grant`` says: a
        ``gcp.serviceaccount.IAMMember`` on the push-auth account (``service-account``), a
        ``gcp.projects.IAMMember`` on the project (``project``), or nothing (``none``).

        Returns:
            The grant, or ``None`` when none is registered.
        """
        grant = self._spec.token_creator_grant
        if grant is TokenCreatorGrant.SERVICE_ACCOUNT:
            return gcp.serviceaccount.IAMMember(
                f"{self._name}-token-creator",
                service_account_id=account_path,
                role=TOKEN_CREATOR.granted,
                member=agent_member,
                opts=self._child(),
            )
        if grant is TokenCreatorGrant.PROJECT:
            return gcp.projects.IAMMember(
                f"{self._name}-token-creator",
                project=project,
                role=TOKEN_CREATOR.granted,
                member=agent_member,
                opts=self._child(),
            )
        return None

    def _deployer_grants(self, account_path: pulumi.Output[str]) -> list[pulumi.Resource]:
        """Act-as on the push-auth account for each of ``deployers``, in their order.

        Registers one ``gcp.serviceaccount.IAMMember`` per deployer, ``NAME-act-as-SLUG`` (a slug
        of the member with a short hash).

        Returns:
            The grants (empty without deployers).
        """
        return [
            gcp.serviceaccount.IAMMember(
                f"{self._name}-act-as-{_member_slug(deployer)}",
                service_account_id=account_path,
                role=ACT_AS.granted,
                member=deployer,
                opts=self._child(),
            )
            for deployer in self._spec.deployers
        ]

    def _invoker(self, email: pulumi.Input[str], project: Any) -> pulumi.Resource | None:
        """The push-auth account's invoker grant on the push target.

        Registers ``NAME-invoker``: a ``gcp.cloudrunv2.ServiceIamMember`` for a Cloud Run service
        or a 2nd gen function, a ``gcp.cloudfunctions.FunctionIamMember`` for a 1st gen function,
        in the target's project (the subscription's unless given); nothing for other targets.

        Returns:
            The grant, or ``None`` when none is registered.
        """
        kind = self._spec.target.kind
        target_project = self._input("target", "project") or project
        push_member = pulumi.Output.concat("serviceAccount:", email)
        if kind in (TargetKind.CLOUD_RUN, TargetKind.CLOUD_FUNCTION_V2):
            return gcp.cloudrunv2.ServiceIamMember(
                f"{self._name}-invoker",
                project=target_project,
                location=self._input("target", "location"),
                name=self._input("target", "name"),
                role=INVOKER[kind].granted,
                member=push_member,
                opts=self._child(),
            )
        if kind is TargetKind.CLOUD_FUNCTION_V1:
            return gcp.cloudfunctions.FunctionIamMember(
                f"{self._name}-invoker",
                project=target_project,
                region=self._input("target", "location"),
                cloud_function=self._input("target", "name"),
                role=INVOKER[kind].granted,
                member=push_member,
                opts=self._child(),
            )
        return None

    def _dead_letter(
        self, project: Any, agent_member: pulumi.Output[str]
    ) -> tuple[gcp.pubsub.SubscriptionDeadLetterPolicyArgs, pulumi.Resource] | None:
        """The dead-letter topic and the service agent's right to forward to it.

        Registers, when ``dead_letter`` is set, the topic ``NAME-dead-letter``
        (``gcp.pubsub.Topic``, unless ``dead_letter.topic`` names an existing one by ID or path)
        and ``NAME-dead-letter-publisher`` (``gcp.pubsub.TopicIAMMember``) for the service agent.
        The subscriber grant is on the subscription, so :meth:`_dead_letter_subscriber` registers
        it after the subscription.

        Returns:
            The subscription's dead-letter policy and the publisher grant, or ``None`` without
            ``dead_letter``.
        """
        if self._spec.dead_letter is None:
            return None
        given = self._input("dead_letter", "topic")
        if given is None:
            topic: Any = gcp.pubsub.Topic(
                f"{self._name}-dead-letter", project=project, opts=self._child()
            ).id
        else:
            topic = pulumi.Output.all(project, given).apply(
                lambda pair: (
                    pair[1]
                    if pair[1].startswith("projects/")
                    else f"projects/{pair[0]}/topics/{pair[1]}"
                )
            )
        publisher = gcp.pubsub.TopicIAMMember(
            f"{self._name}-dead-letter-publisher",
            topic=topic,
            role=PUBLISHER.granted,
            member=agent_member,
            opts=self._child(),
        )
        policy = gcp.pubsub.SubscriptionDeadLetterPolicyArgs(
            dead_letter_topic=topic,
            max_delivery_attempts=self._input("dead_letter", "max_delivery_attempts"),
        )
        return policy, publisher

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

    def _subscription(
        self,
        project: Any,
        email: Any,
        audience: Any,
        dead_letter_policy: gcp.pubsub.SubscriptionDeadLetterPolicyArgs | None,
        grants: list[pulumi.Resource],
    ) -> gcp.pubsub.Subscription:
        """The push subscription itself.

        Registers ``gcp.pubsub.Subscription`` under the component's own name, with no push config
        when ``paused`` (a pull subscription), an OIDC token as the push-auth account for
        ``audience``, and ``depends_on`` every grant in ``grants``. In a service perimeter a push
        config change replaces it (delete before create with an explicit ``subscription_name``).

        Returns:
            The subscription.
        """
        spec, field = self._spec, self._input
        push_config = None
        if not spec.paused:
            push_config = gcp.pubsub.SubscriptionPushConfigArgs(
                push_endpoint=field("push_endpoint"),
                attributes=field("attributes"),
                oidc_token=gcp.pubsub.SubscriptionPushConfigOidcTokenArgs(
                    service_account_email=email, audience=audience
                ),
                no_wrapper=gcp.pubsub.SubscriptionPushConfigNoWrapperArgs(
                    write_metadata=field("write_metadata")
                )
                if spec.no_wrapper
                else None,
            )
        retry_policy = None
        if spec.retry_policy is not None:
            retry_policy = gcp.pubsub.SubscriptionRetryPolicyArgs(
                minimum_backoff=field("retry_policy", "minimum_backoff"),
                maximum_backoff=field("retry_policy", "maximum_backoff"),
            )
        expiration = None
        if spec.expiration_ttl is not None:
            expiration = gcp.pubsub.SubscriptionExpirationPolicyArgs(ttl=field("expiration_ttl"))
        perimeter = spec.in_service_perimeter
        return gcp.pubsub.Subscription(
            self._name,
            name=field("subscription_name"),
            project=project,
            topic=field("topic"),
            push_config=push_config,
            ack_deadline_seconds=field("ack_deadline_seconds"),
            message_retention_duration=field("message_retention_duration"),
            retain_acked_messages=field("retain_acked_messages"),
            expiration_policy=expiration,
            filter=field("filter"),
            enable_message_ordering=field("enable_message_ordering"),
            retry_policy=retry_policy,
            dead_letter_policy=dead_letter_policy,
            labels=field("labels"),
            opts=self._child(
                depends_on=grants,
                replace_on_changes=["pushConfig"] if perimeter else None,
                delete_before_replace=perimeter and spec.subscription_name is not None,
            ),
        )

    def _outputs(
        self,
        project: Any,
        subscription: gcp.pubsub.Subscription,
        email: pulumi.Input[str],
        audience: Any,
        agent_email: pulumi.Output[str],
    ) -> None:
        """Set the component's output attributes and register them; registers no resource."""
        self.subscription_name = subscription.name
        self.subscription_id = subscription.id
        self.subscription_path = pulumi.Output.concat(
            "projects/", project, "/subscriptions/", subscription.name
        )
        self.push_auth_service_account_email = pulumi.Output.from_input(email)
        self.audience = pulumi.Output.from_input(audience)
        self.service_agent_email = agent_email
        self.register_outputs(
            {
                "subscription_name": self.subscription_name,
                "subscription_id": self.subscription_id,
                "subscription_path": self.subscription_path,
                "push_auth_service_account_email": self.push_auth_service_account_email,
                "audience": self.audience,
                "service_agent_email": self.service_agent_email,
            }
        )
