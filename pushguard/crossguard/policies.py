"""The rule set as CrossGuard policies: one policy per rule, named by the rule ID.

Each :class:`PushguardPolicy` runs at both points the Pulumi engine offers
(https://www.pulumi.com/docs/iac/using-pulumi/crossguard/core-concepts/):

- as a **resource policy** on each push subscription, from its own properties, whatever its
  route (pulumi-gcp's ``gcp:pubsub/subscription:Subscription``, Google Cloud Native, Config
  Connector, the bridged Terraform provider: :mod:`pushguard.crossguard.routes` maps each
  into pulumi-gcp's form), and on each Eventarc trigger for the rules that judge triggers
  (:attr:`~pushguard.rules.base.Rule.kinds`; :mod:`pushguard.crossguard.triggers`). At
  ``pulumi up`` every input is known, so a violation blocks the subscription before it is
  created. Results that need more than the resource (an unknown value at preview, IAM grants)
  are left to the stack half;
- as a **stack policy** over every resource: unknown values are resolved through the stack (see
  :mod:`pushguard.crossguard.graph`), grants and perimeters declared in the stack are read, and
  violations the resource half could not see are reported on the subscription's URN.

A subscription Google creates and configures for its own products
(:mod:`pushguard.rules.google_managed`) is judged by no policy: neither half reports a
diagnostic on it, and the stack half answers it as not applicable to every policy, with the
product (:mod:`pushguard.crossguard.google_managed_note`).

A resource the pack cannot judge (a subscription of a known type pushguard does not map, or a
resource of any unmapped type shaped like a push configuration,
:mod:`pushguard.crossguard.routes.shaped`) is "cannot be checked": a violation of every enabled
policy, at the mandatory level whatever the policy's (the server raises it).

What still cannot be decided at preview is reported, never passed quietly: with the policy config
``unknownAtPreview: warn`` (default) as one advisory "can't run policy during preview" diagnostic
per policy listing each subscription and why; with ``enforce`` as a violation at the policy's
enforcement level. A validator never raises: bad config and malformed properties are reported.
"""

