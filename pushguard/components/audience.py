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

from pushguard.components.spec import DEFERRED, PushSubscriptionSpec
from pushguard.rules.endpoint import EndpointError, cloud_run_default_url_form, parse_endpoint
from pushguard.rules.facts import TargetKind

_RUN_KINDS = (TargetKind.CLOUD_RUN, TargetKind.CLOUD_FUNCTION_V2)


def _deferred(value: object) -> bool:
    return value is DEFERRED


def run_app_origin(endpoint: Any) -> str | None:
    """``https://HOST`` of a Cloud Run default-URL endpoint, else ``None``."""
    if not isinstance(endpoint, str):
        return None
    try:
        parsed = parse_endpoint(endpoint)
    except EndpointError:
        return None
    return f"https://{parsed.host}" if cloud_run_default_url_form(parsed) else None


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
