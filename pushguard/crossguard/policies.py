"""The rule set as CrossGuard policies: one policy per rule, named by the rule ID.

Each :class:`PushguardPolicy` runs at both points the Pulumi engine offers
(https://www.pulumi.com/docs/iac/using-pulumi/crossguard/core-concepts/):

- as a **resource policy** on each push subscription, from its own properties, whatever its
  route (pulumi-gcp's ``gcp:pubsub/subscription:Subscription``, Google Cloud Native, Config
  Connector, the bridged Terraform provider: :mod:`pushguard.crossguard.routes` maps each
  into pulumi-gcp's form). At ``pulumi up`` every input is known, so a violation blocks the
  subscription before it is created. Results that need more than the resource (an unknown
  value at preview, IAM grants) are left to the stack half;
- as a **stack policy** over every resource: unknown values are resolved through the stack (see
  :mod:`pushguard.crossguard.graph`), grants and perimeters declared in the stack are read, and
  violations the resource half could not see are reported on the subscription's URN.

What still cannot be decided at preview is reported, never passed quietly: with the policy config
``unknownAtPreview: warn`` (default) as one advisory "can't run policy during preview" diagnostic
per policy listing each subscription and why; with ``enforce`` as a violation at the policy's
enforcement level. A validator never raises: bad config and malformed properties are reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from pushguard.crossguard.facts import Resolution, subscription_facts
from pushguard.crossguard.finding_note import encode
from pushguard.crossguard.graph import StackGraph
from pushguard.crossguard.not_checked import NotChecked
from pushguard.crossguard.resources import SUBSCRIPTION_TYPE, WireResource
from pushguard.crossguard.routes import (
    MAPPED_SUBSCRIPTION_TYPES,
    UNCHECKABLE_TYPES,
    SubscriptionType,
    canonical,
    canonical_stack,
    unmapped,
    unmapped_iam,
)
from pushguard.crossguard.scope import Unverified, current_scope
from pushguard.crossguard.secrets import scrub
from pushguard.crossguard.wire import WireShapeError
from pushguard.policy.settings import (
    PackConfigError,
    PackSettings,
    parse_settings,
    settings_json_schema,
)
from pushguard.rules import RULES, Result, Rule, Status
from pushguard.rules.identity import cause, finding_id

TAGS = ["gcp", "pubsub", "push"]

CHECKED_LATER = (
    "It is checked again when the values are known, at `pulumi up`; set unknownAtPreview to "
    "enforce to fail the preview instead"
)
"""The pack's sentence on a value it could not decide at preview: true of a preview, which
``pulumi up`` follows. ``pushguard analyze`` rewords it for a deployed stack's state, where nothing
checks later (:mod:`pushguard.analyze.runner`)."""


UNVERIFIED = "could not be verified"
"""With ``unknownAtPreview: enforce``, a value the pack could not decide is a violation worded
``NAME: could not be verified: WHY.`` (``pushguard analyze`` tells these apart: in a state nothing
checks them later)."""


class _Report(Protocol):
    def __call__(self, message: str, urn: str | None = None, *, excepted: bool = False) -> None: ...


def subscription_path(sub: WireResource, resolution: Resolution) -> str:
    """``projects/P/subscriptions/S`` of a subscription whose project and ``name`` are known
    (``""`` otherwise): the name an exception may use besides the URN."""
    name = sub.props.get("name")
    project = resolution.facts.project_id
    if isinstance(name, str) and name and project and "unknown" not in name.lower():
        return f"projects/{project}/subscriptions/{name.rsplit('/', 1)[-1]}"
    return ""


def _finding(
    report: _Report,
    text: str,
    result: Result,
    *,
    policy: str,
    settings: PackSettings,
    sub: WireResource,
    resolution: Resolution,
    urn: str | None = None,
    kind: str = "",
) -> None:
    """Report ``text`` about ``sub`` with the finding's ID and exception
    (:mod:`pushguard.crossguard.finding_note`); under an active exception the server lowers it to
    advisory. ``kind`` tells apart causes of one field (``unverified``: not known at preview)."""
    reason = cause(result.field, result.evidence)
    identity = finding_id(sub.urn, policy, f"{kind}:{reason}" if kind else reason)
    excepted = settings.exception_for(sub.urn, subscription_path(sub, resolution))
    active = excepted is not None and excepted.active
    report(encode(text, identity, excepted), urn, excepted=active)


@dataclass(frozen=True)
class _StackAnalysis:
    """The rule-independent part of a stack check: each readable subscription with its facts
    resolved through the stack's graph (every route's resources in pulumi-gcp's form), and each
    resource of a type known to create a subscription that pushguard does not map."""

    subscriptions: list[tuple[WireResource, Resolution]]
    unmapped: list[tuple[WireResource, SubscriptionType]]
    unmapped_grants: list[str]
    """The IAM resources whose grants are not read (:func:`~pushguard.crossguard.routes.
    unmapped_iam`), each described once."""
    unreadable: list[tuple[WireResource, WireShapeError]]
    """Subscriptions whose stack-side properties (the outputs, in ``pushguard analyze`` and
    ``AnalyzeStack``) have a shape the provider would never return: each is a diagnostic of
    every policy, never a pass (issue 27)."""

    @classmethod
    def of(cls, policy_resources: list[Any], settings: PackSettings) -> _StackAnalysis:
        wire = [WireResource.from_policy_resource(r) for r in policy_resources]
        skipped = [(r, known) for r in wire if (known := unmapped(r.type)) is not None]
        grants = sorted({f"{why} {r.name!r}" for r in wire if (why := unmapped_iam(r))})
        resources = canonical_stack(wire)
        graph = StackGraph.build(resources, settings)
        subscriptions = []
        unreadable = []
        for sub in resources:
            if sub.type != SUBSCRIPTION_TYPE:
                continue
            try:
                full = subscription_facts(sub, settings, graph)
            except WireShapeError as error:
                # Worded as the resource half words it, so the server drops the repeat when
                # the inputs have the same problem.
                unreadable.append((sub, error))
                continue
            subscriptions.append((sub, full))
        return cls(subscriptions, skipped, grants, unreadable)


_NUMBERS = "set projectNumbers (the subscription's project ID to its number) under {policy}"
ENABLES: dict[str, str] = {
    "project_number": _NUMBERS,
    "dead_letter": _NUMBERS,
    "token_creator_grant": "set projectNumbers, or tokenCreatorGrantedProjects, under {policy}",
    "in_service_perimeter": "set perimeterProjects and projectNumbers under {policy}",
    "push_auth_account": "set defaultProject (the project of subscriptions that name none) and "
    "projectNumbers under {policy}, or name the push-auth account by its e-mail",
    "target": "declare the service behind the endpoint in this stack to check its grants",
}
"""Per result field, what lets a rule decide (``{policy}``: the policy's name; settings go in
the policy config)."""


def _not_checked(policy: str, sub: WireResource, result: Result, cause: str = "") -> None:
    """Note that ``policy`` could not check ``sub`` for want of configuration (answered by the
    server as a ``not_applicable`` entry on the subscription); ``cause``: what configuration is
    missing beyond the result's own message (:func:`_unconfigured`)."""
    notes = current_scope().notes
    if notes is None:
        return
    hint = ENABLES.get(result.field or "", "").format(policy=policy)
    if sub.no_default_project and "defaultProject" in hint:
        # defaultProject does not stand in for a project its placement chooses (routes/kcc.py)
        hint = f"set projectNumbers under {policy}"
    enable = f"; {hint}" if hint else ""
    because = f" ({cause})" if cause else ""
    reason = scrub(f"{sub.name}: not checked: {result.message}{because}{enable}")
    notes.not_checked.append(NotChecked(policy, sub.urn, reason))