from __future__ import annotations

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
from pushguard.crossguard.google_managed_note import note as note_google_managed
from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.routes import (
    MAPPED_SUBSCRIPTION_TYPES,
    TRIGGER_TYPES,
    UNCHECKABLE_TYPES,
    cannot_check,
    canonical,
    unmapped,
)
from pushguard.crossguard.routes.eventarc import TRIGGER
from pushguard.crossguard.routes.shaped import push_shaped
from pushguard.crossguard.scope import Unverified, current_scope
from pushguard.crossguard.secrets import scrub
from pushguard.crossguard.stack_analysis import StackAnalysis, stack_analysis
from pushguard.crossguard.triggers import trigger_facts, trigger_path
from pushguard.crossguard.undecided import (
    GRANT_RULES,
    grants_not_read,
    not_checked,
    not_mapped,
    unconfigured,
    undecided_at_preview,
    why_unknown,
)
from pushguard.crossguard.wire import WireShapeError, plain
from pushguard.policy.config_file import PROJECT_NUMBERS
from pushguard.policy.settings import (
    PackConfigError,
    PackSettings,
    parse_settings,
    settings_json_schema,
)
from pushguard.rules import RULES, Result, Rule, Status
from pushguard.rules.facts import EVENTARC_TRIGGER
from pushguard.rules.google_managed import google_managed
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
    def __call__(
        self,
        message: str,
        urn: str | None = None,
        *,
        excepted: bool = False,
        mandatory: bool = False,
    ) -> None: ...


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
    path = trigger_path if resolution.facts.is_trigger else subscription_path
    place = sub.reported_on or ""  # a deployment's URN names each subscription it declares
    excepted = settings.exception_for(sub.urn, place, path(sub, resolution))
    active = excepted is not None and excepted.active
    report(encode(text, identity, excepted), urn, excepted=active)


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

        def report(
            message: str,
            urn: str | None = None,
            *,
            excepted: bool = False,
            mandatory: bool = False,
        ) -> None:
            text = scrub(message)
            scope = current_scope()
            if excepted and scope.excepted is not None:
                scope.excepted.add((self.name, text))
            if mandatory and scope.mandatory is not None:
                scope.mandatory.add((self.name, text))
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
        if args.resource_type in TRIGGER_TYPES and EVENTARC_TRIGGER not in self.rule.kinds:
            return  # the rule does not judge Eventarc triggers
        known = unmapped(args.resource_type)
        if known is not None and args.resource_type in UNCHECKABLE_TYPES:
            report(
                f"{args.name}: cannot be checked: {args.resource_type} creates a Pub/Sub "
                f"subscription whose push config pushguard does not read ({known.why}); a gate "
                "cannot pass what it cannot read: use a mapped type",
                mandatory=True,
            )
            return
        trigger = args.resource_type in TRIGGER_TYPES
        if not trigger and args.resource_type not in MAPPED_SUBSCRIPTION_TYPES:
            custom = args.provider is not None  # a component has none: its children are judged
            found = push_shaped(args.resource_type, args.name, plain(args.props), custom=custom)
            if found is not None:
                report(found.message(), mandatory=True)
            return
        try:
            settings = parse_settings(self.name, args.get_config())
        except PackConfigError as error:
            report(f"{error}. Fix policy-config.json; until then this policy cannot check.")
            return
        resource = WireResource.from_args(args)
        try:
            subs = canonical(resource)
        except WireShapeError as error:
            what = "Eventarc trigger" if trigger else "subscription"
            report(f"Cannot read {what} {args.name!r}: {error}.")
            return
        why = cannot_check(resource)
        if why:
            report(
                f"{args.name}: cannot be checked: {why}; a gate cannot pass what it cannot read",
                mandatory=True,
            )
        for sub in subs:
            self._check_resource(sub, settings, report, trigger=trigger)

    def _check_resource(
        self, sub: WireResource, settings: PackSettings, report: _Report, *, trigger: bool
    ) -> None:
        """The rule on one subscription's (or Eventarc trigger's) own properties (a resource
        policy's)."""
        what = "Eventarc trigger" if trigger else "subscription"
        try:
            resolution = (trigger_facts if trigger else subscription_facts)(sub, settings)
        except WireShapeError as error:
            report(f"Cannot read {what} {sub.name!r}: {error}.")
            return
        if google_managed(resolution.facts) is not None:
            return  # Google's: no policy applies (the stack half says so)
        for result in self.rule.check(resolution.facts):
            if result.status is Status.VIOLATION:
                text = f"{sub.name}: {result.message}"
                _finding(
                    report,
                    text,
                    result,
                    policy=self.name,
                    settings=settings,
                    sub=sub,
                    resolution=resolution,
                )

    def _report_unanalysed(self, analysis: StackAnalysis, report: _Report) -> None:
        """What no rule can run on: subscriptions of a type pushguard does not map (not
        checked; their resource half reports them), subscriptions whose outputs have a shape no
        provider returns (reported) and resources of unmapped types whose outputs are shaped
        like a push configuration (cannot be checked: reported, mandatory)."""
        for resource, known in analysis.unmapped:
            not_mapped(self.name, resource, known)
        for sub, problem in analysis.unreadable:
            if sub.type != TRIGGER:
                report(f"Cannot read subscription {sub.name!r}: {problem}.", sub.report_urn)
            elif EVENTARC_TRIGGER in self.rule.kinds:
                report(f"Cannot read Eventarc trigger {sub.name!r}: {problem}.", sub.report_urn)
        for resource, found in analysis.shaped:
            report(found.message(), resource.urn, mandatory=True)

    def _set_aside(self, sub: WireResource, full: Resolution, analysis: StackAnalysis) -> bool:
        """True when the stack half does not run the rule on ``sub``: an Eventarc trigger the
        rule does not judge; a Google-managed subscription (noted as such); a grant rule while
        the stack grants through an unmapped resource (noted as not checked)."""
        if not self.rule.applies_to(full.facts):
            return True
        managed = google_managed(full.facts)
        if managed is not None:
            note_google_managed(self.name, sub, managed)
            return True
        if analysis.unmapped_grants and self.name in GRANT_RULES:
            grants_not_read(self.name, sub, analysis.unmapped_grants)
            return True
        return False

    def _validate_stack(self, args: StackValidationArgs, report: _Report) -> None:
        try:
            settings = parse_settings(self.name, args.get_config())
        except PackConfigError:
            return  # the resource half reports it on every subscription
        unverified: list[tuple[WireResource, Resolution, Result, str]] = []
        analysis = stack_analysis(list(args.resources), settings)
        self._report_unanalysed(analysis, report)
        # A violation the resource half already reported (same policy, URN and finding ID) is
        # dropped by the server; one it could not see (the project or endpoint only in the
        # outputs, a provider that supplied the project) is reported here.
        for sub, full in analysis.subscriptions:
            if self._set_aside(sub, full, analysis):
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
                        urn=sub.report_urn,
                    )
                elif undecided_at_preview(full, result.field):
                    why = f"{result.message} ({why_unknown(full, result.field)})"
                    unverified.append((sub, full, result, why))
                else:
                    not_checked(self.name, sub, result, unconfigured(full, result.field))
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
                    urn=sub.report_urn,
                    kind="unverified",
                )
            return
        later = CHECKED_LATER
        notes = current_scope().notes
        if notes is not None:
            notes.unverified += [
                Unverified(self.name, sub.report_urn, scrub(f"{sub.name}: {why}. {later}"))
                for sub, _, _, why in unverified
            ]
        details = "; ".join(f"{sub.name}: {why}" for sub, _, _, why in unverified)
        error = UnknownValueError(UNKNOWN_STRING_VALUE, [])
        error.message = scrub(f"{details}. {later}")
        raise error


class ProjectNumbersPolicy(StackValidationPolicy):
    """The settings-only policy named ``projectNumbers``: it checks nothing and reports nothing.
    Its configuration is the one map of project IDs to numbers that every pushguard policy reads
    (:data:`pushguard.policy.config_file.PROJECT_NUMBERS`); it exists so that the Pulumi CLI
    accepts that top-level entry of ``policy-config.json`` and passes it to ``Configure``, where
    the server lays it under each policy's ``projectNumbers``."""

    def __init__(self) -> None:
        super().__init__(
            name=PROJECT_NUMBERS,
            description=(
                "Settings, not a check: the project ID -> project number map every pushguard "
                "policy reads (perimeters, service agents, accounts named by number)."
            ),
            validate=lambda args, report_violation: None,
            enforcement_level=EnforcementLevel.ADVISORY,
            config_schema=PolicyConfigSchema({}),
            display_name="Project numbers (settings)",
            tags=list(TAGS),
        )


def build_policies() -> list[Policy]:
    """One :class:`PushguardPolicy` per rule, in the rule set's order, then the settings-only
    :class:`ProjectNumbersPolicy`."""
    return [*(PushguardPolicy(rule) for rule in RULES), ProjectNumbersPolicy()]
