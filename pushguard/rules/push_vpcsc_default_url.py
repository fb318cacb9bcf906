"""Inside a VPC Service Controls perimeter, push only to a Cloud Run default ``run.app`` URL.

For projects inside a service perimeter, new push subscriptions can only target Cloud Run services
by their default URL; custom domains (and ``cloudfunctions.net`` URLs) do not work, and existing
push subscriptions keep delivering but are not protected by the perimeter and cannot be updated
(https://cloud.google.com/pubsub/docs/push#vpc-service-controls). Default URLs are the hash form
``https://SERVICE-HASH-REGIONCODE.a.run.app`` and the deterministic form
``https://[TAG---]SERVICE-PROJECT_NUMBER.REGION.run.app``
(https://cloud.google.com/run/docs/triggering/https-request). The host is classified after IDNA and
case normalisation, so lookalikes such as ``x.a.run.app.evil.example`` or ``evilrun.app`` fail.
An endpoint not known yet (at preview) is undecided, even when it is computed from a Cloud Run
service in the same deployment (the engine sends the service's ``uri`` and a value computed from
it alike); the real value is checked once known.
An endpoint served by a 1st-gen Cloud Function (the target the component is given, or the function
in the same deployment the endpoint is computed from) fails even before its URL is known: a 1st-gen
function has only its ``https://REGION-PROJECT.cloudfunctions.net/NAME`` URL (``httpsTrigger.url``,
https://cloud.google.com/functions/docs/calling/http). A 2nd-gen function is a Cloud Run service
with a ``run.app`` URL too, so its endpoint is checked once known.
A violation names the perimeter (``accessPolicies/POLICY/servicePerimeters/NAME``) where the
enforcement point knows it (the audit, from the export's perimeters).
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.endpoint import EndpointError, cloud_run_default_url_form, parse_endpoint
from pushguard.rules.facts import SubscriptionFacts, TargetKind


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when a perimeter project pushes to anything but a Cloud Run default URL."""
    if not facts.is_push():
        return
    if "in_service_perimeter" in facts.unknown:
        yield Result.unknown(
            "whether the project is inside a service perimeter is not known yet",
            "in_service_perimeter",
        )
        return
    if not facts.in_service_perimeter:
        return
    endpoint_known = bool(facts.push_endpoint) and "push_endpoint" not in facts.unknown
    target = facts.invoker_target
    inside = _inside(facts)
    if not endpoint_known and target is not None and target.kind is TargetKind.CLOUD_FUNCTION_V1:
        name = f" {target.name!r}" if target.name else ""
        yield Result.violation(
            f"The project is inside {inside}, where push endpoints must be "
            f"Cloud Run default URLs (*.a.run.app or SERVICE-PROJECT_NUMBER.REGION.run.app); the "
            f"endpoint is served by the 1st-gen Cloud Function{name}, whose only URL is "
            "REGION-PROJECT.cloudfunctions.net, which does not work there.",
            "push_endpoint",
            target_kind=target.kind.value,
            target=target.name,
        )
        return
    if "push_endpoint" in facts.unknown:
        yield Result.unknown("the push endpoint is not known yet", "push_endpoint")
        return
    if not facts.push_endpoint:
        if facts.push_endpoint_source == "cloud-function":
            yield Result.unknown(
                "the push endpoint comes from a Cloud Function, whose cloudfunctions.net URL does "
                "not work inside a perimeter and whose run.app URL does",
                "push_endpoint",
            )
        return  # no endpoint: a pull subscription
    try:
        endpoint = parse_endpoint(facts.push_endpoint or "")
    except EndpointError as error:
        yield Result.violation(
            f"The project is inside {inside} and the push endpoint {error.reason}; "
            "only Cloud Run default run.app URLs work there.",
            "push_endpoint",
        )
        return
    if cloud_run_default_url_form(endpoint) is None:
        yield Result.violation(
            f"The project is inside {inside}, where push endpoints must be "
            f"Cloud Run default URLs (*.a.run.app or SERVICE-PROJECT_NUMBER.REGION.run.app); "
            f"{endpoint.redacted()} is not one.",
            "push_endpoint",
            host=endpoint.host,
        )


def _inside(facts: SubscriptionFacts) -> str:
    """The perimeter a message names: by name where known, else "a VPC Service Controls
    perimeter"."""
    names = facts.service_perimeters
    if not names:
        return "a VPC Service Controls perimeter"
    if len(names) == 1:
        return f"the VPC Service Controls perimeter {names[0]}"
    return f"the VPC Service Controls perimeters {', '.join(names)}"


RULE = Rule(
    id="push-vpcsc-default-url",
    title="Perimeter projects push only to Cloud Run default run.app URLs",
    default_level=EnforcementLevel.MANDATORY,
    severity="high",
    remediation=(
        "Use the Cloud Run service's default URL (its `uri` output, *.a.run.app or "
        "SERVICE-PROJECT_NUMBER.REGION.run.app) as the push endpoint, not a custom domain, load "
        "balancer or cloudfunctions.net URL (a 1st-gen Cloud Function has no other: move it to "
        "2nd gen and use its run.app URL). Keep the default URL enabled on the service."
    ),
    check=check,
)
