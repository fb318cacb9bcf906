"""Google's limits on values the component sends that span inputs or need a derivation, one
function each, with the page each limit comes from.

:func:`expiration_problem` ties a subscription's expiration TTL to its message retention;
:func:`function_service_name` derives a 2nd-gen function's Cloud Run service name from the
function's name. Durations are protobuf-style strings (``"600s"``), read by
:func:`duration_seconds`. Values not known yet (anything but a string) are not judged here: the
component checks again when they resolve.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any, Final

_DURATION = re.compile(r"^(?P<seconds>[0-9]{1,12}(?:\.[0-9]{1,9})?)s$")


def duration_seconds(text: str) -> Decimal:
    """Seconds in a protobuf-style duration string (``"600s"``, ``"0.5s"``).

    Raises:
        ValueError: naming the expected form.
    """
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"must be a duration in seconds like '600s', not {text!r}")
    try:
        return Decimal(match["seconds"])
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
        raise ValueError(f"must be a duration in seconds like '600s', not {text!r}") from None


MIN_EXPIRATION_SECONDS: Final = 86400
"""The shortest expiration TTL: "The minimum allowed value for expiration_policy.ttl is 1 day"
(``Subscription.expirationPolicy``,
https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions)."""

DEFAULT_RETENTION_SECONDS: Final = 604800
"""Pub/Sub's message retention duration when none is set: "Default value = 7 days"
(https://cloud.google.com/pubsub/docs/subscription-properties#message_retention_duration)."""


def expiration_problem(ttl: Any, retention: Any) -> str | None:
    """Why the expiration TTL ``ttl`` would be refused, or ``None``.

    ``""`` (never expires: "If it is set but ttl is "", the resource never expires", pulumi-gcp's
    ``Subscription.expiration_policy``) is always allowed, and so is a value not known yet
    (``ttl`` or ``retention`` not a string; ``retention`` ``None`` is Pub/Sub's default). A TTL
    is at least a day (:data:`MIN_EXPIRATION_SECONDS`) and not shorter than the subscription's
    message retention duration (:data:`DEFAULT_RETENTION_SECONDS` when not set): Google's
    subscription-properties page ties the expiration period to the message retention duration
    (https://cloud.google.com/pubsub/docs/subscription-properties#expiration_period), so
    ``86400s`` with the default 7-day retention is refused before anything is registered. The
    stored copies of that page this was written from end before its expiration section; the
    rule as enforced (shorter is refused, equal is accepted) follows those who quote or apply it:
    "the subscription expiration should always be greater than the message retention duration"
    (https://github.com/peburrows/kane/pull/38) and "no shorter than the message retention
    duration" (the front of the CloudBurrow emulator, github.com/cloudburrow/cloudburrow, which
    refuses "a ttl Google refuses").
    """
    if not isinstance(ttl, str) or ttl == "":
        return None
    try:
        seconds = duration_seconds(ttl)
    except ValueError as error:
        return str(error)
    if seconds < MIN_EXPIRATION_SECONDS:
        return f"must be '' (never) or at least {MIN_EXPIRATION_SECONDS}s, not {ttl}"
    if retention is not None and not isinstance(retention, str):
        return None
    kept = DEFAULT_RETENTION_SECONDS if retention is None else duration_seconds(retention)
    if seconds < kept:
        source = "message_retention_duration" if retention is not None else "Pub/Sub's default"
        return (
            f"must not be shorter than the message retention duration ({kept}s, {source}), "
            f"not {ttl}: the subscription would expire before the messages it keeps; set it "
            f"to at least {kept}s or to '' (never expires, the component's default), or shorten "
            "message_retention_duration"
        )
    return None


FUNCTION_NAME: Final = re.compile(r"^[A-Za-z](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$")
"""A Cloud Functions function name: "The function name must start with a letter followed by up
to 62 letters, numbers, hyphens, or underscores, and must end with a letter or a number"
(https://cloud.google.com/functions/1stgendocs/deploy, for ``gcloud functions deploy``, which
deploys 2nd gen by default)."""


def function_service_name(name: str) -> str:
    """The Cloud Run service of the 2nd-gen function ``name`` (a :data:`FUNCTION_NAME`): the name
    lower-cased, each ``_`` a ``-``.

    A 2nd-gen function is "deployed as a service on Cloud Run"
    (https://cloud.google.com/run/docs/functions/comparison), and Cloud Run service names are
    lower-case letters, digits and hyphens
    (https://cloud.google.com/run/docs/reference/rest/v2/projects.locations.services/create).
    No Google page found states the derivation; it is Google's observed behaviour: deploying
    ``analytics-reportGtmEvent`` makes the Cloud Run service ``analytics-reportgtmevent``
    (the API's deploy message quoted in https://github.com/firebase/firebase-tools/issues/7759;
    "helloWorld -> helloworld", https://github.com/firebase/firebase-functions-dart/pull/187),
    and functions ``foo_bar`` and ``foo-bar`` collide with ALREADY_EXISTS
    (https://github.com/google-github-actions/deploy-cloud-functions/issues/447). The name to
    check it against is the function's ``service_config.service`` output in pulumi-gcp.
    """
    return name.lower().replace("_", "-")
