"""FastAPI adapter: a dependency that yields the verified message, and a route class that holds
the handler's answer to Pub/Sub's acknowledgement rule.

Example::

    app = FastAPI()
    app.router.route_class = PushRoute        # before the routes are declared
    verified_push = PushDependency(PushVerifier(audience=AUDIENCE,
                                                service_account_email=PUSH_AUTH_EMAIL))

    @app.post("/push", status_code=204)
    async def on_order(message: PushMessage = Depends(verified_push)) -> None:
        await process(message.data)

(or ``APIRouter(route_class=PushRoute)``: FastAPI's way to post-process a route's responses,
https://fastapi.tiangolo.com/how-to/custom-request-and-route/).

The token is checked in a worker thread (fetching Google's keys is blocking I/O), before the
body is read; a ``Content-Length`` over the limit is refused unread, and a chunked body is
streamed and cut off at the verifier's limit. A push route that also declares a body parameter
is refused when it is declared (FastAPI would read the body before the dependency runs); after
the dependency, ``await request.body()`` returns the verified body.

Handler results: the route's ``status_code`` is the answer, unless the handler returns a
``Response`` of its own or sets ``response.status_code``; whichever status results must be an
acknowledging one (200, 201, 202, 204; 102 is answered 202) or a 4xx/5xx. The dependency checks
the route before the handler runs: a route that is not a :class:`PushRoute`, or whose
``status_code`` Pub/Sub would not read as an acknowledgement, is answered 500 and logged, and its
handler is not called. :class:`PushRoute` checks the response after the handler: any other
status (a 203, a redirect, also from Starlette's ``HTTPException`` raised by the handler or in
its stream) is answered 500 and logged, so Pub/Sub redelivers; a
``StreamingResponse`` is run to its end before the status is sent (an exception in it is a 500),
so the acknowledgement never precedes the work. Background tasks still run after the answer, as
FastAPI defines them: a failure there is not redelivered.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.exception_handlers import http_exception_handler, request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse, StreamingResponse
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from pushguard.receiver.ack import ACK_STATUSES
from pushguard.receiver.envelope import PushMessage
from pushguard.receiver.errors import PushRejected, announced_length
from pushguard.receiver.http import (
    FINAL_ACK_STATUSES,
    PushResponse,
    final_status,
    handler_bug,
    handler_failed,
    rejection_response,
    route_bug,
)
from pushguard.receiver.verifier import PushVerifier

_VERIFIED = "pushguard.receiver.verified"
"""ASGI scope key the dependency sets on a verified push, for :class:`PushRoute` to check."""

_REJECTED = "pushguard.receiver.rejected"
"""ASGI scope key holding the dependency's rejection, which :class:`PushRoute` answers."""


