"""Functions Framework adapter (Cloud Run functions / Cloud Functions, HTTP trigger).

The Functions Framework calls an HTTP function with a ``flask.Request``; this decorator verifies
it and passes the message on::

    import functions_framework
    from pushguard.receiver import PushVerifier
    from pushguard.receiver.functions_framework import push_function

    verifier = PushVerifier(audience=AUDIENCE, service_account_email=PUSH_AUTH_EMAIL)

    @functions_framework.http
    @push_function(verifier)
    def on_order(message):
        process(message.data)

The Functions Framework reads the whole request body after every HTTP function (its
``after_request`` hook ``read_request`` calls ``get_data()``). The adapter checks the token on
the headers, reads at most ``max_body_bytes + 1`` bytes itself and then replaces the WSGI input
by what it read (:mod:`pushguard.receiver.wsgi`): the hook reads those bytes, never the client's
socket, so an unauthenticated body is not read and a withheld one does not hold a thread.
Handler results follow the Flask adapter's contract (:mod:`pushguard.receiver.flask`): the
Functions Framework hands an HTTP function's result to Flask.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import flask

from pushguard.receiver.flask import check_handler, respond
from pushguard.receiver.http import Handler
from pushguard.receiver.verifier import PushVerifier


def push_function(
    verifier: PushVerifier,
) -> Callable[[Handler], Callable[[flask.Request], flask.Response]]:
    """Decorator turning ``handler(message)`` into an HTTP function ``fn(request)``.

    Raises:
        TypeError, ValueError: at registration, see :func:`pushguard.receiver.flask.check_handler`.
    """

    def decorate(handler: Handler) -> Callable[[flask.Request], flask.Response]:
        check_handler(handler, verifier)

        @functools.wraps(handler)
        def function(request: flask.Request) -> flask.Response:
            return respond(verifier, request, handler)

        return function

    return decorate
