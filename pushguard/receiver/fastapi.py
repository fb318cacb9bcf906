"""FastAPI adapter: a dependency that yields the verified message or answers the rejection.

Example::

    app = FastAPI()
    verified_push = PushDependency(PushVerifier(audience=AUDIENCE,
                                                service_account_email=PUSH_AUTH_EMAIL))

    @app.post("/push", status_code=204)
    async def on_order(message: PushMessage = Depends(verified_push)) -> None:
        await process(message.data)

The token is checked in a worker thread (fetching Google's keys is blocking I/O), before the
body is read; a ``Content-Length`` over the limit is refused unread, and a chunked body is
streamed and cut off at the verifier's limit.

Handler results follow FastAPI's conventions: the route's ``status_code`` is the answer. The
dependency checks it before the handler runs: a route whose status Pub/Sub would not read as an
acknowledgement (anything but 200, 201, 202, 204; 102 cannot be a final status) is answered 500,
logged, and its handler is not called. A ``Response`` the handler returns itself is FastAPI's to
send, as it is.
"""

from __future__ import annotations

from fastapi import HTTPException, Request
from starlette.concurrency import run_in_threadpool

from pushguard.receiver.envelope import PushMessage
from pushguard.receiver.errors import PushRejected, body_too_large
from pushguard.receiver.http import FINAL_ACK_STATUSES, handler_bug, rejection_response
from pushguard.receiver.verifier import PushVerifier


class PushDependency:
    """A FastAPI dependency (use with ``Depends``) returning a :class:`PushMessage`.

    A rejection becomes ``HTTPException(status, reason)`` with the RFC 6750 challenge header.
    """

    def __init__(self, verifier: PushVerifier) -> None:
        self.verifier = verifier

    async def __call__(self, request: Request) -> PushMessage:
        """Verify the request (FastAPI calls this)."""
        route_status = getattr(request.scope.get("route"), "status_code", None)
        if route_status is not None and route_status not in FINAL_ACK_STATUSES:
            bug = handler_bug(f"route status_code {route_status}")
            raise HTTPException(bug.status, detail=bug.body)
        try:
            token = await run_in_threadpool(self.verifier.verify_token, request.headers)
            limit = self.verifier.max_body_bytes
            announced = request.headers.get("content-length", "").strip()
            if announced.isdigit() and int(announced) > limit:
                raise body_too_large()
            body = bytearray()
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    break
            return self.verifier.parse_body(request.headers, bytes(body), token)
        except PushRejected as rejection:
            response = rejection_response(rejection)
            raise HTTPException(
                response.status, detail=response.body, headers=response.headers or None
            ) from None
