"""``PushVerifier``: one call that turns a push request into a verified message or a rejection.

The checks follow Pub/Sub's guidance for authenticated push
(https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions): the token first (a request
without a valid token learns nothing about the body), then the body's size, then its shape.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, Protocol

from pushguard.receiver.envelope import PushMessage, parse_unwrapped, parse_wrapped
from pushguard.receiver.errors import PushRejected
from pushguard.receiver.keys import GoogleKeySource, KeySource, StaticKeySource
from pushguard.receiver.token import TokenClaims, TokenVerifier

DEFAULT_MAX_BODY_BYTES = 14 * 1024 * 1024
"""A 10 MB message (Pub/Sub's limit, https://cloud.google.com/pubsub/quotas#resource_limits) is
13.4 MB once base64-encoded in the wrapped form; the rest is room for attributes and metadata."""

_SINGLE_VALUED = frozenset(
    {
        "authorization",
        "x-goog-pubsub-subscription-name",
        "x-goog-pubsub-message-id",
        "x-goog-pubsub-publish-time",
        "x-goog-pubsub-ordering-key",
    }
)


class Headers(Protocol):
    """Any request-header collection with ``items()``: a dict, Flask's, Starlette's."""

    def items(self) -> Iterable[tuple[str, str]]: ...


def lowercase_headers(headers: Headers) -> dict[str, str]:
    """Header names lowercased; repeated headers joined with ``", "`` (RFC 9110 section 5.3).

    Raises:
        PushRejected: a header that must occur once (``Authorization``, ``x-goog-pubsub-*``)
            occurs more than once: 401 for ``Authorization``, else 400.
    """
    lowered: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        if key in lowered:
            if key == "authorization":
                raise PushRejected(401, "malformed_token", "more than one Authorization header")
            if key in _SINGLE_VALUED:
                raise PushRejected(400, "malformed_metadata", f"more than one {key} header")
            lowered[key] = f"{lowered[key]}, {value}"
        else:
            lowered[key] = value
    return lowered


def bearer_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` value (scheme case-insensitive, RFC 6750).

    Raises:
        PushRejected: 401 when the header is missing or not a single bearer token.
    """
    if not authorization:
        raise PushRejected(401, "missing_token", "no Authorization header")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token or " " in token.strip():
        raise PushRejected(401, "malformed_token", "the Authorization header is not a bearer token")
    return token.strip()


class PushVerifier:
    """Verifies Pub/Sub push requests for one subscription's audience and push-auth account.

    Args:
        audience: the subscription's ``pushConfig.oidcToken.audience``, or its push endpoint URL
            when no audience is set (what Pub/Sub then puts in ``aud``); pushguard's
            ``PushSubscription`` component outputs it as ``audience``.
        service_account_email: the push-auth service account (the component's
            ``push_auth_service_account_email`` output).
        keys: a :class:`KeySource`, a ``{kid: PEM}`` mapping (no network), or ``None`` for Google's
            certificate endpoint (needs the ``receiver`` extra's ``requests``).
        payload_format: ``"wrapped"`` (default) or ``"unwrapped"`` (the subscription sets
            ``noWrapper``).
        attribute_headers: unwrapped only: headers to return as message attributes.
        max_body_bytes: larger bodies are rejected with 413.
        clock_skew: seconds of tolerance on token times (0-300).
        cache_size: verified tokens remembered until they expire (0: off).
        clock: seconds since the epoch; injectable for tests.

    Raises:
        ValueError: an argument is out of range; the message names it.

    Example::

        verifier = PushVerifier(audience="https://orders.example.com/push",
                                service_account_email="orders-push@acme.iam.gserviceaccount.com")
        try:
            message = verifier.verify(request.headers, request.get_data())
        except PushRejected as rejection:
            return rejection.reason, rejection.status
    """

    def __init__(
        self,
        audience: str,
        service_account_email: str,
        *,
        keys: KeySource | Mapping[str, str | bytes] | None = None,
        payload_format: Literal["wrapped", "unwrapped"] = "wrapped",
        attribute_headers: Iterable[str] = (),
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        clock_skew: float = 30.0,
        cache_size: int = 10_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if payload_format not in ("wrapped", "unwrapped"):
            raise ValueError(
                f"payload_format: 'wrapped' or 'unwrapped' allowed, got {payload_format!r}"
            )
        if max_body_bytes < 1:
            raise ValueError(f"max_body_bytes: a positive number of bytes, got {max_body_bytes}")
        attribute_headers = tuple(attribute_headers)
        if attribute_headers and payload_format == "wrapped":
            raise ValueError("attribute_headers: only for payload_format='unwrapped'")
        if keys is None:
            source: KeySource = GoogleKeySource(clock=clock)
        elif isinstance(keys, Mapping):
            source = StaticKeySource(keys)
        else:
            source = keys
        self.tokens = TokenVerifier(
            audience,
            service_account_email,
            source,
            clock_skew=clock_skew,
            cache_size=cache_size,
            clock=clock,
        )
        self.payload_format = payload_format
        self.attribute_headers = attribute_headers
        self.max_body_bytes = max_body_bytes

    def verify_token(self, headers: Headers) -> TokenClaims:
        """Check only the request's bearer token.

        Raises:
            PushRejected: see :meth:`TokenVerifier.verify`.
        """
        return self.tokens.verify(bearer_token(lowercase_headers(headers).get("authorization")))

    def verify(self, headers: Headers, body: bytes) -> PushMessage:
        """Verify a push request and return its message.

        Args:
            headers: the request headers (any casing).
            body: the raw request body.

        Raises:
            PushRejected: 401/403/503 for the token (see :meth:`TokenVerifier.verify`), 413 for a
                body over ``max_body_bytes``, 400 for a malformed envelope or metadata header.
            TypeError: ``body`` is not bytes (a programming error, not a bad request).
        """
        return self.parse_body(headers, body, self.verify_token(headers))

    def parse_body(self, headers: Headers, body: bytes, token: TokenClaims) -> PushMessage:
        """The second half of :meth:`verify`, for adapters that check the token before reading
        the body (so an unauthenticated client cannot make the server read megabytes).

        Raises:
            PushRejected: 413 or 400, as :meth:`verify`.
            TypeError: ``body`` is not bytes.
        """
        if not isinstance(body, bytes | bytearray | memoryview):
            raise TypeError(f"body must be bytes, got {type(body).__name__}")
        if len(body) > self.max_body_bytes:
            raise PushRejected(413, "body_too_large", "the request body is over the size limit")
        if self.payload_format == "unwrapped":
            return parse_unwrapped(
                lowercase_headers(headers),
                bytes(body),
                attribute_headers=self.attribute_headers,
                token=token,
            )
        return parse_wrapped(bytes(body), token=token)
