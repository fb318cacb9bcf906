"""FastAPI adapter: a dependency that yields the verified message or answers the rejection.

Example::

    app = FastAPI()
    verified_push = PushDependency(PushVerifier(audience=AUDIENCE,
                                                service_account_email=PUSH_AUTH_EMAIL))

    @app.post("/push", status_code=204)
    async def on_order(message: PushMessage = Depends(verified_push)) -> None:
        await process(message.data)

The token is checked in a worker thread (fetching Google's keys is blocking I/O), before the
body is read; the body is streamed and cut off at the verifier's limit.
"""

from __future__ import annotations

from fastapi import HTTPException, Request
from starlette.concurrency import run_in_threadpool

from pushguard.receiver.envelope import PushMessage
from pushguard.receiver.errors import PushRejected
from pushguard.receiver.http import rejection_response
from pushguard.receiver.verifier import PushVerifier


class PushDependency:
    """A FastAPI dependency (use with ``Depends``) returning a :class:`PushMessage`.

    A rejection becomes ``HTTPException(status, reason)`` with the RFC 6750 challenge header.
    """

    def __init__(self, verifier: PushVerifier) -> None:
        self.verifier = verifier

    async def __call__(self, request: Request) -> PushMessage:
        """Verify the request (FastAPI calls this)."""
        try:
            token = await run_in_threadpool(self.verifier.verify_token, request.headers)
            body = bytearray()
            async for chunk in request.stream():
                body += chunk
                if len(body) > self.verifier.max_body_bytes:
                    break
            return self.verifier.parse_body(request.headers, bytes(body), token)
        except PushRejected as rejection:
            response = rejection_response(rejection)
            raise HTTPException(
                response.status, detail=response.body, headers=response.headers or None
            ) from None
