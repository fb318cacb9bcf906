"""The framework-independent core of the adapters: request in, status and body out."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from pushguard.receiver.ack import ACK_STATUSES, ack_status
from pushguard.receiver.envelope import PushMessage
from pushguard.receiver.errors import PushRejected

LOG = logging.getLogger("pushguard.receiver")

Handler = Callable[[PushMessage], object]
"""A push handler: gets the verified message, returns an outcome (see the adapter)."""

INTERIM_ACK_ANSWER = 202
"""What a handler's 102 is answered with. Pub/Sub counts 102 as an acknowledgement
(https://cloud.google.com/pubsub/docs/push#receive_push), but 102 is an interim response
(RFC 9110 section 15.2): sent as the final one, HTTP clients wait for another or report a broken
connection. 202 ("accepted") is the acknowledging final status that means the same."""

FINAL_ACK_STATUSES = ACK_STATUSES - {102}
"""The acknowledging statuses that can end an HTTP exchange."""


@dataclass(frozen=True)
class PushResponse:
    """What to answer: ``status``, a short plain-text ``body`` and extra ``headers``."""

    status: int
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def rejection_response(rejection: PushRejected) -> PushResponse:
    """The response for a rejected request: its status, reason and RFC 6750 challenge."""
    challenge = rejection.www_authenticate
    return PushResponse(
        rejection.status,
        rejection.reason,
        {"WWW-Authenticate": challenge} if challenge else {},
    )


def final_status(status: int) -> int:
    """The status to send for an acknowledging or error ``status``: 102 becomes 202."""
    return INTERIM_ACK_ANSWER if status == 102 else status


def outcome_response(outcome: bool | int | None) -> PushResponse:
    """The response for a handler's outcome (see :func:`ack_status`; 102 is sent as 202).

    Raises:
        ValueError: see :func:`ack_status`.
    """
    return PushResponse(final_status(ack_status(outcome)))


def handler_bug(what: str) -> PushResponse:
    """The answer when a handler returned something the adapter cannot send: 500 (Pub/Sub
    redelivers), with the cause logged (the result's type or status, never its content)."""
    LOG.error("push handler result refused: %s; answered 500, Pub/Sub will redeliver", what)
    return PushResponse(500, "the push handler returned an unusable result")


def route_bug(what: str) -> PushResponse:
    """The answer when a push route is set up so that its answers could be misread by Pub/Sub:
    500 before the handler runs (Pub/Sub redelivers), with the cause logged."""
    LOG.error("push route refused: %s; answered 500 without calling the handler", what)
    return PushResponse(500, "the push route is not set up to answer Pub/Sub")


def handler_failed(
    failed: Exception, notify: Callable[[Exception], None] | None = None
) -> PushResponse:
    """The answer when a push handler raised: 500 (Pub/Sub redelivers), logged with the
    traceback; ``notify`` passes the exception on (a framework's own signal), and its own
    failure is logged, never raised."""
    LOG.error(
        "push handler raised %s; answered 500, Pub/Sub will redeliver",
        type(failed).__name__,
        exc_info=failed,
    )
    if notify is not None:
        try:
            notify(failed)
        except Exception:
            LOG.exception("notifying the push handler's failure failed")
    return PushResponse(500, "the push handler failed")
