"""The framework-independent core of the adapters: request in, status and body out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pushguard.receiver.ack import ack_status
from pushguard.receiver.envelope import PushMessage
from pushguard.receiver.errors import PushRejected

Handler = Callable[[PushMessage], "bool | int | None"]
"""A push handler: gets the verified message, returns an outcome for :func:`ack_status`."""


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


def outcome_response(outcome: bool | int | None) -> PushResponse:
    """The response for a handler's outcome (see :func:`ack_status`)."""
    return PushResponse(ack_status(outcome))
