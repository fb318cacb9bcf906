"""The push request body, wrapped or unwrapped, as one typed message.

Pub/Sub delivers a push message in one of two forms
(https://cloud.google.com/pubsub/docs/push#receive_push and
https://cloud.google.com/pubsub/docs/payload-unwrapping):

- **wrapped** (the default): a JSON body ``{"message": {"data": <base64>, "attributes": {...},
  "messageId"/"message_id", "publishTime"/"publish_time", "orderingKey"}, "subscription": ...,
  "deliveryAttempt": n}``; Pub/Sub writes both spellings of the ID and time;
  ``deliveryAttempt`` only appears when the subscription has a dead-letter policy;
- **unwrapped** (``pushConfig.noWrapper``): the raw message data is the body. With
  ``writeMetadata`` the metadata comes as ``x-goog-pubsub-subscription-name``,
  ``x-goog-pubsub-message-id``, ``x-goog-pubsub-publish-time`` and ``x-goog-pubsub-ordering-key``
  headers, and each attribute as a header named after it, indistinguishable from the request's
  other headers. That is why the attributes to pick up must be named.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from pushguard.receiver.errors import PushRejected
from pushguard.receiver.token import TokenClaims

SUBSCRIPTION_HEADER = "x-goog-pubsub-subscription-name"
MESSAGE_ID_HEADER = "x-goog-pubsub-message-id"
PUBLISH_TIME_HEADER = "x-goog-pubsub-publish-time"
ORDERING_KEY_HEADER = "x-goog-pubsub-ordering-key"

NO_CONTROL = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]*$"
"""No C0 or C1 control character, DEL, or Unicode line or paragraph separator (each starts a new
line in some log viewers)."""

LoggedText = Annotated[str, StringConstraints(pattern=NO_CONTROL)]
"""A string a handler is likely to log (subscription, ordering key, attribute key): no control
characters, so it cannot forge a log line. Like every pattern-checked string, it must also be
valid Unicode: a lone surrogate (which the JSON escape ``\\ud800`` decodes to, and which cannot
be encoded as UTF-8) is refused."""

Text = Annotated[str, StringConstraints(pattern=r"(?s)^.*$")]
"""Any Unicode text (an attribute value may hold newlines), but valid: no lone surrogate."""

SubscriptionName = Annotated[
    str,
    StringConstraints(
        pattern=r"^projects/[^/\s,\x00-\x1f\x7f-\x9f]+/subscriptions/[^/\s,\x00-\x1f\x7f-\x9f]+$",
        max_length=512,
    ),
]
"""``projects/P/subscriptions/S``: no whitespace, ``,`` or control character in either name."""

_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.][0-9]{1,9})?"
    r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def _rfc3339(value: object) -> datetime:
    """An RFC 3339 date-time string with a time zone offset (RFC 3339 section 5.6), nothing else:
    no epoch numbers, no date alone, no local time."""
    if isinstance(value, str) and _RFC3339.fullmatch(value):
        text = value.upper().replace(" ", "T")
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            pass  # e.g. month 13: falls through to the same error
    raise PydanticCustomError("rfc3339", "an RFC 3339 time with an offset is required")


PublishTime = Annotated[datetime, PlainValidator(_rfc3339)]

MessageIdHeader = Annotated[str, StringConstraints(pattern=r"^[!-+\--~]{1,256}$")]
"""A message ID: visible ASCII without ``,``, so that two header lines merged by a WSGI server
(``"1,2"``) are refused rather than taken as one ID. Pub/Sub's IDs are decimal digits; the
wrapped ``messageId`` is held to the same form, so no control character reaches a log line."""


def _agree(value: Any, pairs: tuple[tuple[str, str], ...]) -> Any:
    if isinstance(value, dict):
        for camel, snake in pairs:
            if (
                camel in value
                and snake in value
                and (type(value[camel]) is not type(value[snake]) or value[camel] != value[snake])
            ):  # 1 and true, or 1 and 1.0, are two spellings that differ too
                raise PydanticCustomError("spellings_differ", "the two spellings differ")
    return value


class PushMessage(BaseModel):
    """One verified push message.

    Attributes:
        data: the message data, decoded from base64 (wrapped) or the raw body (unwrapped).
        attributes: message attributes (unwrapped: only the headers named in
            ``attribute_headers``).
        message_id: Pub/Sub's message ID, the same on every redelivery (``None`` when unwrapped
            without ``writeMetadata``): use it to make processing idempotent.
        publish_time: when the message was published, timezone-aware.
        ordering_key: the ordering key, if the message has one.
        delivery_attempt: 1 on the first delivery; only when the subscription has a dead-letter
            policy.
        subscription: ``projects/P/subscriptions/S``.
        token: the verified token claims (``None`` from :func:`parse_wrapped` and
            :func:`parse_unwrapped` alone, which verify nothing).
    """

    model_config = ConfigDict(frozen=True)

    data: bytes
    attributes: Mapping[str, str]
    message_id: str | None
    publish_time: datetime | None
    ordering_key: str | None = None
    delivery_attempt: int | None = None
    subscription: str | None = None
    token: TokenClaims | None = None


class _WireMessage(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    data: str = ""
    attributes: dict[LoggedText, Text] = Field(default_factory=dict)
    message_id: MessageIdHeader = Field(validation_alias=AliasChoices("messageId", "message_id"))
    publish_time: PublishTime = Field(validation_alias=AliasChoices("publishTime", "publish_time"))
    ordering_key: LoggedText | None = Field(
        default=None, validation_alias=AliasChoices("orderingKey", "ordering_key")
    )

    @model_validator(mode="before")
    @classmethod
    def _spellings_agree(cls, value: Any) -> Any:
        return _agree(
            value,
            (
                ("messageId", "message_id"),
                ("publishTime", "publish_time"),
                ("orderingKey", "ordering_key"),
            ),
        )


class _WireEnvelope(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    message: _WireMessage
    subscription: SubscriptionName | None = None
    delivery_attempt: int | None = Field(
        default=None,
        validation_alias=AliasChoices("deliveryAttempt", "delivery_attempt"),
        ge=1,
        le=2**31 - 1,  # an int32 in Pub/Sub's API (ReceivedMessage.delivery_attempt)
    )

    @model_validator(mode="before")
    @classmethod
    def _spellings_agree(cls, value: Any) -> Any:
        return _agree(value, (("deliveryAttempt", "delivery_attempt"),))


_FIELDS = frozenset(
    {
        "message",
        "data",
        "attributes",
        "messageId",
        "message_id",
        "publishTime",
        "publish_time",
        "orderingKey",
        "ordering_key",
        "subscription",
        "deliveryAttempt",
        "delivery_attempt",
    }
)
"""Field names of the wire models: the only words of a location that go into a reason."""

_HEADERS = {
    "subscription": SUBSCRIPTION_HEADER,
    "message_id": MESSAGE_ID_HEADER,
    "publish_time": PUBLISH_TIME_HEADER,
    "ordering_key": ORDERING_KEY_HEADER,
}

_SENTENCES = {
    "missing": "is required",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "greater_than_equal": "must be 1 or more",
    "less_than_equal": "is too large",
    "string_too_short": "must not be empty",
    "string_too_long": "is too long",
    "string_pattern_mismatch": "is not in the expected form",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "json_invalid": "is not UTF-8 JSON",
    "json_type": "is not UTF-8 JSON",
    "rfc3339": "must be an RFC 3339 time with an offset",
    "spellings_differ": "has two spellings of a field that differ",
    "string_unicode": "is not valid Unicode text",
}


def _describe(error: ValidationError, names: Mapping[str, str] | None = None) -> str:
    """A fixed sentence for the first error: a field path made of schema names only (a dict key
    from the request ends the path) and a sentence chosen by the error type, never pydantic's
    message (which may quote the input)."""
    first: ErrorDetails = error.errors(include_url=False, include_input=False)[0]
    path: list[str] = []
    for part in first["loc"]:
        if not isinstance(part, str) or part not in _FIELDS:
            break
        path.append(names.get(part, part) if names else part)
    where = ".".join(path) or "body"
    if first["type"] == "string_pattern_mismatch" and first.get("ctx", {}).get("pattern") == (
        NO_CONTROL
    ):
        return f"{where}: must not contain control characters"
    return f"{where}: {_SENTENCES.get(first['type'], 'is not valid')}"


class _NotStrictJsonError(ValueError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _NotStrictJsonError("body: an object has the same key twice")
    return found


def _no_constant(name: str) -> Any:
    raise _NotStrictJsonError("body: NaN and Infinity are not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_no_constant)
"""One decoder for every body: ``json.loads`` with hooks would build a new one per call."""


def strict_json(body: bytes) -> Any:
    """The JSON value of ``body``, read as RFC 8259 says and nothing more lenient.

    UTF-8 only (no UTF-16/32, no byte order mark: RFC 8259 section 8.1), no ``NaN``,
    ``Infinity`` or ``-Infinity`` (not JSON numbers: section 6), and no object with the same key
    twice (section 4 leaves duplicates' meaning to the parser; "last wins" would let a second
    ``data`` or ``subscription`` replace the first unseen by anything that reads the first).

    Raises:
        PushRejected: 400 ``malformed_envelope`` with a fixed reason.
    """
    try:
        return _DECODER.decode(bytes(body).decode("utf-8"))
    except _NotStrictJsonError as refused:
        raise PushRejected(400, "malformed_envelope", refused.reason) from None
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise PushRejected(400, "malformed_envelope", "body: is not UTF-8 JSON") from None


def parse_wrapped(body: bytes, token: TokenClaims | None = None) -> PushMessage:
    """Parse a wrapped push body.

    Args:
        body: the raw request body (UTF-8 JSON, read by :func:`strict_json`).
        token: verified claims to attach.

    Raises:
        PushRejected: 400, naming the first field that is missing or of the wrong type, or
            holds control characters where a handler would log it (``messageId`` visible ASCII;
            ``subscription``, ``orderingKey`` and attribute keys without control characters);
            values from the body are never echoed.
    """
    document = strict_json(body)
    try:
        wire = _WireEnvelope.model_validate(document)
    except ValidationError as exc:
        raise PushRejected(400, "malformed_envelope", _describe(exc)) from None
    try:
        data = base64.b64decode(wire.message.data, validate=True)
    except (binascii.Error, ValueError):
        raise PushRejected(400, "malformed_envelope", "message.data: not base64") from None
    return PushMessage(
        data=data,
        attributes=wire.message.attributes,
        message_id=wire.message.message_id,
        publish_time=wire.message.publish_time,
        ordering_key=wire.message.ordering_key,
        delivery_attempt=wire.delivery_attempt,
        subscription=wire.subscription,
        token=token,
    )


class _UnwrappedMetadata(BaseModel):
    model_config = ConfigDict(strict=False, frozen=True)

    subscription: SubscriptionName | None = None
    message_id: MessageIdHeader | None = None
    publish_time: PublishTime | None = None
    ordering_key: LoggedText | None = None


def parse_unwrapped(
    headers: Mapping[str, str],
    body: bytes,
    *,
    attribute_headers: Iterable[str] = (),
    token: TokenClaims | None = None,
) -> PushMessage:
    """Build a message from an unwrapped push (``noWrapper``): the body is the data.

    Args:
        headers: request headers, lowercase names (see :func:`lowercase_headers`).
        body: the raw body, returned as ``data`` unchanged.
        attribute_headers: header names to return as attributes (``writeMetadata`` sends each
            attribute as a header of the same name, which cannot otherwise be told apart from
            transport headers).
        token: verified claims to attach.

    Raises:
        PushRejected: 400 when a ``x-goog-pubsub-*`` header is malformed (e.g. a publish time that
            is not RFC 3339).
    """
    try:
        metadata = _UnwrappedMetadata(
            subscription=headers.get(SUBSCRIPTION_HEADER),
            message_id=headers.get(MESSAGE_ID_HEADER),
            publish_time=headers.get(PUBLISH_TIME_HEADER),
            ordering_key=headers.get(ORDERING_KEY_HEADER),
        )
    except ValidationError as exc:
        raise PushRejected(400, "malformed_metadata", _describe(exc, _HEADERS)) from None
    wanted = {name.lower() for name in attribute_headers}
    return PushMessage(
        data=body,
        attributes={name: value for name, value in headers.items() if name in wanted},
        message_id=metadata.message_id,
        publish_time=metadata.publish_time,
        ordering_key=metadata.ordering_key,
        delivery_attempt=None,
        subscription=metadata.subscription,
        token=token,
    )
