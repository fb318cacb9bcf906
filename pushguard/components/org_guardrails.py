"""``OrgGuardrails``: pushguard's rules as Google's own guardrails, rolled out like any stack.

The same compiler as ``pushguard guardrails`` (:func:`pushguard.guardrails.compile_guardrails`),
registered as resources instead of written as ``gcloud`` files:

- each custom constraint as ``gcp.orgpolicy.CustomConstraint`` (``name`` the constraint's
  ``custom.X`` and ``parent`` ``organizations/ORG``, as pulumi-gcp's "Org Policy Custom
  Constraint" example registers one);
- each policy that attaches one as ``gcp.orgpolicy.Policy`` (``parent`` the organization or the
  project, ``name`` ``PARENT/policies/custom.X`` from the constraint's ``name`` output, so the
  policy follows its constraint), with ``dry_run_spec`` (violations logged, nothing denied) or,
  for a mandatory rule with ``enforce``, ``spec``; a rule's ``enforce`` and pulumi-gcp's
  ``allow_all``/``deny_all`` take the strings ``"TRUE"``/``"FALSE"`` (pulumi-gcp's
  ``PolicySpecRuleArgs``);
- each Security Health Analytics custom module as
  ``gcp.securitycenter.ManagementOrganizationSecurityHealthAnalyticsCustomModule`` (location
  ``global``, enabled), with the module's predicate, resource selector, severity, description and
  recommendation as ``custom_config``.

Everything is compiled, and every input checked, before the component registers itself: bad
input raises :class:`OrgGuardrailsInputError` naming the input, and leaves no resource behind.
The compiler needs the ``guardrails`` extra (cel-python), imported only when the component is
constructed.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_gcp as gcp

from pushguard.components.args import GuardrailMethods, OrgGuardrailsArgs

if TYPE_CHECKING:
    from pushguard.guardrails import Guardrails, PolicyFile

TYPE_TOKEN = "pushguard:index:OrgGuardrails"

_OPTION_INPUTS = {
    "--method-types": "method_types",
    "--perimeter-tag": "perimeter_tag",
    "--organization": "organization_id",
    "--policy-config": "policy_config",
}
"""The compiler's option names (those of ``pushguard guardrails``) as this component's inputs."""


class OrgGuardrailsInputError(ValueError):
    """Bad ``OrgGuardrails`` inputs: ``problems`` is a tuple of ``(field, message)`` pairs, each
    field an input name (``organization_id``) or, for the policy config, the config's own path
    (``policy_config: push-auth-oidc.exceptions[0].expires``)."""

    def __init__(self, component: str, problems: list[tuple[str, str]]) -> None:
        self.component = component
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {field}: {message}" for field, message in problems)
        super().__init__(f"OrgGuardrails {component!r} has invalid inputs:\n{lines}")


class OrgGuardrails(pulumi.ComponentResource):
    """Organization Policy custom constraints (preventive, at the API, for every client), their
    policies (dry run first) and Security Health Analytics custom modules (detective), compiled
    from pushguard's rules and one policy config, for one organization.

    Only the parts of each rule that the ``pubsub.googleapis.com/Subscription`` resource alone
    decides are compiled; ``coverage`` says, per rule and target, what is ``compiled``,
    ``partial`` or ``not-compiled`` and why (docs/guardrails.md). Google-managed subscriptions
    (Cloud Build's ``gcb-*``, 1st-gen Cloud Functions' ``gcf-*``) are never denied.

    Raises:
        OrgGuardrailsInputError: a malformed organization ID, policy config or perimeter tag, an
            expired exception, or a generated value over one of Google's documented limits
            (at construction, before anything is registered).
    """

    constraint_names: pulumi.Output[list[str]]
    """The custom constraints' names, ``organizations/ORG/customConstraints/custom.X``."""
    policy_names: pulumi.Output[list[str]]
    """The policies' names, ``organizations/ORG/policies/custom.X`` or
    ``projects/PROJECT/policies/custom.X``."""
    module_names: pulumi.Output[list[str]]
    """The Security Health Analytics custom modules' resource names."""
    coverage: pulumi.Output[str]
    """The coverage of every rule on both targets, as ``pushguard guardrails`` writes it in
    ``coverage.json`` (JSON text)."""

    def __init__(
        self,
        name: str,
        args: OrgGuardrailsArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        guardrails = compiled(name, args)
        super().__init__(TYPE_TOKEN, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        constraints = {
            c.constraint_id: gcp.orgpolicy.CustomConstraint(
                f"{name}-{c.constraint_id}",
                name=c.constraint_id,
                parent=f"organizations/{guardrails.organization}",
                resource_types=list(c.resource_types),
                method_types=list(c.method_types),
                condition=c.condition,
                action_type=c.action_type,
                display_name=c.display_name,
                description=c.description,
                opts=child,
            )
            for c in guardrails.constraints
        }
        policies = [
            _policy(name, policy, constraints[policy.constraint_id], child)
            for policy in guardrails.policies
        ]
        modules = []
        if args.get("security_health_analytics", True):
            modules = [
                _module(name, module, guardrails.organization, child)
                for module in guardrails.modules
            ]
        self._outputs(guardrails, list(constraints.values()), policies, modules)

    def _outputs(
        self,
        guardrails: "Guardrails",
        constraints: list[gcp.orgpolicy.CustomConstraint],
        policies: list[gcp.orgpolicy.Policy],
        modules: list[Any],
    ) -> None:
        """Set the component's output attributes and register them; registers no resource."""
        from pushguard.guardrails.files import coverage_json  # noqa: PLC0415

        organization = f"organizations/{guardrails.organization}"
        self.constraint_names = pulumi.Output.all(
            *(
                pulumi.Output.concat(organization, "/customConstraints/", c.name)
                for c in constraints
            )
        )
        self.policy_names = pulumi.Output.all(*(p.name for p in policies))
        self.module_names = pulumi.Output.all(*(m.name for m in modules))
        self.coverage = pulumi.Output.from_input(coverage_json(guardrails))
        self.register_outputs(
            {
                "constraint_names": self.constraint_names,
                "policy_names": self.policy_names,
                "module_names": self.module_names,
                "coverage": self.coverage,
            }
        )


def compiled(name: str, args: OrgGuardrailsArgs) -> "Guardrails":
    """The guardrails ``args`` describe, compiled (:func:`pushguard.guardrails.compile_guardrails`).

    Raises:
        OrgGuardrailsInputError: ``args`` is not a mapping, an input has the wrong type, or the
            policy config or the compiler refuses it (naming the input and what is allowed).
    """
    if not isinstance(args, Mapping):
        raise OrgGuardrailsInputError(
            name, [("args", f"must be a mapping of the inputs (OrgGuardrailsArgs), not {args!r}")]
        )
    from pushguard.guardrails import GuardrailError, compile_guardrails  # noqa: PLC0415
    from pushguard.policy.config_file import PolicyConfigError, load_rule_config  # noqa: PLC0415

    options, path = _options(name, args)
    try:
        config = load_rule_config(path)
        return compile_guardrails(config, str(args.get("organization_id", "")), options)
    except PolicyConfigError as error:
        raise OrgGuardrailsInputError(
            name, [("policy_config", f"{error.source}: {p}") for p in error.problems]
        ) from None
    except GuardrailError as error:
        field = _OPTION_INPUTS.get(error.field, error.field)
        raise OrgGuardrailsInputError(name, [(field, error.message)]) from None


def _options(name: str, args: OrgGuardrailsArgs) -> tuple[Any, Path | None]:
    """The compiler's options and the policy config's path from ``args``, each input's type
    checked (plain values: they decide which resources exist)."""
    from pushguard.guardrails import GuardrailError, Options  # noqa: PLC0415
    from pushguard.guardrails.limits import check_organization  # noqa: PLC0415

    problems: list[tuple[str, str]] = []
    expected = {
        "organization_id": (str, "the organization's numeric ID, a string of digits"),
        "policy_config": (str, "a file path"),
        "enforce": (bool, "true or false"),
        "perimeter_tag": (str, "KEY=VALUE"),
        "security_health_analytics": (bool, "true or false"),
    }
    for field, (kind, allowed) in expected.items():
        value = args.get(field)
        if value is not None and not isinstance(value, kind):
            problems.append((field, f"must be {allowed} (a plain value, known at preview)"))
    organization = args.get("organization_id")
    if organization is None:
        problems.append(("organization_id", "is required: the organization's numeric ID"))
    elif isinstance(organization, str):
        try:
            check_organization(organization)
        except GuardrailError as error:
            problems.append(("organization_id", error.message))
    methods = args.get("method_types", GuardrailMethods.CREATE_UPDATE)
    allowed_methods = [m.value for m in GuardrailMethods]
    if methods not in allowed_methods:
        problems.append(("method_types", f"must be one of {', '.join(allowed_methods)}"))
    tag = args.get("perimeter_tag")
    key, equals, value = tag.partition("=") if isinstance(tag, str) else ("", "=", "")
    if not equals:
        problems.append(("perimeter_tag", "must be KEY=VALUE (the tag key's and value's names)"))
    if problems:
        raise OrgGuardrailsInputError(name, problems)
    options = Options(
        method_types=str(methods),
        enforce=bool(args.get("enforce", False)),
        perimeter_tag=(key, value) if tag is not None else None,
    )
    path = args.get("policy_config")
    return options, Path(path) if path is not None else None


def _spec_args(spec: Mapping[str, Any]) -> Any:
    """A policy file's ``spec``/``dryRunSpec`` (``{"rules": [{"enforce": bool, "condition":
    {"expression": ...}}]}``, the gcloud shape) as pulumi-gcp's spec args (``enforce`` as the
    strings ``"TRUE"``/``"FALSE"``)."""
    rules = []
    for rule in spec["rules"]:
        converted: dict[str, Any] = {"enforce": "TRUE" if rule["enforce"] else "FALSE"}
        if "condition" in rule:
            converted["condition"] = {"expression": rule["condition"]["expression"]}
        rules.append(converted)
    return {"rules": rules}


def _policy(
    name: str,
    policy: "PolicyFile",
    constraint: gcp.orgpolicy.CustomConstraint,
    opts: pulumi.ResourceOptions,
) -> gcp.orgpolicy.Policy:
    """``gcp.orgpolicy.Policy`` for one policy file, named ``NAME-FILE_STEM``, its ``name``
    following ``constraint``'s."""
    from pushguard.guardrails.files import policy_document  # noqa: PLC0415

    parent = policy.name.partition("/policies/")[0]
    document = policy_document(policy)
    spec = document.get("spec")
    dry_run = document.get("dryRunSpec")
    return gcp.orgpolicy.Policy(
        f"{name}-{policy.file_stem}",
        name=pulumi.Output.concat(parent, "/policies/", constraint.name),
        parent=parent,
        spec=_spec_args(spec) if spec is not None else None,
        dry_run_spec=_spec_args(dry_run) if dry_run is not None else None,
        opts=opts,
    )


def _module(name: str, module: Any, organization: str, opts: pulumi.ResourceOptions) -> Any:
    """The Security Health Analytics custom module ``module`` (a
    :class:`~pushguard.guardrails.ShaModule`), enabled at the organization."""
    return gcp.securitycenter.ManagementOrganizationSecurityHealthAnalyticsCustomModule(
        f"{name}-{module.display_name}",
        organization=organization,
        location="global",
        display_name=module.display_name,
        enablement_state="ENABLED",
        custom_config={
            "predicate": {"expression": module.expression},
            "resource_selector": {"resource_types": list(module.resource_types)},
            "severity": module.severity,
            "description": module.description,
            "recommendation": module.recommendation,
        },
        opts=opts,
    )