class PushRoute(APIRoute):
    """A FastAPI route class that holds a push handler's response to the acknowledgement rule.

    Use it for every route with a :class:`PushDependency`: ``app.router.route_class = PushRoute``
    before declaring routes, or ``APIRouter(route_class=PushRoute)``. Routes without the
    dependency are left as they are. For a verified push, the response the route produced:

    - with an acknowledging status (200, 201, 202, 204) or a 4xx/5xx is sent (102 as 202);
    - with any other status (also from an ``HTTPException`` the handler raises) is replaced by
      a 500, logged (the status, never the content);
    - a ``StreamingResponse`` is run to its end first and sent as a plain response, so the
      status never precedes the work;
    - an exception (from the handler, its dependencies or its stream) is answered here, never by
      the app's exception handlers, which could make it a 200: see :func:`_answer_raised`.
    """

    def __init__(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
        """FastAPI's route, refused at start-up when it would read the body before the token.

        Raises:
            TypeError: the route has a :class:`PushDependency` and also a body parameter
                (``Body``, ``Form``, ``File``, a pydantic model): FastAPI reads and parses the
                whole body before any dependency runs, so an unauthenticated client could make
                it read (and hold in memory) any body.
        """
        super().__init__(path, endpoint, **options)
        if self.body_field is not None and _has_push_dependency(self.dependant):
            names = ", ".join(repr(name) for name in _body_parameters(self.dependant))
            raise TypeError(
                f"push route {path!r}: the body parameter {names} makes FastAPI read "
                "and parse the whole body before PushDependency checks the token; remove it. "
                "The verified message is the PushMessage; for the raw envelope, declare "
                "`request: Request` and `await request.body()` in the handler (after the "
                "dependency it is the verified body, read once)"
            )

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """FastAPI's handler for this route, followed by the check above."""
        handle = super().get_route_handler()

        async def push_route_handler(request: Request) -> Response:
            try:
                response = await handle(request)
                if request.scope.get(_VERIFIED) is not True:
                    return response
                return await _checked(response)
            except Exception as raised:
                return await _answer_raised(request, raised)

        return push_route_handler


async def _answer_raised(request: Request, raised: Exception) -> Response:
    """The answer to an exception on a push route, made here: the app's exception handlers could
    otherwise turn it into a 200. A rejection by the dependency is its own answer; after
    verification, a 4xx/5xx ``HTTPException`` and a validation error are answered as FastAPI's
    default handlers answer them, and anything else (another status, any other exception, also
    from a streamed response) is a 500, logged. Requests the dependency never saw re-raise."""
    rejected = request.scope.get(_REJECTED)
    if isinstance(rejected, PushResponse):
        return PlainTextResponse(rejected.body, rejected.status, headers=rejected.headers or None)
    if request.scope.get(_VERIFIED) is not True:
        raise raised
    if isinstance(raised, StarletteHTTPException):
        status = int(raised.status_code)
        if 400 <= status <= 599:
            return await http_exception_handler(request, raised)
        bug = handler_bug(f"an HTTPException with status {status}")
    elif isinstance(raised, RequestValidationError):
        return await request_validation_exception_handler(request, raised)
    else:
        bug = handler_failed(raised)
    return PlainTextResponse(bug.body, status_code=bug.status)


def _body_parameters(dependant: Dependant) -> list[str]:
    """The names of the body parameters of a route and its sub-dependencies, as declared."""
    names = [field.name for field in dependant.body_params]
    for sub in dependant.dependencies:
        names.extend(_body_parameters(sub))
    return names


def _has_push_dependency(dependant: Dependant) -> bool:
    return any(
        isinstance(sub.call, PushDependency) or _has_push_dependency(sub)
        for sub in dependant.dependencies
    )


def _answerable(status: int) -> bool:
    return status in ACK_STATUSES or 400 <= status <= 599


async def _checked(response: Response) -> Response:
    status = int(response.status_code)
    if not _answerable(status):
        bug = handler_bug(f"status {status}")
        return PlainTextResponse(bug.body, status_code=bug.status)
    if not isinstance(response, StreamingResponse) and status != 102:
        return response
    body = bytearray()
    if isinstance(response, StreamingResponse):
        async for chunk in response.body_iterator:  # the handler's work, before any status
            body += chunk.encode(response.charset) if isinstance(chunk, str) else bytes(chunk)
    status = final_status(status)
    answer = Response(
        b"" if status == 204 else bytes(body), status_code=status, background=response.background
    )
    skip = {b"content-length"} if status == 204 else {b"content-length", b"content-type"}
    answer.raw_headers[:0] = [(k, v) for k, v in response.raw_headers if k not in skip]
    return answer


class PushDependency:
    """A FastAPI dependency (use with ``Depends``) returning a :class:`PushMessage`.

    A rejection becomes ``HTTPException(status, reason)`` with the RFC 6750 challenge header.
    The route must be a :class:`PushRoute` (else 500 before the handler, logged).
    """

    def __init__(self, verifier: PushVerifier) -> None:
        self.verifier = verifier

    async def __call__(self, request: Request) -> PushMessage:
        """Verify the request (FastAPI calls this)."""
        route = request.scope.get("route")
        if not isinstance(route, PushRoute):
            bug = route_bug(
                "its route class is not PushRoute (app.router.route_class = PushRoute, "
                "or APIRouter(route_class=PushRoute))"
            )
            raise HTTPException(bug.status, detail=bug.body)
        if route.status_code is not None and route.status_code not in FINAL_ACK_STATUSES:
            bug = route_bug(f"route status_code {int(route.status_code)}")
            request.scope[_REJECTED] = bug
            raise HTTPException(bug.status, detail=bug.body)
        try:
            token = await run_in_threadpool(self.verifier.verify_token, request.headers)
            limit = self.verifier.max_body_bytes
            announced_length(request.headers.get("content-length"), limit)
            body = bytearray()
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    break
            message = self.verifier.parse_body(request.headers, bytes(body), token)
            request._body = bytes(body)  # Starlette's own cache: request.body() returns it
        except PushRejected as rejection:
            response = rejection_response(rejection)
            request.scope[_REJECTED] = response  # PushRoute answers it, whatever the app's handlers
            raise HTTPException(
                response.status, detail=response.body, headers=response.headers or None
            ) from None
        request.scope[_VERIFIED] = True
        return message
