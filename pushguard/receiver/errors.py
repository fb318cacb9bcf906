"""The one exception a push endpoint has to handle.

Every way a push request can fail verification ends in :class:`PushRejected` with the HTTP status
to answer. Pub/Sub treats any status other than 102, 200, 201, 202 and 204 as a negative
acknowledgement and redelivers (https://cloud.google.com/pubsub/docs/push#receive_push), so a
rejected request is never lost: it is retried, and dead-lettered if the subscription says so.
"""

from __future__ import annotations


class PushRejected(Exception):  # noqa: N818 - the public name users catch
    """A push request that must not be processed.

    Attributes:
        status: the HTTP status to answer: 400 (malformed envelope), 401 (missing or invalid
            token), 403 (a valid Google token for another identity), 413 (body over the limit),
            or 503 (Google's signing keys could not be fetched; the request may be fine).
        reason: a short, fixed sentence for the response body and logs. It never contains the
            token, the expected audience or account, or any value taken from the request.
        code: a stable machine-readable name (``token_expired``, ``wrong_audience``, ...) for
            metrics and alerting.
    """

    def __init__(self, status: int, code: str, reason: str) -> None:
        super().__init__(f"{status} {code}: {reason}")
        self.status = status
        self.code = code
        self.reason = reason

    @property
    def www_authenticate(self) -> str | None:
        """The ``WWW-Authenticate`` value RFC 6750 asks for on a 401 or 403, else ``None``."""
        if self.status == 401:
            return 'Bearer error="invalid_token"'
        if self.status == 403:
            return 'Bearer error="insufficient_scope"'
        return None


def body_too_large() -> PushRejected:
    """The rejection for a body over ``max_body_bytes`` (announced or read)."""
    return PushRejected(413, "body_too_large", "the request body is over the size limit")


def announced_length(value: str | None, limit: int) -> int | None:
    """The body length a ``Content-Length`` value announces (``None`` if absent), checked
    against ``limit`` before anything is read.

    RFC 9110 section 8.6: ``Content-Length = 1*DIGIT``, ASCII digits only (``str.isdigit`` would
    also take ``²`` or ``٣``, which ``int`` then refuses or reads as another number).

    Raises:
        PushRejected: 400 ``malformed_request`` for a value that is not ASCII digits; 413 when
            it is over ``limit``.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    if not (text.isascii() and text.isdigit()):
        raise PushRejected(400, "malformed_request", "the Content-Length header is not a number")
    if int(text) > limit:
        raise body_too_large()
    return int(text)
