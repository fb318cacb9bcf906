"""Verify Pub/Sub push requests at the endpoint: the other half of the component's contract.

The ``PushSubscription`` component outputs the audience and push-auth service account; a receiver
built with the same two values accepts exactly the requests Pub/Sub signs for that subscription::

    verifier = PushVerifier(audience=..., service_account_email=...)
    message = verifier.verify(headers, body)      # or raises PushRejected(status, reason)

Adapters: :mod:`pushguard.receiver.flask`, :mod:`pushguard.receiver.fastapi`,
:mod:`pushguard.receiver.functions_framework`. Needs the ``receiver`` extra.
"""

from pushguard.receiver import _extra  # noqa: F401 - first: names the extra if it is missing
from pushguard.receiver.ack import ACK_STATUSES, ack_status, is_ack
from pushguard.receiver.envelope import PushMessage, parse_unwrapped, parse_wrapped
from pushguard.receiver.errors import PushRejected
from pushguard.receiver.keys import (
    GOOGLE_CERTS_URL,
    GoogleKeySource,
    KeySource,
    KeySourceError,
    StaticKeySource,
)
from pushguard.receiver.token import GOOGLE_ISSUERS, TokenClaims, TokenVerifier
from pushguard.receiver.verifier import PushVerifier

__all__ = [
    "ACK_STATUSES",
    "GOOGLE_CERTS_URL",
    "GOOGLE_ISSUERS",
    "GoogleKeySource",
    "KeySource",
    "KeySourceError",
    "PushMessage",
    "PushRejected",
    "PushVerifier",
    "StaticKeySource",
    "TokenClaims",
    "TokenVerifier",
    "ack_status",
    "is_ack",
    "parse_unwrapped",
    "parse_wrapped",
]
