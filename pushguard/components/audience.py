"""The OIDC audience the push target accepts, decided from the component's inputs.

Cloud Run (and a 2nd-gen Cloud Function, a Cloud Run service underneath) accepts an ID token only
when its ``aud`` claim is the service's URL (the Google-generated ``run.app`` URL) or a custom
audience configured on the service (``custom_audiences``;
https://cloud.google.com/run/docs/configuring/custom-audiences). A 1st-gen Cloud Function accepts
its function URL, ``https://REGION-PROJECT.cloudfunctions.net/FUNCTION``
(https://cloud.google.com/functions/docs/securing/authenticating). Pub/Sub puts the push config's
``audience`` in the token, or the push endpoint URL when none is set
(https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions).

So for these targets the component's default audience is the service URL (``target.url``, else
the origin of a Cloud Run default-URL endpoint) or the function URL, and any other audience is
refused unless the service is configured with it (``target.custom_audiences``). External targets
keep Pub/Sub's rule: the given audience, else the push endpoint.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pushguard.components.endpoints import endpoint_problems, parsed_endpoint, target_service
from pushguard.components.spec import DEFERRED, PushSubscriptionSpec
from pushguard.rules.endpoint import (
    cloud_run_default_url_form,
    parse_endpoint,
)
from pushguard.rules.facts import TargetKind

_RUN_KINDS = (TargetKind.CLOUD_RUN, TargetKind.CLOUD_FUNCTION_V2)


def _deferred(value: object) -> bool:
    return value is DEFERRED


def run_app_origin(endpoint: Any) -> str | None:
    """``https://HOST`` of a Cloud Run default-URL endpoint, else ``None``."""
    parsed = parsed_endpoint(endpoint)
    return f"https://{parsed.host}" if parsed and cloud_run_default_url_form(parsed) else None


def service_url(spec: PushSubscriptionSpec) -> Any:
    """The URL the target accepts as ``aud``: a string, :data:`DEFERRED` (not known yet) or
    ``None`` (not known from the inputs: an endpoint on a custom domain without ``target.url``).

    ``target.url`` when given; for Cloud Run and 2nd-gen functions the origin of a ``run.app``
    endpoint; for a 1st-gen function ``https://LOCATION-PROJECT.cloudfunctions.net/NAME`` (the
    target's project, else the subscription's). ``None`` for external targets.
    """
    target = spec.target
    if target.kind is TargetKind.EXTERNAL:
        return None
    if target.url is not None:
        return target.url
    if target.kind in _RUN_KINDS:
        if _deferred(spec.push_endpoint):
            return DEFERRED
        return run_app_origin(spec.push_endpoint)
    parts = (target.location, target.project or spec.project, target.name)
    if any(_deferred(part) for part in parts):
        return DEFERRED
    location, project, name = parts
    return f"https://{location}-{project}.cloudfunctions.net/{name}"


def run_app_service(endpoint: Any) -> str | None:
    """The Cloud Run service name in a default-URL endpoint, else ``None``: ``SERVICE`` of
    ``[TAG---]SERVICE-HASH-REGIONCODE.a.run.app`` and of
    ``[TAG---]SERVICE-PROJECT_NUMBER.REGION.run.app``
    (https://cloud.google.com/run/docs/triggering/https-request#deterministic)."""
    if run_app_origin(endpoint) is None:
        return None
    label = parse_endpoint(endpoint).host.split(".")[0].rsplit("---", 1)[-1]
    parts = 3 if parse_endpoint(endpoint).host.endswith(".a.run.app") else 2
    pieces = label.rsplit("-", parts - 1)
    return pieces[0] if len(pieces) == parts else None


def _function_url(endpoint: Any) -> str | None:
    """``https://HOST/NAME`` of a 1st-gen function endpoint (``*.cloudfunctions.net``)."""
    parsed = parsed_endpoint(endpoint)
    if parsed is None or not parsed.host.endswith(".cloudfunctions.net"):
        return None
    name = urlsplit(endpoint).path.lstrip("/").split("/", 1)[0]
    return f"https://{parsed.host}/{name}"


def _known(value: Any) -> bool:
    return isinstance(value, str)


def target_problems(spec: PushSubscriptionSpec) -> list[tuple[str, str]]:
    """Targets that cannot work as given, as ``(field, message)``; unknown values are not judged
    (the check runs again when they resolve).

    - A Cloud Run / 2nd-gen ``target.url`` that is not a ``run.app`` URL and not listed in
      ``target.custom_audiences``: it becomes the audience, and Cloud Run accepts only its
      run.app URLs or configured custom audiences
      (https://cloud.google.com/run/docs/configuring/custom-audiences).
    - A ``run.app`` endpoint of another service than the target's (``target.name``, for a
      2nd-gen function its service name): the invoker grant would be on one service and the
      audience another's; a deterministic one of another region or project, and a 2nd-gen
      function's cloudfunctions.net URL (:func:`~pushguard.components.endpoints.endpoint_problems`).
    - A 1st-gen function with a ``run.app`` endpoint (1st-gen functions are served at
      ``REGION-PROJECT.cloudfunctions.net``; https://cloud.google.com/functions/docs/calling/http),
      or a ``cloudfunctions.net`` endpoint of another function, region or project than ``target``
      (the invoker grant and the audience would be another function's).
    - A 1st-gen function inside a service perimeter: only Cloud Run default URLs work there
      (https://cloud.google.com/pubsub/docs/push#vpc-service-controls).
    """
    kind = spec.target.kind
    if kind in _RUN_KINDS:
        return _run_target_problems(spec)
    if kind is TargetKind.CLOUD_FUNCTION_V1:
        return _function_v1_problems(spec)
    return []


