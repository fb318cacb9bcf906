"""Push requests built as Pub/Sub sends them: headers, token and body.

- **Wrapped** (the default, https://cloud.google.com/pubsub/docs/push#receive_push): a JSON body
  ``{"message": {"attributes", "data" (base64), "messageId", "message_id", "publishTime",
  "publish_time", "orderingKey"}, "subscription", "deliveryAttempt"}``, both spellings of the ID
  and time as Pub/Sub writes them, ``orderingKey`` only for a message that has one,
  ``deliveryAttempt`` only when the subscription has a dead-letter policy; headers
  ``Content-Type: application/json`` and ``User-Agent: CloudPubSub-Google``
  (https://cloud.google.com/pubsub/docs/payload-unwrapping#example_for_wrapped_and_unwrapped_messages).
- **Unwrapped** (``noWrapper``, https://cloud.google.com/pubsub/docs/payload-unwrapping): the raw
  data is the body. With ``writeMetadata`` the metadata comes as
  ``x-goog-pubsub-subscription-name``, ``x-goog-pubsub-message-id``,
  ``x-goog-pubsub-publish-time`` and ``x-goog-pubsub-ordering-key`` headers and each attribute
  as a header of its own name; without it, only the data.

Either way the request carries ``Authorization: Bearer <token>``
(https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions). The receiver's parsers
(:mod:`pushguard.receiver.envelope`) read exactly these forms.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pushguard.receiver.envelope import (
    MESSAGE_ID_HEADER,
    ORDERING_KEY_HEADER,
    PUBLISH_TIME_HEADER,
    SUBSCRIPTION_HEADER,
)
from pushguard.receiver.testing.issuer import LocalIssuer

DEFAULT_SUBSCRIPTION = "projects/pushguard-local/subscriptions/local-push"
"""The subscription a push names unless told otherwise."""

USER_AGENT = "CloudPubSub-Google"
"""The ``User-Agent`` of Pub/Sub's push requests (the payload-unwrapping page's examples)."""

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""A header field name (RFC 9110 section 5.1)."""

_REQUEST_HEADERS = frozenset(
    {
        "authorization",
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "user-agent",
        "accept-encoding",
    }
)
"""Headers of the request itself, which an attribute sent as a header must not replace
(``Accept-Encoding: identity`` is the HTTP client's own, https://docs.python.org/3/library/http.client.html).
``Content-Type`` is not among them: an unwrapped push has none of its own, and Pub/Sub's way to
give it one is an attribute of that name
(https://cloud.google.com/pubsub/docs/payload-unwrapping-troubleshooting)."""

MAX_DATA_BYTES = 10_000_000
"""Pub/Sub's limit on a message's data: 10 MB ("Message size (the data field)",
https://cloud.google.com/pubsub/quotas#resource_limits; the page's MB and kB are decimal)."""

RESERVED_ATTRIBUTE_PREFIX = "goog"
"""Attribute keys Pub/Sub refuses: those starting with ``goog``, reserved for Google
(https://cloud.google.com/pubsub/docs/publisher)."""


@dataclass(frozen=True)
class PushRequest:
    """One push request: what to POST, and the message it carries.

    Attributes:
        headers: header name to value, in the order Pub/Sub's examples list them.
        body: the request body.
        message_id: the message's ID (the same on every redelivery).
        token: the bearer token in ``Authorization``.
    """

    headers: dict[str, str]
    body: bytes
    message_id: str
    token: str
    envelope: Mapping[str, Any] | None = field(default=None)
    """The wrapped body as a dict (``None`` when unwrapped)."""


