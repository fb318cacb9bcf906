"""``PushVerifier``: one call that turns a push request into a verified message or a rejection.

The checks follow Pub/Sub's guidance for authenticated push
(https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions): the token first (a request
without a valid token learns nothing about the body), then the body's size, then its shape.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, Protocol

from pushguard.receiver.envelope import PushMessage, parse_unwrapped, parse_wrapped
from pushguard.receiver.errors import PushRejected, body_too_large
from pushguard.receiver.keys import GoogleKeySource, KeySource, StaticKeySource
from pushguard.receiver.platform import cloud_run_service
from pushguard.receiver.token import SIGNATURE_REMOVED, TokenClaims, TokenVerifier

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


CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-serverless-authorization",
        "x-forwarded-authorization",
        "x-goog-iap-jwt-assertion",
        "x-goog-api-key",
        "x-api-key",
    }
)
"""Headers that carry credentials (RFC 9110 section 11, RFC 6265, Cloud Run's
``X-Serverless-Authorization``, IAP's ``X-Goog-IAP-JWT-Assertion``): never attributes."""

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""A header field name (RFC 9110 section 5.1: a token)."""

SUBSCRIPTION_PATTERN = re.compile(
    r"projects/(?:[a-z][a-z0-9.-]{0,62}:)?[a-z][a-z0-9-]{4,28}[a-z0-9]"
    r"/subscriptions/(?!goog)[A-Za-z][A-Za-z0-9._~%+-]{2,254}"
)
"""``projects/PROJECT/subscriptions/SUBSCRIPTION``: project IDs of 6-30 lowercase letters, digits
and hyphens (optionally domain-scoped), subscription IDs that start with a letter, 3-255
characters of letters, digits and ``-._~%+``, not starting with ``goog``
(https://cloud.google.com/pubsub/docs/pubsub-basics#resource_names)."""


TRANSPORT_HEADERS = frozenset(
    {"host", "content-length", "content-type", "user-agent", "accept-encoding", "connection",
     "transfer-encoding", "from", "forwarded", "traceparent", "x-cloud-trace-context"}
)  # fmt: skip
"""Headers of the request itself (RFC 9110, Cloud Run's tracing headers), never attributes."""


def _attribute_headers(names: Iterable[str]) -> tuple[str, ...]:
    if isinstance(names, str | bytes):
        raise TypeError(
            f"attribute_headers: a list of header names is required, got the string {names!r}"
        )
    checked = []
    for name in names:
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise ValueError(
                f"attribute_headers: {name!r} is not a header name (RFC 9110 token characters)"
            )
        lowered = name.lower()
        if name != lowered:
            raise ValueError(
                f"attribute_headers: {name!r} has upper-case letters; servers deliver header "
                f"names in lower case, so the attribute arrives as {lowered!r}: name it so "
                "(Pub/Sub sends an unwrapped attribute as a header of the attribute's name)"
            )
        if lowered in CREDENTIAL_HEADERS:
            raise ValueError(
                f"attribute_headers: {name!r} carries credentials and is never an attribute"
            )
        if lowered in TRANSPORT_HEADERS:
            raise ValueError(
                f"attribute_headers: {name!r} is a header of the request itself, not an attribute"
            )
        if lowered.startswith("x-goog-pubsub-"):
            raise ValueError(
                f"attribute_headers: {name!r} is Pub/Sub metadata (PushMessage has it already)"
            )
        checked.append(lowered)
    return tuple(checked)


class HeaderMapping(Protocol):
    """Any request-header collection with ``items()``: a dict, Flask's, Starlette's."""

    def items(self) -> Iterable[tuple[str, str]]: ...


Headers = HeaderMapping | Iterable[tuple[str, str]]
"""Request headers: a mapping-like collection with ``items()``, or ``(name, value)`` pairs."""


MAX_HEADER_LINES = 1000
"""Header lines examined before the token is checked. Pub/Sub sends a dozen transport headers,
plus one per attribute on unwrapped pushes (at most 100 attributes per message:
https://cloud.google.com/pubsub/quotas#resource_limits); more is refused with 431."""

MAX_HEADER_BYTES = 256 * 1024
"""Bytes of header names and values examined before the token is checked: 100 attributes of
256-byte keys and 1,024-byte values (Pub/Sub's limits) fit twice over; more is 431."""


def _too_large() -> PushRejected:
    return PushRejected(431, "headers_too_large", "the request headers are over the size limit")


def lowercase_headers(headers: Headers) -> dict[str, str]:
    """Header names lowercased; repeated headers joined with ``", "`` (RFC 9110 section 5.3).

    Linear in the size of the header block, and bounded: at most :data:`MAX_HEADER_LINES` lines
    and :data:`MAX_HEADER_BYTES` bytes are examined.

    Raises:
        PushRejected: 431 for a header block over the caps; a header that must occur once
            (``Authorization``, ``x-goog-pubsub-*``) occurs more than once: 401 for
            ``Authorization``, else 400.
    """
    collected: dict[str, list[str]] = {}
    size = 0
    pairs = headers.items() if hasattr(headers, "items") else headers
    for lines, (name, value) in enumerate(pairs, start=1):
        size += len(name) + len(value)
        if lines > MAX_HEADER_LINES or size > MAX_HEADER_BYTES:
            raise _too_large()
        key = name.lower()
        values = collected.setdefault(key, [])
        if values and key in _SINGLE_VALUED:
            if key == "authorization":
                raise PushRejected(401, "malformed_token", "more than one Authorization header")
            raise PushRejected(400, "malformed_metadata", "a metadata header occurs more than once")
        values.append(value)
    return {
        key: values[0] if len(values) == 1 else ", ".join(values)
        for key, values in collected.items()
    }


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


def _check_mode(behind_cloud_run_iam: object, environ: Mapping[str, str] | None) -> None:
    """``behind_cloud_run_iam`` is a bool, and ``True`` only in a Cloud Run service's container.

    Raises:
        TypeError: not a bool (``"false"`` would be true).
        ValueError: ``True`` where :func:`cloud_run_service` says no, with its reason.
    """
    if not isinstance(behind_cloud_run_iam, bool):
        raise TypeError(
            "behind_cloud_run_iam: True or False is required, got "
            f"{type(behind_cloud_run_iam).__name__} {behind_cloud_run_iam!r}"
        )
    if behind_cloud_run_iam:
        on_cloud_run, why_not = cloud_run_service(environ)
        if not on_cloud_run:
            raise ValueError(
                "behind_cloud_run_iam: only for a Cloud Run service that requires "
                f"authentication, and this process is not one ({why_not}); a token without "
                "its signature is worth nothing anywhere else"
            )


def _key_source(
    keys: KeySource | Mapping[str, str | bytes] | None, clock: Callable[[], float]
) -> KeySource:
    """Google's certificate endpoint (``None``), a static ``{kid: PEM}`` mapping, or ``keys``."""
    if keys is None:
        return GoogleKeySource(clock=clock)
    if isinstance(keys, Mapping):
        return StaticKeySource(keys, clock=clock)
    return keys


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
        attribute_headers: unwrapped only: headers to return as message attributes (header
            names in lower case, as servers deliver them; credential-bearing headers such as
            ``Authorization`` and ``Cookie`` and the ``x-goog-pubsub-*`` metadata headers are
            refused). WSGI servers also drop header names that contain ``_`` (the WSGI adapters
            refuse them): name attributes in lowercase letters, digits and ``-``.
        subscription: ``projects/P/subscriptions/S`` to accept pushes of that subscription only
            (the envelope's ``subscription``, or the ``x-goog-pubsub-subscription-name`` header
            when unwrapped, which needs ``writeMetadata``); another one, or none, is 403.
        max_body_bytes: larger bodies are rejected with 413.
        clock_skew: seconds of tolerance on token times (0-300).
        cache_size: verified tokens remembered until they expire (0: off).
        clock: seconds since the epoch; injectable for tests.
        behind_cloud_run_iam: the receiver is a Cloud Run service (or 2nd-gen function) that
            requires authentication, whose front end checks the token and may hand it on with
            its signature replaced by ``SIGNATURE_REMOVED_BY_GOOGLE``
            (https://cloud.google.com/run/docs/troubleshooting#signature-removed). Such a token
            is then accepted after its header and every claim are checked as for a signed one;
            a signed token is still verified in full. Off (the default), it is 401
            ``signature_removed``. Refused at start-up unless this process is a Cloud Run
            service's container (:func:`pushguard.receiver.platform.cloud_run_service`). Safe
            only while the service grants no invoker role to ``allUsers`` or
            ``allAuthenticatedUsers`` (the rule ``push-target-requires-auth``).
        environ: the environment that tells where the receiver runs (``os.environ`` by
            default); injectable for tests.

    Raises:
        ValueError: an argument is out of range, or ``behind_cloud_run_iam`` where the process
            is not a Cloud Run service; the message names it.

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
        subscription: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        clock_skew: float = 30.0,
        cache_size: int = 10_000,
        clock: Callable[[], float] = time.time,
        behind_cloud_run_iam: bool = False,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        _check_mode(behind_cloud_run_iam, environ)
        if payload_format not in ("wrapped", "unwrapped"):
            raise ValueError(
                f"payload_format: 'wrapped' or 'unwrapped' allowed, got {payload_format!r}"
            )
        if max_body_bytes < 1:
            raise ValueError(f"max_body_bytes: a positive number of bytes, got {max_body_bytes}")
        attribute_headers = _attribute_headers(attribute_headers)
        if subscription is not None and not (
            isinstance(subscription, str) and SUBSCRIPTION_PATTERN.fullmatch(subscription)
        ):
            raise ValueError(
                "subscription: 'projects/PROJECT_ID/subscriptions/SUBSCRIPTION_ID' is required, "
                f"got {subscription!r}"
            )
        if attribute_headers and payload_format == "wrapped":
            raise ValueError("attribute_headers: only for payload_format='unwrapped'")
        self.tokens = TokenVerifier(
            audience,
            service_account_email,
            _key_source(keys, clock),
            clock_skew=clock_skew,
            cache_size=cache_size,
            clock=clock,
            accept_removed_signature=behind_cloud_run_iam,
        )
        self.behind_cloud_run_iam = behind_cloud_run_iam
        self.payload_format = payload_format
        self.attribute_headers = attribute_headers
        self.max_body_bytes = max_body_bytes
        self.subscription = subscription

    def verify_token(self, headers: Headers) -> TokenClaims:
        """Check only the request's bearer token.

        Raises:
            PushRejected: see :meth:`TokenVerifier.verify`.
        """
        lowered = lowercase_headers(headers)
        token = bearer_token(lowered.get("authorization"))
        if "x-serverless-authorization" in lowered and token.endswith("." + SIGNATURE_REMOVED):
            # Cloud Run checks X-Serverless-Authorization when a request has it, and hands
            # Authorization on as it came: a stripped token there was checked by no one.
            raise PushRejected(
                401,
                "unchecked_token",
                "the token has no signature and Google's front end checked another one "
                "(X-Serverless-Authorization)",
            )
        return self.tokens.verify(token)

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
            raise body_too_large()
        if self.payload_format == "unwrapped":
            message = parse_unwrapped(
                lowercase_headers(headers),
                bytes(body),
                attribute_headers=self.attribute_headers,
                token=token,
            )
        else:
            message = parse_wrapped(bytes(body), token=token)
        self._check_subscription(message)
        return message

    def _check_subscription(self, message: PushMessage) -> None:
        if self.subscription is None or message.subscription == self.subscription:
            return
        if message.subscription is None and self.payload_format == "unwrapped":
            raise PushRejected(
                403,
                "no_subscription_metadata",
                "the subscription is pinned but the push has no subscription header "
                "(the subscription must set writeMetadata)",
            )
        raise PushRejected(403, "wrong_subscription", "the push is for another subscription")
