"""The service behind the push endpoint does not let everyone invoke it.

A Cloud Run service that requires authentication (a 2nd-gen Cloud Function is one underneath)
verifies the ID token of every request itself: its audience, and that the caller holds
``run.routes.invoke`` on the service. A receiver that trusts that check instead of verifying the
push token itself is only as safe as the service's invoker binding. Granting the Cloud Run
Invoker role to the ``allUsers`` member type is how a service is made public
(https://cloud.google.com/run/docs/authenticating/public): anyone who learns the URL can then post
pushes without any token. ``allAuthenticatedUsers`` is not much narrower: anyone authenticated
with a Google account or a service account, of any organisation
(https://cloud.google.com/iam/docs/principals-overview#allusers,
https://cloud.google.com/iam/docs/principals-overview#allauthenticatedusers). A 1st-gen Cloud
Function is the same with ``roles/cloudfunctions.invoker``, granted and removed on the function
with ``gcloud functions add-iam-policy-binding`` / ``remove-iam-policy-binding``
(https://cloud.google.com/functions/docs/securing/managing-access-iam).

Every role pushguard's roles table (``INVOKER`` in ``pushguard/rules/iam.py``) accepts as the
invoker role counts (``roles/run.invoker``, ``roles/run.servicesInvoker`` and ``roles/run.admin``;
``roles/cloudfunctions.invoker`` and ``roles/cloudfunctions.admin``), granted on the service or
inherited from its project, folders or organization; the finding names where the grant is made.
IAM does not accept a condition on a role granted to ``allUsers`` or ``allAuthenticatedUsers``
(https://cloud.google.com/iam/docs/conditions-overview), so a conditional grant to them is
reported too, with its condition: pushguard cannot prove the condition never holds.

Endpoints outside Google Cloud (``external``) have no IAM to check. A target that cannot be named,
or whose grants were not collected, is undecided; so is a service a stack grants on without
declaring it (:attr:`~pushguard.rules.facts.InvokerTarget.grants_complete` false) when none of
the stack's grants opens it: its IAM policy is kept outside the stack. The rule does not see a
service whose Invoker IAM check is disabled (``gcloud run deploy --no-invoker-iam-check``, the
other way the page above makes a service public): it is public with no binding at all. The
component sees only the grants it makes itself, never the service's IAM policy, so the rule
applies in the pack, the preview, analyze and the audit.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.facts import IamGrant, InvokerTarget, SubscriptionFacts, TargetKind
from pushguard.rules.iam import INVOKER, find_grants, normalise_member

PUBLIC_MEMBERS: dict[str, str] = {
    "allUsers": "anyone who learns its URL can post pushes to it without any token",
    "allAuthenticatedUsers": (
        "anyone with a Google account or a service account, of any organisation, can post "
        "pushes to it"
    ),
}
"""The members that open a service to everyone, each with what that means for the pushes
(https://cloud.google.com/iam/docs/principals-overview#allusers)."""

_KIND_NAMES: dict[TargetKind, str] = {
    TargetKind.CLOUD_RUN: "Cloud Run service",
    TargetKind.CLOUD_FUNCTION_V2: "2nd-gen Cloud Function",
    TargetKind.CLOUD_FUNCTION_V1: "1st-gen Cloud Function",
}


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """One violation per grant of the target's invoker role to ``allUsers`` or
    ``allAuthenticatedUsers``, on the target or inherited."""
    if not facts.is_push():
        return
    target = facts.invoker_target
    if target is None:
        yield Result.unknown("the service behind the push endpoint is not known", "target")
        return
    if target.kind is TargetKind.EXTERNAL:
        return
    if target.grants is None:
        yield Result.unknown("the target's IAM grants were not collected", "target")
        return
    public = public_invoker_grants(target)
    if not public and not target.grants_complete:
        where = f"the IAM policy of {target.name}" if target.name else "the target's IAM policy"
        yield Result.unknown(
            f"{where} is not in the stack (only the stack's own grants on it are seen, and none "
            "of them opens it to everyone)",
            "target",
        )
        return
    for grant in public:
        yield _violation(target, grant)


def public_invoker_grants(target: InvokerTarget) -> list[IamGrant]:
    """The grants of ``target``'s invoker role (any role the roles table accepts for it) to a
    member of :data:`PUBLIC_MEMBERS`: unconditional ones first, each distinct grant once."""
    role = INVOKER.get(target.kind)
    if role is None or not target.grants:
        return []
    unconditional: list[IamGrant] = []
    conditional: list[IamGrant] = []
    for member in PUBLIC_MEMBERS:
        match = find_grants(target.grants, member, role.accepted)
        unconditional += match.unconditional
        conditional += match.conditional
    # one grant held by two resources of a stack is listed twice: reported once
    return list(dict.fromkeys(unconditional + conditional))


def _violation(target: InvokerTarget, grant: IamGrant) -> Result:
    what = f"The {_KIND_NAMES.get(target.kind, 'service')}"
    what += f" {target.name}" if target.name else " behind the push endpoint"
    condition = ""
    if grant.condition:
        condition = (
            f" under the condition {grant.condition!r} (IAM does not accept conditions on "
            f"{normalise_member(grant.member)}, and pushguard cannot prove this one never holds)"
        )
    public = normalise_member(grant.member)
    consequence = PUBLIC_MEMBERS.get(public, "it is open to everyone")
    evidence = {"target": target.name, "member": public, "role": grant.role}
    evidence["resource"] = grant.resource
    if grant.condition:
        evidence["condition"] = grant.condition
    return Result.violation(
        f"{what} grants {grant.role} to {public}{_where(grant.resource)}{condition}, so "
        f"{consequence}.",
        "target",
        **evidence,
    )


def _where(resource: str) -> str:
    """Where a grant is made, for the message: on the target, or inherited from an ancestor."""
    if not resource:
        return ""
    return f", inherited from {resource}" if _is_ancestor(resource) else f" on {resource}"


def _is_ancestor(resource: str) -> bool:
    """True for a project, folder or organization (the grant is inherited by the service):
    ``projects/P``, ``folders/N``, ``organizations/N`` (the audit's keys) or ``project:P`` (the
    pack's)."""
    if resource.startswith("project:"):
        return True
    kind, _, rest = resource.partition("/")
    return kind in ("projects", "folders", "organizations") and bool(rest) and "/" not in rest


RULE = Rule(
    id="push-target-requires-auth",
    title="The push target does not grant its invoker role to everyone",
    default_level=EnforcementLevel.ADVISORY,
    severity="high",
    remediation=(
        "Remove the public binding so the service requires authentication again: "
        "`gcloud run services remove-iam-policy-binding SERVICE --region=REGION "
        "--member=allUsers --role=roles/run.invoker` (and the same for allAuthenticatedUsers; "
        "`gcloud functions remove-iam-policy-binding FUNCTION --member=allUsers "
        "--role=roles/cloudfunctions.invoker` for a 1st-gen function, `gcloud projects "
        "remove-iam-policy-binding` for a grant inherited from the project), or delete the "
        "Pulumi resource that makes it (gcp.cloudrunv2.ServiceIamMember, "
        "gcp.cloudrun.IamMember, an IamBinding or IamPolicy listing the member). Grant the "
        "invoker role only to the push-auth service account (pushguard's PushSubscription does "
        "with its `target` input), and verify the push token in the service with "
        "pushguard.receiver."
    ),
    check=check,
    # the component sees only the grants it makes, never the service's IAM policy
    enforcement_points=("pack", "preview", "analyze", "audit"),
)
