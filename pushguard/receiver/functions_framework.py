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
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import flask

from pushguard.receiver.flask import respond
from pushguard.receiver.http import Handler
from pushguard.receiver.verifier import PushVerifier


def push_function(
    verifier: PushVerifier,
) -> Callable[[Handler], Callable[[flask.Request], flask.Response]]:
    """Decorator turning ``handler(message)`` into an HTTP function ``fn(request)``."""

    def decorate(handler: Handler) -> Callable[[flask.Request], flask.Response]:
        @functools.wraps(handler)
        def function(request: flask.Request) -> flask.Response:
            return respond(verifier, request, handler)

        return function

    return decorate
