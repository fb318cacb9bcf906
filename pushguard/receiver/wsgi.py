"""The body guard of the WSGI adapters (Flask, Functions Framework): nothing reads more of the
request body than the verifier allows, before or after the view.

A WSGI application reads the body from ``environ["wsgi.input"]`` (PEP 3333). The adapters check
the token on the headers first, then read at most ``max_body_bytes + 1`` bytes themselves, and
finally put what they read (nothing, for a rejected token) in place of the WSGI input, with a
matching ``CONTENT_LENGTH``. Hooks that run after the view and read the whole body, such as the
Functions Framework's ``after_request`` hook ``read_request`` (which calls ``get_data()`` on
every non-streamed response), then read those bytes and never the client's socket: a request
without a valid token costs its headers, and one that announces a body and withholds it gets its
answer at once.
"""

from __future__ import annotations

import contextlib
import io
import socket
from typing import Any

from werkzeug.wsgi import get_input_stream

from pushguard.receiver.errors import announced_length

CHUNK_BYTES = 64 * 1024
"""Bytes asked of the WSGI input per read."""


def read_body(environ: dict[str, Any], limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the body: enough to tell a body over ``limit``.

    A ``Content-Length`` over ``limit`` is refused before reading. The body is read in chunks
    until ``limit + 1`` bytes or its end (a single ``read(n)`` may return fewer bytes); werkzeug's
    ``get_input_stream`` stops at ``Content-Length`` and handles chunked requests
    (``wsgi.input_terminated``).

    Raises:
        PushRejected: 413 when the announced length is over ``limit``, 400 when it is not a
            number.
    """
    announced_length(environ.get("CONTENT_LENGTH"), limit)
    stream = get_input_stream(environ, safe_fallback=True)
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = stream.read(min(CHUNK_BYTES, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def seal_body(environ: dict[str, Any], body: bytes = b"", *, unread: bool = False) -> bool:
    """Replace the WSGI input with ``body`` (what the adapter read), so that nothing after the
    view reads the client's socket.

    With ``unread`` (the request was rejected and its body may still be on the way), a body
    that has already arrived whole (at most :data:`BUFFERED_DRAIN_BYTES`, taken without waiting)
    is read off, so the connection stays usable; else the connection is ended after the response
    where the server allows it: gunicorn (which the Functions Framework runs) would otherwise
    drain the unread body after the response to keep the connection alive, holding a worker
    thread for up to 5 s per request whose client withholds it. Its plain HTTP/1.x socket
    (``environ["gunicorn.socket"]``) is shut for reading; the response is still written, and the
    drain ends at once. gunicorn still says ``Connection: keep-alive`` on that response: it
    drops an application's ``Connection`` header (hop-by-hop).

    Returns:
        whether the connection was shut for reading.
    """
    connection = environ.get("gunicorn.socket")
    shut = (
        unread
        and type(connection) is socket.socket  # not TLS: shutting a TLS socket ends its writes
        and environ.get("SERVER_PROTOCOL") in ("HTTP/1.0", "HTTP/1.1")  # not a shared h2 one
        and not _drain_buffered(environ, connection)
    )
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ.pop("wsgi.input_terminated", None)
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    if shut:
        with contextlib.suppress(OSError):  # already gone: nothing left to drain
            connection.shutdown(socket.SHUT_RD)  # type: ignore[union-attr]
    return bool(shut)


BUFFERED_DRAIN_BYTES = 64 * 1024
"""The most of a rejected request's body read off to keep its connection: only bytes already at
hand (the socket is read without waiting), so an unauthenticated client costs no wait."""


def _drain_buffered(environ: dict[str, Any], connection: socket.socket) -> bool:
    """Whether the rest of the request's body was already at hand and is now read off the
    server's input, without waiting on the socket (its timeout is 0 meanwhile)."""
    stream = get_input_stream(environ, safe_fallback=True)
    timeout = connection.gettimeout()
    taken = 0
    try:
        connection.settimeout(0.0)
        while taken <= BUFFERED_DRAIN_BYTES:
            chunk = stream.read(min(CHUNK_BYTES, BUFFERED_DRAIN_BYTES + 1 - taken))
            if not chunk:
                return True
            taken += len(chunk)
        return False
    except OSError:  # nothing more at hand (BlockingIOError), or the client is gone
        return False
    finally:
        with contextlib.suppress(OSError):
            connection.settimeout(timeout)