GRANT_RULES = frozenset(
    {
        "push-agent-token-creator",
        "push-invoker-binding",
        "push-dead-letter-iam",
        "push-sa-broad-grants",
        "push-target-requires-auth",
    }
)
"""The rules that read IAM grants declared in the stack: not checked at all (neither passed nor
violated) while the stack grants through a resource pushguard does not map."""


def _grants_not_read(policy: str, sub: WireResource, unread: list[str]) -> None:
    notes = current_scope().notes
    if notes is None:
        return
    reason = scrub(
        f"{sub.name}: not checked: the stack grants roles through {', '.join(unread)}, which "
        "pushguard does not map, so the grants this rule looks for are not all known"
    )
    notes.not_checked.append(NotChecked(policy, sub.urn, reason))


def _not_mapped(policy: str, resource: WireResource, known: SubscriptionType) -> None:
    """Note that ``policy`` did not check ``resource``, whose type creates a Pub/Sub
    subscription pushguard does not map (:data:`pushguard.crossguard.routes.SUBSCRIPTION_TYPES`)."""
    notes = current_scope().notes
    if notes is None:
        return
    reason = scrub(
        f"{resource.name}: not checked: {resource.type} creates a Pub/Sub subscription that "
        f"pushguard does not map ({known.why})"
    )
    notes.not_checked.append(NotChecked(policy, resource.urn, reason))


