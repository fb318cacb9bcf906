"""Flask adapter: a decorator that turns ``handler(message)`` into a verified push view.

Example::

    app = flask.Flask(__name__)
    verifier = PushVerifier(audience=AUDIENCE, service_account_email=PUSH_AUTH_EMAIL)

    @app.post("/push")
    @push_handler(verifier)
    def on_order(message: PushMessage) -> None:
        process(message.data)          # returning None acknowledges (204)

The token is verified on the headers before anything reads the body; then at most
``max_body_bytes + 1`` bytes are read, and the WSGI input is replaced by what was read
(:mod:`pushguard.receiver.wsgi`), so no hook after the view reads more.

What the handler may return (Flask's own conventions, plus Pub/Sub's outcomes):

- ``None`` or ``True``: acknowledge, 204; ``False``: ask for redelivery, 503;
- an ``int`` status (``http.HTTPStatus.NO_CONTENT`` counts as 204): an acknowledging one (102 is
  answered 202, a final status) or a 4xx/5xx;
- anything Flask's ``make_response`` takes (a string or bytes: 200; a ``dict``/``list``: JSON 200;
  a ``(body, status)`` or ``(body, status, headers)`` tuple; a ``flask.Response``), whose status
  must then be an acknowledging one or a 4xx/5xx. A streamed response (a generator,
  ``flask.Response(generator)``, ``stream_with_context``) is run to its end before the status is
  sent: an acknowledgement never precedes the work, and an exception in it is a 500.

Flask has no way to know the result before the handler ran; a result outside this contract
(a ``float``, a 203 or a redirect, an object Flask cannot send, a coroutine from a plain
``def``) is answered 500 and logged, so Pub/Sub redelivers. A raised exception is never an
acknowledgement: the adapter answers it itself (:func:`respond`), whatever the app's error
handlers would make of it. A handler bug is never a silent acknowledgement. An ``async def``
handler runs through Flask's ``ensure_sync`` (Flask's ``async`` extra); without it, it is
refused at registration.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
from collections.abc import Callable
from typing import cast

import flask
from werkzeug.exceptions import HTTPException

from pushguard.receiver.ack import ACK_STATUSES
from pushguard.receiver.envelope import PushMessage
from pushguard.receiver.errors import PushRejected
from pushguard.receiver.http import (
    Handler,
    PushResponse,
    final_status,
    handler_bug,
    handler_failed,
    outcome_response,
    rejection_response,
)
from pushguard.receiver.verifier import PushVerifier
from pushguard.receiver.wsgi import read_body, seal_body


def respond(verifier: PushVerifier, request: flask.Request, handler: Handler) -> flask.Response:
    """Verify ``request``, call ``handler`` and build the Flask response.

    A raised exception is never an acknowledgement, and the adapter answers it itself (an
    app's ``errorhandler`` could otherwise turn it into a 200): an ``HTTPException``
    (``abort``) with a 4xx/5xx status is answered with its own response; one with any other
    status, or none (werkzeug's base class, a subclass that forgets ``code``,
    ``abort(redirect(...))``, ``abort(Response(status=200))``), and any other exception raised
    by ``handler`` or by its streamed response, is answered 500 and logged (with the traceback,
    and Flask's ``got_request_exception`` signal is sent for error trackers).
    """
    try:
        token = verifier.verify_token(request.headers)
        body = read_body(request.environ, verifier.max_body_bytes)
        message = verifier.parse_body(request.headers, body, token)
    except PushRejected as rejection:
        seal_body(request.environ, unread=True)
        return _to_flask(rejection_response(rejection))
    seal_body(request.environ, body)
    try:
        return result_response(_call(handler, message))
    except HTTPException as raised:  # abort(...): its 4xx/5xx, answered here
        status = raised.response.status_code if raised.response is not None else raised.code
        if status is not None and 400 <= status <= 599:
            answer = flask.Response.force_type(raised.get_response())  # a flask.Response
            return cast(flask.Response, answer)
        return _to_flask(handler_bug(f"an HTTPException with status {status}"))
    except Exception as failed:  # answered here: an app's error handler could make it a 200
        return _to_flask(handler_failed(failed, _signal))


def _signal(failed: Exception) -> None:
    """Flask's ``got_request_exception`` signal, as Flask sends it for an unhandled exception
    (error trackers subscribe to it), though the adapter answers the request itself."""
    app = flask.current_app._get_current_object()  # type: ignore[attr-defined]
    flask.got_request_exception.send(app, _async_wrapper=app.ensure_sync, exception=failed)


def _call(handler: Handler, message: PushMessage) -> object:
    """The handler's result; an ``async def`` handler runs through Flask's ``ensure_sync``
    (https://flask.palletsprojects.com/en/stable/async-await/), which the decorator checked."""
    if inspect.iscoroutinefunction(handler):
        return flask.current_app.ensure_sync(handler)(message)
    return handler(message)


def check_handler(handler: Handler, verifier: PushVerifier) -> None:
    """Refuse, at registration, a push handler the WSGI adapters could never run correctly.

    Raises:
        TypeError: an ``async def`` handler without ``asgiref`` (Flask runs coroutines only with
            its ``async`` extra, ``pip install "flask[async]"``; without it every push would be
            a 500).
        ValueError: the verifier picks attributes from headers whose names contain ``_``: WSGI
            servers (werkzeug, gunicorn) drop such headers, so the attribute would never arrive.
    """
    if inspect.iscoroutinefunction(handler) and importlib.util.find_spec("asgiref") is None:
        raise TypeError(
            f"push handler {getattr(handler, '__name__', handler)!r} is async: Flask and the "
            'Functions Framework run async functions only with Flask\'s "async" extra '
            '(pip install "flask[async]"); install it, or define the handler with plain def'
        )
    dropped = [name for name in verifier.attribute_headers if "_" in name]
    if dropped:
        raise ValueError(
            f"attribute_headers: {', '.join(map(repr, dropped))} contain '_': WSGI servers "
            "(werkzeug, gunicorn) drop header names with '_', so these attributes never arrive; "
            "publish them with '-' instead"
        )


def result_response(outcome: object) -> flask.Response:
    """The Flask response for what a handler returned (the contract in the module docstring).

    A streamed response (a generator, ``flask.Response(generator)``, ``stream_with_context``) is
    run to its end here, before the status is sent, so Pub/Sub never gets an acknowledgement for
    work that has not run; an exception it raises propagates to :func:`respond`, which answers
    it. Its body is then held in memory. A refused status does not run it.
    """
    if inspect.isawaitable(outcome):  # a coroutine from a handler not declared async def
        if inspect.iscoroutine(outcome):
            outcome.close()  # never run: no "was never awaited" warning
        return _to_flask(handler_bug("an awaitable (declare an async handler with async def)"))
    if outcome is None or isinstance(outcome, int):  # bool, int, http.HTTPStatus
        try:
            return _to_flask(outcome_response(outcome))
        except ValueError:
            return _to_flask(handler_bug(f"status {int(outcome or 0)}"))
    try:
        response = flask.make_response(outcome)
    except (TypeError, ValueError):
        return _to_flask(handler_bug(f"a {type(outcome).__name__}"))
    status = response.status_code
    if status not in ACK_STATUSES and not 400 <= status <= 599:
        response.close()  # a generator that was never started is closed, not run
        return _to_flask(handler_bug(f"status {status}"))
    if response.is_streamed:
        response.make_sequence()  # runs the generator now: the work before the status
    response.status_code = final_status(status)
    return response


def push_handler(verifier: PushVerifier) -> Callable[[Handler], Callable[[], flask.Response]]:
    """Decorator for a Flask view that receives verified push messages.

    Raises:
        TypeError, ValueError: at registration, see :func:`check_handler`.
    """

    def decorate(handler: Handler) -> Callable[[], flask.Response]:
        check_handler(handler, verifier)

        @functools.wraps(handler)
        def view() -> flask.Response:
            return respond(verifier, flask.request, handler)

        return view

    return decorate


def _to_flask(response: PushResponse) -> flask.Response:
    return flask.Response(
        response.body, status=response.status, headers=response.headers, mimetype="text/plain"
    )