def publish_time_text(moment: dt.datetime | None = None) -> str:
    """An RFC 3339 UTC time with milliseconds and ``Z``, as Pub/Sub writes ``publishTime``."""
    when = (moment or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def new_message_id() -> str:
    """A decimal message ID of 16 digits, the form of Pub/Sub's (``2070443601311540``)."""
    return str(10**15 + secrets.randbelow(9 * 10**15))


def _check_attributes(attributes: Mapping[str, str], *, as_headers: bool) -> None:
    seen: set[str] = set()
    for name, value in attributes.items():
        if not isinstance(name, str) or not isinstance(value, str) or not name:
            raise ValueError("attributes: non-empty string keys and string values are required")
        if name.startswith(RESERVED_ATTRIBUTE_PREFIX):
            raise ValueError(
                f"attributes: {name!r} starts with {RESERVED_ATTRIBUTE_PREFIX!r}, which Pub/Sub "
                "reserves (a publish with it is refused)"
            )
        if as_headers and name.lower() in seen:
            raise ValueError(
                f"attributes: {name!r} and another attribute would be the same header "
                "(header names are case-insensitive)"
            )
        seen.add(name.lower())
        if as_headers and not _HEADER_NAME.fullmatch(name):
            raise ValueError(
                f"attributes: {name!r} cannot travel as a header (unwrapped pushes send each "
                "attribute as a header of its name: RFC 9110 token characters only)"
            )
        lowered = name.lower()
        if as_headers and (lowered in _REQUEST_HEADERS or lowered.startswith("x-goog-pubsub-")):
            raise ValueError(
                f"attributes: {name!r} would replace a header of the request itself or "
                "Pub/Sub's metadata"
            )
        if as_headers and any(ch in value for ch in "\r\n\x00"):
            raise ValueError(f"attributes: the value of {name!r} has a line break or NUL")


def push_request(
    issuer: LocalIssuer,
    *,
    audience: str,
    service_account_email: str,
    data: bytes = b"",
    attributes: Mapping[str, str] | None = None,
    ordering_key: str | None = None,
    subscription: str = DEFAULT_SUBSCRIPTION,
    message_id: str | None = None,
    publish_time: dt.datetime | None = None,
    delivery_attempt: int | None = None,
    unwrapped: bool = False,
    write_metadata: bool = False,
    token: str | None = None,
) -> PushRequest:
    """A push request as Pub/Sub sends it, signed by ``issuer``.

    Args:
        issuer: signs the token (ignored when ``token`` is given).
        audience: the token's ``aud`` (the subscription's audience; the component's
            ``audience`` output).
        service_account_email: the token's ``email`` (the push-auth account; the component's
            ``push_auth_service_account_email`` output).
        data: the message data (bytes).
        attributes: message attributes.
        ordering_key: the message's ordering key, if any.
        subscription: ``projects/P/subscriptions/S``.
        message_id: default: a new 16-digit ID.
        publish_time: default: now.
        delivery_attempt: wrapped only: ``deliveryAttempt`` (1 on the first delivery), which
            Pub/Sub sends only when the subscription has a dead-letter policy.
        unwrapped: the subscription sets ``noWrapper``: the body is the data.
        write_metadata: unwrapped only: metadata and attributes as headers.
        token: a token of your own (a forged or expired one, say) instead of ``issuer``'s.

    Raises:
        ValueError: ``write_metadata`` or ``delivery_attempt`` without their payload format, an
            attribute that cannot be a header when unwrapped, an attribute key starting with
            ``goog``, data over :data:`MAX_DATA_BYTES`, a ``delivery_attempt`` below 1.
    """
    attributes = dict(attributes or {})
    if len(data) > MAX_DATA_BYTES:
        raise ValueError(
            f"data: {len(data)} bytes, over Pub/Sub's message size limit of {MAX_DATA_BYTES} bytes"
        )
    if write_metadata and not unwrapped:
        raise ValueError("write_metadata: only for unwrapped pushes (noWrapper.writeMetadata)")
    if delivery_attempt is not None and (unwrapped or delivery_attempt < 1):
        raise ValueError("delivery_attempt: 1 or more, and only in a wrapped push")
    _check_attributes(attributes, as_headers=write_metadata)
    message_id = message_id or new_message_id()
    published = publish_time_text(publish_time)
    bearer = token or issuer.token(audience, service_account_email)
    headers = {"Authorization": f"Bearer {bearer}"}
    if unwrapped:
        if write_metadata:
            headers |= {
                SUBSCRIPTION_HEADER: subscription,
                MESSAGE_ID_HEADER: message_id,
                PUBLISH_TIME_HEADER: published,
            }
            if ordering_key is not None:
                headers[ORDERING_KEY_HEADER] = ordering_key
            headers |= attributes
        headers["User-Agent"] = USER_AGENT
        return PushRequest(headers, bytes(data), message_id, bearer)
    message: dict[str, Any] = {
        "attributes": attributes,
        "data": base64.b64encode(data).decode("ascii"),
        "messageId": message_id,
        "message_id": message_id,
        "publishTime": published,
        "publish_time": published,
    }
    if ordering_key is not None:
        message["orderingKey"] = ordering_key
    envelope: dict[str, Any] = {"message": message, "subscription": subscription}
    if delivery_attempt is not None:
        envelope["deliveryAttempt"] = delivery_attempt
    headers |= {"Content-Type": "application/json", "User-Agent": USER_AGENT}
    body = json.dumps(envelope).encode("utf-8")
    return PushRequest(headers, body, message_id, bearer, envelope)