def _run_target_problems(spec: PushSubscriptionSpec) -> list[tuple[str, str]]:
    target, problems = spec.target, []
    if _known(target.url) and run_app_origin(target.url) is None:
        configured = target.custom_audiences
        if not _deferred(configured) and not (configured and target.url in configured):
            problems.append(
                (
                    "target.url",
                    f"{target.url!r} is not a run.app URL of the service, and it becomes the "
                    "token's audience, which Cloud Run accepts only for its run.app URLs or "
                    "a custom audience configured on the service: set target.url to the "
                    "service's run.app URL (its uri output), or list this URL in "
                    "target.custom_audiences if the service is configured with it",
                )
            )
    service, expected = run_app_service(spec.push_endpoint), target_service(spec)
    if service is not None and _known(expected) and service != expected:
        named = "" if expected == target.name else f" (its Cloud Run service {expected!r})"
        problems.append(
            (
                "target.name",
                f"is {target.name!r}{named} but the push endpoint is the run.app URL of service "
                f"{service!r}: the invoker grant would be on one service and the token's "
                "audience another's; set target.name to the service the endpoint serves",
            )
        )
    return problems + endpoint_problems(spec)


def _function_v1_problems(spec: PushSubscriptionSpec) -> list[tuple[str, str]]:
    problems = []
    if spec.in_service_perimeter:
        problems.append(
            (
                "target.kind",
                "cloud-function-v1 is refused inside a service perimeter: only Cloud Run "
                "default run.app URLs work there (use a 2nd-gen function, kind "
                "cloud-function-v2, and its run.app URL)",
            )
        )
    if run_app_origin(spec.push_endpoint) is not None:
        problems.append(
            (
                "push_endpoint",
                "is a run.app URL, but a 1st-gen function (kind cloud-function-v1) is served "
                "only at https://REGION-PROJECT.cloudfunctions.net/NAME; a function with a "
                "run.app URL is 2nd gen: set target.kind to cloud-function-v2",
            )
        )
    found, expected = _function_url(spec.push_endpoint), service_url(spec)
    # A domain-scoped project (example.com:acme) has no documented function host: not judged.
    if found is not None and _known(expected) and ":" not in expected[6:] and found != expected:
        problems.append(
            (
                "target",
                f"the push endpoint is the function {found}, but target (location, project "
                f"or else the subscription's project, name) gives {expected}: the invoker "
                "grant and the audience would be another function's; set target.project, "
                "target.location and target.name to the endpoint's function",
            )
        )
    return problems


def audience_problem(spec: PushSubscriptionSpec) -> str | None:
    """Why the audience would be refused by the target (``"audience: ..."``), or ``None``.

    Unknown values are not judged here: the check runs again when they resolve.
    """
    kind = spec.target.kind
    if kind is TargetKind.EXTERNAL or _deferred(spec.audience):
        return None
    url = service_url(spec)
    if spec.audience is None:
        if url is None and kind in _RUN_KINDS:
            return (
                "audience: Cloud Run accepts a token only for the service's URL or a custom "
                "audience configured on the service, and the endpoint is not the service's "
                "run.app URL: set target.url to the service's URL (for example the service's "
                "uri output), or audience together with target.custom_audiences"
            )
        return None
    if spec.audience == url or (isinstance(url, str) and spec.audience == f"{url}/"):
        return None
    if url is DEFERRED:
        return None
    if kind in _RUN_KINDS:
        configured = spec.target.custom_audiences
        if _deferred(configured) or (configured and spec.audience in configured):
            return None
        return (
            "audience: Cloud Run accepts a token only when its audience is the service's URL "
            "or a custom audience configured on the service; list the service's "
            "custom_audiences in target.custom_audiences, or leave audience unset (default: "
            "the service URL)"
        )
    return (
        "audience: a 1st-gen Cloud Function accepts a token only for its function URL, "
        f"{url}; leave audience unset (that is the default) or set it to that URL"
    )


def effective_audience(spec: PushSubscriptionSpec) -> Any:
    """The audience the subscription is given: the ``audience`` input, else
    :func:`service_url` (Cloud Run, functions), else the push endpoint (external, or a service
    URL not known from the inputs). May be :data:`DEFERRED`."""
    if spec.audience is not None:
        return spec.audience
    url = service_url(spec)
    return url if url is not None else spec.push_endpoint