def _stack_analysis(policy_resources: list[Any], settings: PackSettings) -> _StackAnalysis:
    cache = current_scope().stack_cache
    if cache is None:
        return _StackAnalysis.of(policy_resources, settings)
    key = settings.model_dump_json()
    analysis = cache.get(key)
    if not isinstance(analysis, _StackAnalysis):
        analysis = cache[key] = _StackAnalysis.of(policy_resources, settings)
    return analysis


def _summary(rule: Rule) -> str:
    """The first sentence of the rule's rationale: Pulumi prints it above every violation."""
    return rule.description.split("\n\n", 1)[0].replace("\n", " ").replace("``", "")


class PushguardPolicy(ResourceValidationPolicy, StackValidationPolicy):
    """One rule of :data:`pushguard.rules.RULES` as a policy that is both a resource and a stack
    policy (pulumi-policy runs ``validate`` from ``Analyze`` and from ``AnalyzeStack``).

    Name, default enforcement level, severity, remediation steps and URL are the rule's; the
    config schema is :class:`~pushguard.policy.settings.PackSettings`'.
    """

    def __init__(self, rule: Rule) -> None:
        # Both base classes' __init__ take a validate callback; this class overrides validate.
        Policy.__init__(
            self,
            name=rule.id,
            description=_summary(rule),
            enforcement_level=EnforcementLevel(rule.default_level.value),
            config_schema=PolicyConfigSchema(settings_json_schema()),
            display_name=rule.title,
            severity=Severity(rule.severity),
            tags=list(TAGS),
            remediation_steps=rule.remediation,
            url=rule.url,
        )
        self.rule = rule

    def has_validation(self) -> bool:
        """Always validates (pulumi-policy asks before calling :meth:`validate`)."""
        return True

    def has_remediation(self) -> bool:
        """pushguard never rewrites resources."""
        return False

    def validate(self, args: Any, report_violation: ReportViolation) -> None:
        """Run the rule on one resource (``ResourceValidationArgs``) or on the stack
        (``StackValidationArgs``). Never raises, except pulumi-policy's ``UnknownValueError``
        that carries the "could not verify at preview" diagnostic."""

        def report(message: str, urn: str | None = None, *, excepted: bool = False) -> None:
            text = scrub(message)
            marked = current_scope().excepted
            if excepted and marked is not None:
                marked.add((self.name, text))
            report_violation(text, urn)

        if "pack" not in self.rule.enforcement_points:
            return  # needs the live side (audit --stacks): not applicable here, as described
        try:
            if isinstance(args, StackValidationArgs):
                self._validate_stack(args, report)
            elif isinstance(args, ResourceValidationArgs):
                self._validate_resource(args, report)
        except UnknownValueError:
            raise
        except Exception as error:
            report(f"pushguard failed to evaluate {self.name}: {type(error).__name__}: {error}")

    def _validate_resource(self, args: ResourceValidationArgs, report: _Report) -> None:
        known = unmapped(args.resource_type)
        if known is not None and args.resource_type in UNCHECKABLE_TYPES:
            report(
                f"{args.name}: cannot be checked: {args.resource_type} creates a Pub/Sub "
                f"subscription whose push config pushguard does not read ({known.why}); a gate "
                "cannot pass what it cannot read: use a mapped type"
            )
            return
        if args.resource_type not in MAPPED_SUBSCRIPTION_TYPES:
            return
        try:
            settings = parse_settings(self.name, args.get_config())
        except PackConfigError as error:
            report(f"{error}. Fix policy-config.json; until then this policy cannot check.")
            return
        try:
            [sub] = canonical(WireResource.from_args(args))
            resolution = subscription_facts(sub, settings)
        except WireShapeError as error:
            report(f"Cannot read subscription {args.name!r}: {error}.")
            return
        for result in self.rule.check(resolution.facts):
            if result.status is Status.VIOLATION:
                text = f"{args.name}: {result.message}"
                _finding(
                    report,
                    text,
                    result,
                    policy=self.name,
                    settings=settings,
                    sub=sub,
                    resolution=resolution,
                )

    def _report_unanalysed(self, analysis: _StackAnalysis, report: _Report) -> None:
        """What no rule can run on: subscriptions of a type pushguard does not map (not
        checked) and subscriptions whose outputs have a shape no provider returns (reported)."""
        for resource, known in analysis.unmapped:
            _not_mapped(self.name, resource, known)
        for sub, problem in analysis.unreadable:
            report(f"Cannot read subscription {sub.name!r}: {problem}.", sub.urn)

    def _validate_stack(self, args: StackValidationArgs, report: _Report) -> None:
        try:
            settings = parse_settings(self.name, args.get_config())
        except PackConfigError:
            return  # the resource half reports it on every subscription
        unverified: list[tuple[WireResource, Resolution, Result, str]] = []
        analysis = _stack_analysis(list(args.resources), settings)
        self._report_unanalysed(analysis, report)
        # A violation the resource half already reported (same policy, URN and finding ID) is
        # dropped by the server; one it could not see (the project or endpoint only in the
        # outputs, a provider that supplied the project) is reported here.
        for sub, full in analysis.subscriptions:
            if analysis.unmapped_grants and self.name in GRANT_RULES:
                _grants_not_read(self.name, sub, analysis.unmapped_grants)
                continue
            for result in self.rule.check(full.facts):
                if result.status is Status.VIOLATION:
                    text = f"{sub.name}: {result.message}"
                    _finding(
                        report,
                        text,
                        result,
                        policy=self.name,
                        settings=settings,
                        sub=sub,
                        resolution=full,
                        urn=sub.urn,
                    )
                elif _undecided_at_preview(full, result.field):
                    why = f"{result.message} ({_why(full, result.field)})"
                    unverified.append((sub, full, result, why))
                else:
                    _not_checked(self.name, sub, result, _unconfigured(full, result.field))
        if not unverified:
            return
        if settings.unknown_at_preview == "enforce":
            for sub, full, result, why in unverified:
                text = f"{sub.name}: {UNVERIFIED}: {why}."
                _finding(
                    report,
                    text,
                    result,
                    policy=self.name,
                    settings=settings,
                    sub=sub,
                    resolution=full,
                    urn=sub.urn,
                    kind="unverified",
                )
            return
        later = CHECKED_LATER
        notes = current_scope().notes
        if notes is not None:
            notes.unverified += [
                Unverified(self.name, sub.urn, scrub(f"{sub.name}: {why}. {later}"))
                for sub, _, _, why in unverified
            ]
        details = "; ".join(f"{sub.name}: {why}" for sub, _, _, why in unverified)
        error = UnknownValueError(UNKNOWN_STRING_VALUE, [])
        error.message = scrub(f"{details}. {later}")
        raise error


