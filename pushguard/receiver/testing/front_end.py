"""A stand-in for Cloud Run's front end, for tests on 127.0.0.1.

- :class:`CloudRunFrontEnd` plays Cloud Run's front end for a service that requires
  authentication (https://cloud.google.com/run/docs/authenticating/service-to-service): it checks
  the ID token in ``X-Serverless-Authorization`` or, when that header is absent,
  ``Authorization`` (the signature with the issuer's certificates, through google-auth; ``aud``
  against the service URL and its custom audiences,
  https://cloud.google.com/run/docs/configuring/custom-audiences; the ``email`` against the
  principals holding ``run.invoker``), answers 401/403 itself, and forwards the request to the
  container with the token's signature replaced by ``SIGNATURE_REMOVED_BY_GOOGLE``
  (https://cloud.google.com/run/docs/troubleshooting#signature-removed), or intact.
- :func:`cloud_run_environ` is the environment Cloud Run gives a service's container
  (https://cloud.google.com/run/docs/reference/container-contract#env-vars).
"""

from __future__ import annotations

import http.client
import http.server
import threading
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

from google.auth import jwt

from pushguard.receiver.testing.issuer import LocalIssuer
from pushguard.receiver.token import SIGNATURE_REMOVED

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
"""Headers a proxy does not forward (RFC 9110 section 7.6.1)."""


def strip_signature(token: str) -> str:
    """The token as Cloud Run's front end hands it to the container: its signature segment
    replaced by ``SIGNATURE_REMOVED_BY_GOOGLE``."""
    header, payload, _signature = token.split(".")
    return f"{header}.{payload}.{SIGNATURE_REMOVED}"


def cloud_run_environ(
    service: str = "orders", revision: str = "orders-00001-abc"
) -> dict[str, str]:
    """The variables Cloud Run sets in a service's container (``K_SERVICE``, ``K_REVISION``,
    ``K_CONFIGURATION``), to start a receiver as if it ran there."""
    return {"K_SERVICE": service, "K_REVISION": revision, "K_CONFIGURATION": service}


class CloudRunFrontEnd:
    """A stand-in for Cloud Run's front end, on 127.0.0.1, before a container at ``upstream``.

    Args:
        upstream: ``(host, port)`` of the container's server.
        issuer: whose certificates verify tokens (Google's, in the real front end).
        service_url: the service's URL, always an accepted audience.
        invokers: the ``email`` s of the principals holding ``run.invoker`` on the service.
        custom_audiences: further accepted audiences.
        strip: replace the checked token's signature with ``SIGNATURE_REMOVED_BY_GOOGLE`` before
            forwarding (the behaviour the troubleshooting page documents); ``False`` forwards it
            intact.
        leeway: seconds of clock skew allowed on ``exp`` and ``iat``.

    Use as a context manager; :attr:`url` is where clients send requests.
    """

    def __init__(
        self,
        upstream: tuple[str, int],
        *,
        issuer: LocalIssuer,
        service_url: str,
        invokers: Iterable[str],
        custom_audiences: Iterable[str] = (),
        strip: bool = True,
        leeway: float = 0.0,
    ) -> None:
        self.upstream = upstream
        self.certs: Mapping[str, str] = dict(issuer.certs)
        self.audiences = frozenset({service_url, *custom_audiences})
        self.invokers = frozenset(invokers)
        self.strip = strip
        self.leeway = leeway
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> CloudRunFrontEnd:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def admit(self, headers: Mapping[str, str]) -> tuple[int, str, dict[str, str]]:
        """Cloud Run's decision on a request's headers (lowercase names): ``(200, "", forwarded
        headers)`` to forward, or ``(401 or 403, reason, {})``."""
        name = (
            "x-serverless-authorization"
            if "x-serverless-authorization" in headers
            else ("authorization")
        )
        scheme, _, token = headers.get(name, "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return 401, "no bearer token", {}
        try:
            claims = jwt.decode(  # type: ignore[no-untyped-call]
                token, certs=self.certs, verify=True, clock_skew_in_seconds=int(self.leeway)
            )
        except (ValueError, KeyError) as refused:  # google-auth's verification errors
            return 401, f"invalid token: {type(refused).__name__}", {}
        if claims.get("aud") not in self.audiences:
            return 401, "the token's audience is not this service", {}
        if claims.get("email") not in self.invokers:
            return 403, "the principal lacks run.routes.invoke", {}
        forwarded = dict(headers)
        forwarded[name] = f"Bearer {strip_signature(token) if self.strip else token}"
        return 200, "", forwarded


def _handler_for(front: CloudRunFrontEnd) -> type[http.server.BaseHTTPRequestHandler]:
    class FrontEndHandler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            headers = {name.lower(): value for name, value in self.headers.items()}
            body = self.rfile.read(int(headers.get("content-length", "0") or "0"))
            status, reason, forwarded = front.admit(headers)
            if status != 200:
                self._answer(status, {"content-type": "text/plain"}, reason.encode())
                return
            upstream = http.client.HTTPConnection(*front.upstream, timeout=30)
            try:
                sent = {k: v for k, v in forwarded.items() if k not in HOP_BY_HOP}
                upstream.request(self.command, self.path, body=body, headers=sent)
                response = upstream.getresponse()
                answer = response.read()
                kept = {k.lower(): v for k, v in response.getheaders()}
            finally:
                upstream.close()
            self._answer(response.status, kept, answer)

        def _answer(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
            self.send_response(status)
            for name, value in headers.items():
                if name not in HOP_BY_HOP and name != "content-length":
                    self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: tests read statuses, not logs

    return FrontEndHandler
