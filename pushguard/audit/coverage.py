"""What the audit must read for each rule to decide, and what a run could not see.

A Cloud Asset Inventory export holds one content type per ``gcloud asset export
--content-type`` run (``resource``, ``iam-policy``, ``org-policy``, ``access-policy``,
``os-inventory``, ``relationship``: ``AddContentTypeArgs`` in
google-cloud-sdk-unofficial/google-cloud-sdk ``lib/googlecloudsdk/command_lib/asset/flags.py``;
the API's ``ContentType``, https://cloud.google.com/asset-inventory/docs/reference/rest/v1/TopLevel/exportAssets#ContentType).
A rule whose content type is missing cannot fire, and an audit that says nothing of it passes
what it never saw. So:

- :data:`RULE_NEEDS` says, per rule, what it reads and what it reports when a part is missing
  (the table of docs/audit.md, :func:`needs_markdown`);
- :data:`INPUTS` are the parts a run can tell it did not read at all (no subscription, no IAM
  policy, no service perimeter), and :func:`missing_inputs` names the enabled rules that needed
  each (``summary.json`` ``coverage``, the summary line, ``report.html``);
- :func:`blindness` turns that into the exit code's reason under ``--fail-on-blind``.

Plain Python: no Spark (the counts come from :mod:`pushguard.audit.aggregates`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pushguard.policy.settings import PackSettings
from pushguard.rules import RULES, RULES_BY_ID, EnforcementLevel
from pushguard.rules.base import AUDIT_WITH_STACKS

SUBSCRIPTIONS = "subscriptions"
IAM_POLICIES = "iam-policies"
SERVICE_PERIMETERS = "service-perimeters"


@dataclass(frozen=True)
class Input:
    """A part of the export a run can tell it did not read at all."""

    key: str
    """The key in ``summary.json`` (``coverage.read``, ``coverage.missing``)."""
    what: str
    """What it is, in words (``IAM policies``)."""
    export: str
    """How to export it (the ``gcloud asset export`` content type)."""


INPUTS: tuple[Input, ...] = (
    Input(SUBSCRIPTIONS, "Pub/Sub subscriptions", "--content-type=resource"),
    Input(IAM_POLICIES, "IAM policies", "--content-type=iam-policy"),
    Input(
        SERVICE_PERIMETERS,
        "VPC Service Controls service perimeters",
        "--organization=ORG_ID --content-type=access-policy",
    ),
)
INPUTS_BY_KEY = {item.key: item for item in INPUTS}

BLIND_MODES = ("nothing-read", "missing-inputs", "never")
"""The ``--fail-on-blind`` values: exit 2 when nothing at all could be read (the default), also
when a rule ``--fail-on`` gates lacks its inputs, or never (reported only)."""


@dataclass(frozen=True)
class RuleNeeds:
    """What one rule reads of the export, and what it reports when a part is missing."""

    inputs: tuple[str, ...]
    """The :data:`INPUTS` whose absence makes the rule blind for the whole run."""
    reads: str
    """The content types and asset types it reads (Markdown)."""
    when_missing: str
    """What it reports when a part is missing (Markdown)."""


_SUBSCRIPTION = "`resource`: `pubsub.googleapis.com/Subscription`"
_NOT_JUDGED = "a subscription not in the export is not judged (no finding)"
_GRANTS_UNKNOWN = "undecided (`unknown`: the grants were not collected)"

RULE_NEEDS: Mapping[str, RuleNeeds] = {
    "push-endpoint-https": RuleNeeds((SUBSCRIPTIONS,), _SUBSCRIPTION, _NOT_JUDGED),
    "push-auth-oidc": RuleNeeds((SUBSCRIPTIONS,), _SUBSCRIPTION, _NOT_JUDGED),
    "push-sa-same-project": RuleNeeds(
        (SUBSCRIPTIONS,),
        f"{_SUBSCRIPTION}; the project number from the subscription's `ancestors` (or "
        "`resource.parent`), or the `Project` assets",
        "an account named by project number whose project number the export does not give: "
        "undecided (`unknown`)",
    ),
    "push-vpcsc-default-url": RuleNeeds(
        (SUBSCRIPTIONS, SERVICE_PERIMETERS),
        f"{_SUBSCRIPTION}; `access-policy` (exported with `--organization`): the service "
        "perimeters (`service_perimeter`, or `accesscontextmanager.googleapis.com/"
        "ServicePerimeter` resources), or the policy config's `perimeterProjects`",
        "no perimeter read: the rule cannot fire; the run reports `service-perimeters` missing "
        "(unless `perimeterProjects` is set)",
    ),
    "push-no-exactly-once": RuleNeeds((SUBSCRIPTIONS,), _SUBSCRIPTION, _NOT_JUDGED),
    "push-agent-token-creator": RuleNeeds(
        (SUBSCRIPTIONS, IAM_POLICIES),
        f"{_SUBSCRIPTION}, `iam.googleapis.com/ServiceAccount`, and the project number; "
        "`iam-policy`: the account's policy and its project's, folders' and organization's",
        f"no IAM policy read, or the account not in the export: {_GRANTS_UNKNOWN}; the run "
        "reports `iam-policies` missing",
    ),
    "push-invoker-binding": RuleNeeds(
        (SUBSCRIPTIONS, IAM_POLICIES),
        f"{_SUBSCRIPTION}, `run.googleapis.com/Service`, `cloudfunctions.googleapis.com/"
        "CloudFunction` and `Function`; `iam-policy`: the service's policy and its ancestors'",
        "the service behind the endpoint not in the export: undecided (`unknown`); no IAM "
        f"policy read: {_GRANTS_UNKNOWN}, and the run reports `iam-policies` missing",
    ),
    "push-dead-letter-iam": RuleNeeds(
        (SUBSCRIPTIONS, IAM_POLICIES),
        f"{_SUBSCRIPTION}, `pubsub.googleapis.com/Topic`, the project number; `iam-policy`: the "
        "topic's and the subscription's policies and their ancestors'",
        f"no IAM policy read, or the topic not in the export: {_GRANTS_UNKNOWN}; the run "
        "reports `iam-policies` missing",
    ),
    "push-no-query-token": RuleNeeds((SUBSCRIPTIONS,), _SUBSCRIPTION, _NOT_JUDGED),
    "push-audience-explicit": RuleNeeds((SUBSCRIPTIONS,), _SUBSCRIPTION, _NOT_JUDGED),
    "push-sa-broad-grants": RuleNeeds(
        (SUBSCRIPTIONS, IAM_POLICIES),
        f"{_SUBSCRIPTION}, `iam.googleapis.com/ServiceAccount`; `iam-policy`: the account's "
        "policy and its ancestors'",
        "no IAM policy read, or the account not in the export: no finding (it sees no grant); "
        "the run reports `iam-policies` missing",
    ),
    "push-shared-iam-binding": RuleNeeds(
        (),
        "nothing: it reads a stack's declarations",
        "not applicable in the audit (the pack, the preview and analyze only)",
    ),
    "push-unmanaged": RuleNeeds(
        (SUBSCRIPTIONS,),
        f"{_SUBSCRIPTION}; the stacks' state (`--stacks`)",
        "without `--stacks`: not checked, and the run says so (`stacks.checked` false)",
    ),
    "push-state-drift": RuleNeeds(
        (SUBSCRIPTIONS,),
        f"{_SUBSCRIPTION}, any asset of the subscription's project (to tell a deletion); the "
        "stacks' state (`--stacks`)",
        "without `--stacks`: not checked, and the run says so; the project not in the export: "
        "undecided (`unknown`)",
    ),
    "push-target-requires-auth": RuleNeeds(
        (SUBSCRIPTIONS, IAM_POLICIES),
        f"{_SUBSCRIPTION}, `run.googleapis.com/Service`, the Cloud Functions; `iam-policy`: the "
        "service's policy and its ancestors'",
        "the service not in the export: undecided (`unknown`); no IAM policy read: "
        f"{_GRANTS_UNKNOWN}, and the run reports `iam-policies` missing",
    ),
}
"""Per rule ID, what it reads and what it reports when a part is missing (one entry per rule;
tests/audit/test_blindness.py checks every rule has one)."""


def stacks_only(rule_id: str) -> bool:
    """True for the rules that need ``--stacks`` (``push-unmanaged``, ``push-state-drift``)."""
    rule = RULES_BY_ID.get(rule_id)
    return rule is not None and rule.enforcement_points == AUDIT_WITH_STACKS


def _enabled(rule_id: str, levels: Mapping[str, EnforcementLevel], stacks_checked: bool) -> bool:
    rule = RULES_BY_ID[rule_id]
    if levels.get(rule_id, rule.default_level) is EnforcementLevel.DISABLED:
        return False
    if "audit" not in rule.enforcement_points:
        return False
    return stacks_checked or not stacks_only(rule_id)


def missing_inputs(
    read: Mapping[str, int],
    levels: Mapping[str, EnforcementLevel],
    settings: Mapping[str, PackSettings],
    *,
    stacks_checked: bool,
) -> dict[str, list[str]]:
    """Per :data:`INPUTS` key of which ``read`` counts none, the enabled rules (``levels``, in
    rule order) that need it. A rule that needs ``--stacks`` and did not get it is left out (the
    summary's ``stacks`` says so); ``push-vpcsc-default-url`` with ``perimeterProjects`` set
    does not need perimeters from the export. Inputs nothing needs are absent."""
    missing: dict[str, list[str]] = {}
    for item in INPUTS:
        if read.get(item.key, 0):
            continue
        rules = [
            rule.id
            for rule in RULES
            if item.key in RULE_NEEDS[rule.id].inputs
            and _enabled(rule.id, levels, stacks_checked)
            and not _declared_elsewhere(item.key, settings.get(rule.id))
        ]
        if rules:
            missing[item.key] = rules
    return missing


def _declared_elsewhere(key: str, settings: PackSettings | None) -> bool:
    """The policy config gives what the export lacks (``perimeterProjects``)."""
    return key == SERVICE_PERIMETERS and settings is not None and bool(settings.perimeter_projects)


def missing_text(missing: Mapping[str, list[str]]) -> str:
    """``missing`` in words: ``no IAM policies read (push-agent-token-creator, ...; export
    --content-type=iam-policy)``, parts joined by ``; ``; empty when nothing is missing."""
    parts = []
    for key, rules in missing.items():
        item = INPUTS_BY_KEY[key]
        parts.append(
            f"no {item.what} read ({', '.join(rules)}; export them with "
            f"gcloud asset export {item.export})"
        )
    return "; ".join(parts)


def blindness(
    *,
    nothing_read: bool,
    missing: Mapping[str, list[str]],
    levels: Mapping[str, EnforcementLevel],
    failing_levels: tuple[str, ...],
    mode: str,
) -> str | None:
    """Why the run fails closed under ``--fail-on-blind`` ``mode`` (one of
    :data:`BLIND_MODES`), or ``None``: nothing at all could be read (``nothing-read`` and
    ``missing-inputs``), or (``missing-inputs``) a rule whose level is one of
    ``failing_levels`` (what ``--fail-on`` gates) lacks its inputs.

    Raises:
        KeyError: ``mode`` is not one of :data:`BLIND_MODES`.
    """
    if mode not in BLIND_MODES:
        raise KeyError(mode)
    if mode == "never":
        return None
    if nothing_read:
        return "nothing could be read: no line of the export is a Cloud Asset Inventory asset"
    if mode != "missing-inputs":
        return None
    gated = {
        key: [r for r in rules if levels.get(r, EnforcementLevel.DISABLED).value in failing_levels]
        for key, rules in missing.items()
    }
    gated = {key: rules for key, rules in gated.items() if rules}
    if not gated:
        return None
    return f"a rule --fail-on gates could not see its inputs: {missing_text(gated)}"


def needs_markdown() -> str:
    """The table of docs/audit.md (between its markers; a test keeps them equal): per rule, what
    it reads and what it reports when a part is missing."""
    lines = [
        "| rule | reads (content type: asset types) | when a part is missing |",
        "|---|---|---|",
    ]
    for rule in RULES:
        needs = RULE_NEEDS[rule.id]
        lines.append(
            f"| [`{rule.id}`](rules.md#{rule.id}) | {needs.reads} | {needs.when_missing} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m pushguard.audit.coverage > the table
    print(needs_markdown(), end="")
