"""Every push subscription is managed by a stack the organisation gives. Audit only
(``pushguard audit EXPORT --stacks STATE``): not applicable in the component, the policy pack,
the preview or analyze, which see what stacks declare and never what runs.

A push subscription made in the console, with ``gcloud`` or by a script outside any stack was
never seen by the policy pack: its endpoint, push-auth account and grants were never checked
before they went live, and no review keeps them so. The audit reads the given stacks' state
(``pulumi stack export`` files or a self-managed backend's checkpoints) and matches each push
subscription of the Cloud Asset Inventory export to the stack resource that manages it by its
path, ``projects/P/subscriptions/S`` (the resource's ``id`` or outputs, for pulumi-gcp, Google
Cloud Native, Config Connector, Crossplane and the bridged Terraform providers, inside
``PushSubscription`` components or not, in stacks of any language; for a Deployment Manager
deployment, each subscription its configuration declares). One that no given stack manages is
reported.

Pulumi's own drift detection (``pulumi refresh``) works one stack at a time and cannot see what no
stack holds; Pulumi Cloud's resource discovery needs Pulumi Cloud
(https://www.pulumi.com/docs/pulumi-cloud/insights/). Without ``--stacks`` the rule is not checked
and the audit's summary says so. A pull subscription is not reported: no push rule applies to it.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import AUDIT_WITH_STACKS, EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """A violation when the export's push subscription is managed by none of the given stacks;
    nothing without stacks (``management`` is ``None``) or for a subscription the export does not
    hold (``push-state-drift`` reports those)."""
    managed = facts.management
    if managed is None or managed.live is None or managed.live.paused or managed.records:
        return
    yield Result.violation(
        "no given stack manages this push subscription (made outside Pulumi, or by a stack "
        "whose state was not given): the policy pack never checked it."
    )


RULE = Rule(
    id="push-unmanaged",
    title="A push subscription is managed by a stack",
    default_level=EnforcementLevel.ADVISORY,
    severity="medium",
    remediation=(
        "Import the subscription into the stack that owns it (pulumi import "
        "gcp:pubsub/subscription:Subscription NAME projects/P/subscriptions/S) so the policy "
        "pack checks every change, or delete it; if its stack exists, give its state to "
        "--stacks."
    ),
    check=check,
    enforcement_points=AUDIT_WITH_STACKS,
)