_RESTS_ON: dict[str, tuple[str, ...]] = {
    "push_endpoint": ("push_endpoint",),
    "push_auth_account": (
        "push_auth_account",
        "push_auth_account_grants",
        "push_auth_account_bindings",
        "project_id",
    ),
    "target": ("invoker_target", "push_endpoint", "push_auth_account"),
    "dead_letter": ("dead_letter_topic_grants", "subscription_grants", "project_id"),
    "project_number": ("project_id",),
    "in_service_perimeter": ("in_service_perimeter", "project_id"),
    "exactly_once_delivery": ("exactly_once_delivery",),
}
"""Per result field (:attr:`~pushguard.rules.Result.field`), the facts whose values decide it:
a result is undecided at preview only when one of these is unknown, and its reasons are theirs.
A field not listed rests on every fact."""


def _facts_for(field: str | None) -> tuple[str, ...] | None:
    """The facts a result field rests on, ``None`` when not listed (every fact)."""
    return _RESTS_ON.get(field) if field else None


def _undecided_at_preview(resolution: Resolution, field: str | None) -> bool:
    """An undecided result is due to preview when a fact it rests on is unknown, or has a
    reason (a value not known yet); otherwise the fact was simply not collected (not checked).
    A fact unknown for want of configuration (:attr:`Resolution.unconfigured`, no project
    anywhere) is not due to preview."""
    facts = _facts_for(field)
    unknown = resolution.facts.unknown - resolution.unconfigured.keys()
    if facts is None:
        return bool(unknown) or bool(resolution.reasons)
    return any(f in unknown or f in resolution.reasons for f in facts)


def _unconfigured(resolution: Resolution, field: str | None) -> str:
    """Why the facts a not-checked result rests on are missing from the configuration (each
    distinct reason once), or ``""``."""
    facts = _facts_for(field)
    missing = resolution.unconfigured
    keys = sorted(missing) if facts is None else [f for f in facts if f in missing]
    return "; ".join(dict.fromkeys(missing[f] for f in keys))


def _why(resolution: Resolution, field: str | None) -> str:
    """Why the facts a result rests on are unknown: their reasons, each distinct one once."""
    facts = _facts_for(field)
    reasons = resolution.reasons
    keys = sorted(reasons) if facts is None else [f for f in facts if f in reasons]
    chosen = list(dict.fromkeys(reasons[f] for f in keys))
    return "; ".join(chosen) if chosen else "a value is not known until the stack is deployed"


def build_policies() -> list[Policy]:
    """One :class:`PushguardPolicy` per rule, in the rule set's order."""
    return [PushguardPolicy(rule) for rule in RULES]
