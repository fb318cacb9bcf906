"""``PushSubscription``: a Pub/Sub push subscription with everything around it wired correctly."""

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_gcp as gcp

from pushguard.components.access import AccessChildren
from pushguard.components.args import PushSubscriptionArgs
from pushguard.components.audience import (
    audience_problem,
    run_app_origin,
    service_url,
    target_problems,
)
from pushguard.components.facts import component_facts
from pushguard.components.grants import PROVIDER_PROJECT
from pushguard.components.ids import account_id, pubsub_id
from pushguard.components.inputs import (
    Path,
    known_prefix,
    merge_resolved,
    split_inputs,
    value_at,
)
from pushguard.components.plumbing import NEVER_EXPIRES
from pushguard.components.spec import (
    DEFERRED,
    PushSubscriptionInputError,
    PushSubscriptionSpec,
    validate_spec,
)
from pushguard.rules import EnforcementLevel, evaluate
from pushguard.rules.accounts import pubsub_service_agent_email
from pushguard.rules.base import COMPONENT_INPUTS
from pushguard.rules.facts import TargetKind

TYPE_TOKEN = "pushguard:index:PushSubscription"

__all__ = ["NEVER_EXPIRES", "TYPE_TOKEN", "PushSubscription", "gcp_provider"]


def _check_rules(
    name: str,
    spec: PushSubscriptionSpec,
    problems: list[tuple[str, str]],
    warned: set[str],
    endpoint_prefix: str = "",
) -> None:
    """Add mandatory rule violations to ``problems``; log advisory ones once. Then the audience
    (:func:`~pushguard.components.audience.audience_problem`), unless the push endpoint it is
    derived from is already reported. ``endpoint_prefix``: what is known of a push endpoint
    that holds the unknown sentinel (:func:`~pushguard.components.inputs.known_prefix`)."""
    for finding in evaluate(component_facts(name, spec, endpoint_prefix)):
        if not finding.is_violation:
            continue
        field = COMPONENT_INPUTS.get(finding.field, "args") if finding.field else "args"
        text = f"{finding.message} [{finding.rule_id}]"
        if finding.level is EnforcementLevel.MANDATORY:
            problems.append((field, text))
        elif text not in warned:
            warned.add(text)
            pulumi.log.warn(f"PushSubscription {name!r}: {field}: {text}")
    _check_audience(spec, problems)


def _check_audience(spec: PushSubscriptionSpec, problems: list[tuple[str, str]]) -> None:
    if any(field == "push_endpoint" for field, _ in problems):
        return
    targets = target_problems(spec)
    problems += targets
    problem = audience_problem(spec)
    if problem and not targets:
        problems.append(("audience", problem.removeprefix("audience: ")))


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


