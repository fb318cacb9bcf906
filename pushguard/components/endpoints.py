"""Push endpoints that would deploy something other than the target the team named, for Cloud Run
services and 2nd-gen functions: checked on known values at construction and again when Outputs
resolve (the component's gate, :mod:`pushguard.components.push_subscription`).

Facts:

- A deterministic run.app URL, ``https://[TAG---]SERVICE-PROJECT_NUMBER.REGION.run.app``, names
  the service, its project's number and its region
  (https://cloud.google.com/run/docs/triggering/https-request#deterministic). The invoker grant
  goes to ``target`` (its location, its project, else the subscription's); pushes go to the
  URL's service, which refuses them (403) when the grant is on another service. The hash form,
  ``SERVICE-HASH-REGIONCODE.a.run.app``, names the service only, so only its service is checked.
- A function made with the Cloud Functions v2 API "is also assigned a cloudfunctions.net URL"
  (same page), ``https://REGION-PROJECT_ID.cloudfunctions.net/FUNCTION_NAME``, besides its Cloud
  Run URL (https://cloud.google.com/functions/docs/calling/http). Cloud Run accepts a token whose
  audience is the service's run.app URL or a custom audience configured on the service
  (https://cloud.google.com/run/docs/configuring/custom-audiences), and inside a VPC Service
  Controls perimeter only run.app URLs work (https://cloud.google.com/pubsub/docs/push). So for
  ``cloud-function-v2`` the component refuses the cloudfunctions.net form, which pulumi-gcp's
  ``gcp.cloudfunctionsv2.Function`` gives as ``url``, and asks for the function's Cloud Run URI,
  its ``service_config.uri`` output (a run.app URL, which is then the token's audience).
- A 2nd-gen function's Cloud Run service is named after the function
  (:func:`~pushguard.components.limits.function_service_name`).
"""

from __future__ import annotations

from typing import Any

from pushguard.components.limits import function_service_name
from pushguard.components.spec import PushSubscriptionSpec
from pushguard.rules.endpoint import (
    EndpointError,
    PushEndpoint,
    cloud_run_deterministic_url,
    parse_endpoint,
)
from pushguard.rules.facts import TargetKind

Problem = tuple[str, str]


def target_service(spec: PushSubscriptionSpec) -> Any:
    """The Cloud Run service the invoker grant goes to: ``target.name`` for Cloud Run, the
    function's service name for a 2nd-gen function; not known yet
    (:data:`~pushguard.components.spec.DEFERRED`) or ``None`` (no name) as ``target.name`` is,
    and ``target.name`` itself for other kinds."""
    name = spec.target.name
    if spec.target.kind is TargetKind.CLOUD_FUNCTION_V2 and isinstance(name, str):
        return function_service_name(name)
    return name


def parsed_endpoint(endpoint: Any) -> PushEndpoint | None:
    """``endpoint`` parsed as the rules parse it, or ``None`` (not a string, or not a URL)."""
    if not isinstance(endpoint, str):
        return None
    try:
        return parse_endpoint(endpoint)
    except EndpointError:
        return None


def _same_project(spec: PushSubscriptionSpec) -> bool:
    """True when the target is known to be in the subscription's project."""
    target_project = spec.target.project
    return target_project is None or (
        isinstance(target_project, str) and target_project == spec.project
    )


def deterministic_url_problems(spec: PushSubscriptionSpec) -> list[Problem]:
    """A deterministic run.app endpoint of another region than ``target.location``, or of
    another project number than the target's: ``project_number`` when the target is in the
    subscription's project (the number the component looks up itself is not compared: an
    offline preview may answer it with a placeholder). Unknown values are not judged."""
    parsed = parsed_endpoint(spec.push_endpoint)
    url = cloud_run_deterministic_url(parsed) if parsed else None
    if url is None:
        return []
    problems: list[Problem] = []
    location = spec.target.location
    if isinstance(location, str) and location != url.region:
        problems.append(
            (
                "target.location",
                f"is {location!r} but the push endpoint is the run.app URL of a service in "
                f"{url.region!r}: the invoker grant would be on a service in {location} while "
                f"the pushes go to {url.region} and are refused (403); set target.location to "
                f"{url.region!r}",
            )
        )
    number = spec.project_number
    if isinstance(number, str) and _same_project(spec) and number != url.project_number:
        problems.append(
            (
                "target.project",
                f"is not set to another project, but the push endpoint is the run.app URL of a "
                f"service in the project numbered {url.project_number}, not the subscription's "
                f"project {spec.project!r} (project_number {number}): the invoker grant would "
                "be on a service of another project; set target.project to the service's "
                "project",
            )
        )
    return problems


def function_v2_endpoint_problems(spec: PushSubscriptionSpec) -> list[Problem]:
    """A ``cloud-function-v2`` target pushed to at a cloudfunctions.net URL (see the module
    docstring): refused, naming ``service_config.uri``."""
    if spec.target.kind is not TargetKind.CLOUD_FUNCTION_V2:
        return []
    parsed = parsed_endpoint(spec.push_endpoint)
    if parsed is None or not parsed.host.endswith(".cloudfunctions.net"):
        return []
    return [
        (
            "push_endpoint",
            "is the cloudfunctions.net URL of a function (pulumi-gcp's url output of "
            "gcp.cloudfunctionsv2.Function); a 2nd-gen function (kind cloud-function-v2) is "
            "pushed to at its Cloud Run URI, the run.app URL that is then the token's audience "
            "(Cloud Run accepts its run.app URLs or custom audiences configured on the "
            "service): use the function's service_config.uri output",
        )
    ]


def endpoint_problems(spec: PushSubscriptionSpec) -> list[Problem]:
    """Every problem of this module for a Cloud Run or 2nd-gen function target."""
    return function_v2_endpoint_problems(spec) + deterministic_url_problems(spec)
