"""Flask adapter: a decorator that turns ``handler(message)`` into a verified push view.

Example::

    app = flask.Flask(__name__)
    verifier = PushVerifier(audience=AUDIENCE, service_account_email=PUSH_AUTH_EMAIL)

    @app.post("/push")
    @push_handler(verifier)
    def on_order(message: PushMessage) -> None:
        process(message.data)          # returning None acknowledges (204)

The token is verified before the body is read, and the body is read only up to the verifier's
limit, so unauthenticated or oversized requests cost no more than their headers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import flask

from pushguard.receiver.errors import PushRejected
from pushguard.receiver.http import Handler, PushResponse, outcome_response, rejection_response
from pushguard.receiver.verifier import PushVerifier


def respond(verifier: PushVerifier, request: flask.Request, handler: Handler) -> flask.Response:
    """Verify ``request``, call ``handler`` and build the Flask response.

    Exceptions raised by ``handler`` propagate (Flask answers 500: a negative acknowledgement).
    """
    try:
        token = verifier.verify_token(request.headers)
        body = request.stream.read(verifier.max_body_bytes + 1)
        message = verifier.parse_body(request.headers, body, token)
    except PushRejected as rejection:
        return _to_flask(rejection_response(rejection))
    return _to_flask(outcome_response(handler(message)))


def push_handler(verifier: PushVerifier) -> Callable[[Handler], Callable[[], flask.Response]]:
    """Decorator for a Flask view that receives verified push messages."""

    def decorate(handler: Handler) -> Callable[[], flask.Response]:
        @functools.wraps(handler)
        def view() -> flask.Response:
            return respond(verifier, flask.request, handler)

        return view

    return decorate


def _to_flask(response: PushResponse) -> flask.Response:
    return flask.Response(
        response.body, status=response.status, headers=response.headers, mimetype="text/plain"
    )