class PushSubscription(AccessChildren):
    """A Pub/Sub push subscription with its push-auth service account, the Pub/Sub service agent's
    token-creator grant, the invoker binding on the target and the dead-letter permissions.

    Every known input is validated (pydantic, then the rule set's input rules) before any resource
    is registered: bad inputs raise one
    :class:`~pushguard.components.spec.PushSubscriptionInputError` naming every bad field and leave
    no resource behind. Inputs that are Outputs are validated again, with every input, when they
    resolve, and every child depends on that validation, so a refused value leaves none of the
    component's resources behind either (the resources the Output came from, such as a function
    whose ``url`` was passed, exist by then: a value known only at ``pulumi up`` cannot be
    checked before).

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
    so a change of push config fails at ``pulumi up`` and loses nothing, and ``paused`` is refused;
    with ``accept_backlog_loss`` it *replaces* the subscription instead
    (``replace_on_changes=["pushConfig"]``, delete before create): messages not yet acknowledged by
    the old subscription, and messages published while it is replaced, are lost to it.

    IDs not given are generated (:mod:`pushguard.components.ids`), the audience is one the target
    accepts (:mod:`pushguard.components.audience`), and grants on what the component does not
    create are shared by the program's components
    (:func:`~pushguard.components.grants.shared_grant`).

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
    dead_letter_topic: pulumi.Output[str | None]
    """The dead-letter topic's path, ``projects/PROJECT/topics/TOPIC`` (unset without
    ``dead_letter``)."""
    dead_letter_subscription: pulumi.Output[str | None]
    """The path of the pull subscription that keeps the dead letters,
    ``projects/PROJECT/subscriptions/NAME`` (unset when the component made none)."""

    def __init__(
        self,
        name: str,
        args: PushSubscriptionArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        if not isinstance(args, Mapping):
            raise PushSubscriptionInputError(
                name,
                [("args", f"must be a mapping of the inputs (PushSubscriptionArgs), not {args!r}")],
            )
        values: dict[str, Any] = dict(args)
        from_provider = "project" not in values
        missing: list[tuple[str, str]] = []
        if from_provider:
            try:
                values["project"] = _provider_project(name, opts)
            except PushSubscriptionInputError as error:
                missing = list(error.problems)  # listed with every other bad input below
        substituted, deferred, problems = split_inputs(values)
        if missing:
            substituted["project"] = DEFERRED
            problems = [*missing, *problems]
        prefix = known_prefix(values.get("push_endpoint"))
        spec = self._validate(name, substituted, problems, set(), prefix)
        super().__init__(TYPE_TOKEN, name, None, opts)
        self._name = name
        self._spec = spec
        self._provider = gcp_provider(opts)
        self._gated, self._validated = self._gate(name, values, substituted, deferred)
        self._warn_aliases(opts)
        self._checks: list[pulumi.Output[Any]] = []
        # The project in the keys of shared grants: the plain project, else (an explicit
        # provider's, an Output) a stand-in for it (see :mod:`pushguard.components.grants`).
        self._project_key: str | None = self._plain("project")
        if self._project_key is None and from_provider and self._provider is not None:
            self._project_key = PROVIDER_PROJECT
        self._build()

    def _warn_aliases(self, opts: pulumi.ResourceOptions | None) -> None:
        """Warn when ``aliases`` are given while an ID is generated: generated IDs derive from the
        component's URN (:mod:`pushguard.components.ids`), so a rename kept by aliases still
        gives new IDs, and Pulumi replaces the subscription (its undelivered messages are lost),
        the push-auth account and the dead-letter topic."""
        if opts is None or not opts.aliases:
            return
        generated = []
        if self._spec.subscription_name is None:
            generated.append("subscription_name")
        spec = self._spec
        if spec.push_auth_service_account_email is None and spec.push_auth_account_id is None:
            generated.append("push_auth_account_id")
        dead_letter = self._spec.dead_letter
        own_topic = dead_letter is not None and dead_letter.topic is None
        if generated or own_topic:
            keep = f"; set {' and '.join(generated)} to the current IDs" if generated else ""
            topic = "; the dead-letter topic and its subscription are replaced" if own_topic else ""
            pulumi.log.warn(
                f"PushSubscription {self._name!r}: aliases keep the component's resources but not "
                "its generated IDs, which derive from its URN: a renamed component gets new IDs, "
                "and Pulumi replaces what has one (a replaced subscription loses its undelivered "
                f"messages){keep}{topic} (docs/component.md, IDs)",
                resource=self,
            )

    @staticmethod
    def _validate(
        name: str,
        values: Mapping[str, Any],
        problems: list[tuple[str, str]],
        warned: set[str],
        endpoint_prefix: str = "",
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
            except PushSubscriptionInputError as more:
                # The checks across inputs that only run once every field is valid (the
                # dead-letter topic, pausing in a perimeter), on the inputs that are.
                problems += [p for p in more.problems if p[0].split(".")[0] not in failed]
                raise PushSubscriptionInputError(name, problems) from None
            _check_rules(name, rest, problems, warned, endpoint_prefix)
            raise PushSubscriptionInputError(name, problems) from None
        _check_rules(name, spec, problems, warned, endpoint_prefix)
        if problems:
            raise PushSubscriptionInputError(name, problems)
        return spec

    def _gate(
        self,
        name: str,
        values: Mapping[str, Any],
        substituted: dict[str, Any],
        deferred: dict[Path, Any],
    ) -> tuple[dict[Path, pulumi.Output[Any]], pulumi.Output[Any] | None]:
        """Each deferred input, passed on only after the whole spec validated with it resolved,
        and that validation as an Output of ``None`` (``None`` without deferred inputs), which
        every resource of the component depends on (:meth:`_child`, :meth:`_grant`): the
        Python SDK registers a resource only once its ``depends_on`` resolved
        (``pulumi.runtime._depends_on``), so a refused value leaves none of them behind. At
        preview, while a value is unknown, the dependency is on the resources it comes from.

        The validation reads the inputs as given in ``values``, resolved: one that resolves to a
        string holding the unknown sentinel is validated as not known yet, but what is known of
        a push endpoint, its start, is judged (an Output of ``"http://" + SENTINEL`` is refused
        as a plain ``http://`` endpoint is); the resources get it as an unknown (``deferred``)."""
        if not deferred:
            return {}, None
        paths = list(deferred)
        raw = [pulumi.Output.from_input(value_at(values, path)) for path in paths]
        warned: set[str] = set()

        def validate_resolved(resolved: list[Any]) -> bool:
            by_path = dict(zip(paths, resolved, strict=True))
            merged = merge_resolved(substituted, by_path)
            prefix = known_prefix(by_path.get(("push_endpoint",)))
            self._validate(name, merged, [], warned, prefix)
            return True

        # The gate carries no data, only success, so its secretness must not spread to every input.
        gate = pulumi.Output.unsecret(pulumi.Output.all(*raw).apply(validate_resolved))
        gated = {
            path: pulumi.Output.all(value, gate).apply(lambda pair: pair[0])
            for path, value in deferred.items()
        }
        return gated, gate.apply(lambda _: None)

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
        dead_letter_policy, publisher, kept = dead_letter if dead_letter else (None, None, None)
        grants = [
            grant
            for grant in (token_creator, *deployer_grants, invoker, publisher, kept)
            if grant is not None
        ]
        audience = self._audience()
        subscription = self._subscription(project, email, audience, dead_letter_policy, grants)
        self._dead_letter_subscriber(project, subscription, agent_member)
        self._outputs(
            project,
            subscription,
            email,
            audience,
            agent_email,
            dead_letter_policy=dead_letter_policy,
            kept=kept,
        )

    def _audience(self) -> Any:
        """The token's audience (:mod:`pushguard.components.audience`): the ``audience`` input,
        else the service URL (``target.url``, the origin of a ``run.app`` endpoint, a 1st-gen
        function's URL), else the push endpoint."""
        spec = self._spec
        if spec.audience is not None:
            return self._input("audience")
        kind = spec.target.kind
        if kind is TargetKind.EXTERNAL:
            return self._input("push_endpoint")
        if spec.target.url is not None:
            return self._input("target", "url")
        known = service_url(spec)
        if isinstance(known, str):
            return known
        if kind is TargetKind.CLOUD_FUNCTION_V1:
            parts = (
                self._input("target", "location"),
                self._input("target", "project") or self._input("project"),
                self._input("target", "name"),
            )
            return pulumi.Output.all(*parts).apply(
                lambda p: f"https://{p[0]}-{p[1]}.cloudfunctions.net/{p[2]}"
            )
        return pulumi.Output.from_input(self._input("push_endpoint")).apply(
            lambda endpoint: run_app_origin(endpoint) or endpoint
        )

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
        ``push_auth_account_id`` or generated, :func:`~pushguard.components.ids.account_id`) unless
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
            account_id=self._input("push_auth_account_id")
            or self._generated_id(project, account_id),
            project=project,
            display_name=f"Pub/Sub push auth: {self._name}"[:100],
            description="Signs Pub/Sub push requests (OIDC). Managed by pushguard.",
            opts=self._child(),
        )
        return account.email, account.name

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
        ``audience``, and ``depends_on`` every grant in ``grants``. Its ID is ``subscription_name``
        or generated (:func:`~pushguard.components.ids.pubsub_id`). Without ``expiration_ttl`` it
        never expires (:data:`NEVER_EXPIRES`).
        In a service perimeter with ``accept_backlog_loss`` a push config change replaces it,
        delete first; without, Pulumi updates it in place and Google refuses the update, so
        nothing is lost.

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
        ttl = field("expiration_ttl") if spec.expiration_ttl is not None else NEVER_EXPIRES
        expiration = gcp.pubsub.SubscriptionExpirationPolicyArgs(ttl=ttl)
        replace = spec.in_service_perimeter and spec.accept_backlog_loss
        name: Any = field("subscription_name") or self._generated_id(project, pubsub_id)
        if self._checks:  # a refused shared grant fails the subscription (and the program)
            name = pulumi.Output.all(name, *self._checks).apply(lambda values: values[0])
        return gcp.pubsub.Subscription(
            self._name,
            name=name,
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
                replace_on_changes=["pushConfig"] if replace else None,
                delete_before_replace=replace,
            ),
        )

    def _outputs(
        self,
        project: Any,
        subscription: gcp.pubsub.Subscription,
        email: pulumi.Input[str],
        audience: Any,
        agent_email: pulumi.Output[str],
        *,
        dead_letter_policy: gcp.pubsub.SubscriptionDeadLetterPolicyArgs | None,
        kept: gcp.pubsub.Subscription | None,
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
        self.dead_letter_topic = pulumi.Output.from_input(
            None if dead_letter_policy is None else dead_letter_policy.dead_letter_topic
        )
        self.dead_letter_subscription = (
            pulumi.Output.from_input(None)
            if kept is None
            else pulumi.Output.concat("projects/", project, "/subscriptions/", kept.name)
        )
        self.register_outputs(
            {
                "subscription_name": self.subscription_name,
                "subscription_id": self.subscription_id,
                "subscription_path": self.subscription_path,
                "push_auth_service_account_email": self.push_auth_service_account_email,
                "audience": self.audience,
                "service_agent_email": self.service_agent_email,
                "dead_letter_topic": self.dead_letter_topic,
                "dead_letter_subscription": self.dead_letter_subscription,
            }
        )
