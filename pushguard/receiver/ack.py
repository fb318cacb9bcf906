"""Turning a handler's outcome into the status Pub/Sub reads as an acknowledgement, or not.

Pub/Sub acknowledges a push message on 102, 200, 201, 202 or 204 and treats every other status
(and a timeout) as a negative acknowledgement, redelivering with backoff
(https://cloud.google.com/pubsub/docs/push#receive_push). A handler that answers 203 or a
redirect by accident is nacked for ever; :func:`ack_status` refuses such statuses instead.
"""

from __future__ import annotations

ACK_STATUSES = frozenset({102, 200, 201, 202, 204})
"""The HTTP statuses Pub/Sub takes as an acknowledgement."""

DEFAULT_ACK_STATUS = 204
DEFAULT_NACK_STATUS = 503


def is_ack(status: int) -> bool:
    """Whether Pub/Sub acknowledges a message answered with ``status``."""
    return status in ACK_STATUSES


def ack_status(outcome: bool | int | None = None, *, nack_status: int = DEFAULT_NACK_STATUS) -> int:
    """The HTTP status for a handler's outcome.

    Args:
        outcome: ``None`` or ``True`` acknowledge (204); ``False`` asks for redelivery
            (``nack_status``); an ``int`` (an ``int`` subclass such as ``http.HTTPStatus``
            counts as its value; ``bool`` is the outcome above) is used as the status if it is
            an acknowledging one or a 4xx/5xx.
        nack_status: the 4xx/5xx to answer for ``False`` (503 by default, "retry later").

    Returns:
        a plain ``int`` status.

    Raises:
        ValueError: the status would be an accidental negative acknowledgement (1xx/2xx/3xx other
            than 102, 200, 201, 202, 204), ``outcome`` is not an ``int`` (a ``float`` such as
            ``204.0`` is refused, not rounded), or ``nack_status`` is not a 4xx/5xx.
    """
    if not 400 <= nack_status <= 599:
        raise ValueError(f"nack_status: a 4xx or 5xx status is required, got {nack_status}")
    if outcome is None or outcome is True:
        return DEFAULT_ACK_STATUS
    if outcome is False:
        return nack_status
    if not isinstance(outcome, int):
        raise ValueError(f"an int status is required, got a {type(outcome).__name__}")
    status = int(outcome)  # HTTPStatus.NO_CONTENT is 204
    if status in ACK_STATUSES or 400 <= status <= 599:
        return status
    raise ValueError(
        f"status {status} is neither an acknowledgement for Pub/Sub "
        f"({', '.join(map(str, sorted(ACK_STATUSES)))}) nor a 4xx/5xx negative acknowledgement"
    )
