"""Sending a push to an endpoint on this machine, and redelivering it as Pub/Sub would.

- **Loopback only.** The kit's tokens are trusted by no deployed endpoint, and a test push has
  no business leaving the machine: :func:`resolve_target` resolves the URL's host, requires
  every address to be a loopback address (unless ``allow_remote``), and the request goes to the
  checked address, so a DNS answer cannot change between the check and the connection.
- **Ack or nack.** Pub/Sub acknowledges 102, 200, 201, 202 and 204 and redelivers on any other
  status (https://cloud.google.com/pubsub/docs/push#receive_push;
  :data:`pushguard.receiver.ack.ACK_STATUSES`).
- **Redelivery.** A subscription's retry policy sets a minimum and a maximum backoff (0-600 s;
  defaults 10 s and 600 s) and the delay between deliveries grows exponentially from the one
  to the other (``RetryPolicy``,
  https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions#retrypolicy).
  The factor is not documented; :func:`retry_delays` doubles, and says so. Pub/Sub applies the
  policy on a best-effort basis, so real delays vary.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pushguard.receiver.ack import is_ack
from pushguard.receiver.testing.push import PushRequest

MAX_BACKOFF = 600.0
"""The largest backoff a retry policy takes, in seconds."""

Resolve = Callable[..., list[tuple[Any, ...]]]
"""``socket.getaddrinfo``'s signature: injectable for tests."""


class RemoteRefusedError(ValueError):
    """The URL is not on this machine (some address of its host is not loopback)."""


class DeliveryFailedError(OSError):
    """No HTTP answer: the connection was refused, timed out or broke."""


@dataclass(frozen=True)
class Target:
    """Where a push goes: the checked address to connect to, and the URL's own parts.

    Attributes:
        address: the IP address connected to (checked before any connection).
        port: the TCP port.
        host_header: the ``Host`` header (the URL's host and port, as written).
        path: the path and query string.
        loopback: whether every address of the host is a loopback address.
    """

    address: str
    port: int
    host_header: str
    path: str
    loopback: bool


def _is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def resolve_target(
    url: str, *, allow_remote: bool = False, resolve: Resolve | None = None
) -> Target:
    """Check ``url`` and resolve its host, before any connection.

    Args:
        url: ``http://HOST[:PORT][/PATH]``.
        allow_remote: accept a host with non-loopback addresses.
        resolve: ``socket.getaddrinfo`` by default (looked up at each call; injectable).

    Raises:
        ValueError: not an ``http://`` URL with a host (the kit's tokens are trusted by no
            deployed endpoint, so there is no TLS endpoint to try them on), or the host does
            not resolve.
        RemoteRefusedError: some address of the host is not loopback and ``allow_remote`` is off.
    """
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"URL: http://HOST[:PORT]/PATH is required, got {url!r}")
    try:
        port = parts.port or 80
    except ValueError:
        raise ValueError(f"URL: the port of {url!r} is not a number from 0 to 65535") from None
    try:
        found = (resolve or socket.getaddrinfo)(parts.hostname, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ValueError(f"URL: the host {parts.hostname!r} does not resolve ({exc})") from None
    addresses = [str(entry[4][0]) for entry in found]
    if not addresses:
        raise ValueError(f"URL: the host {parts.hostname!r} has no address")
    remote = sorted({a for a in addresses if not _is_loopback(a)})
    if remote and not allow_remote:
        raise RemoteRefusedError(
            f"URL: {parts.hostname!r} is not this machine ({', '.join(remote)} is not a "
            "loopback address); pushguard push sends to loopback addresses only, unless "
            "--allow-remote"
        )
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(addresses[0], port, parts.netloc.rpartition("@")[2], path, not remote)


def deliver(target: Target, request: PushRequest, *, timeout: float) -> int:
    """POST ``request`` to ``target``'s checked address; the HTTP status of the answer.

    Raises:
        DeliveryFailedError: refused, timed out, reset, or no valid HTTP answer (the cause named).
    """
    connection = http.client.HTTPConnection(target.address, target.port, timeout=timeout)
    try:
        connection.request(
            "POST",
            target.path,
            body=request.body,
            headers={"Host": target.host_header, **request.headers},
        )
        response = connection.getresponse()
        response.read()
        return response.status
    except TimeoutError:
        raise DeliveryFailedError(f"no answer within {timeout:g} s (timed out)") from None
    except (OSError, http.client.HTTPException) as exc:
        raise DeliveryFailedError(f"{type(exc).__name__}: {exc}") from None
    finally:
        connection.close()


def retry_delays(retries: int, minimum: float, maximum: float) -> list[float]:
    """Seconds to wait before each redelivery: ``minimum``, doubling, capped at ``maximum``.

    Raises:
        ValueError: ``retries`` below 0, or backoffs outside 0-600 s or ``minimum > maximum``.
    """
    if retries < 0:
        raise ValueError(f"retry: 0 or more redeliveries, got {retries}")
    if not 0 <= minimum <= maximum <= MAX_BACKOFF:
        raise ValueError(
            "backoff: 0 <= minimum <= maximum <= 600 seconds is required (RetryPolicy), got "
            f"minimum {minimum:g} and maximum {maximum:g}"
        )
    return [min(minimum * 2**step, maximum) for step in range(retries)]


@dataclass(frozen=True)
class Attempt:
    """One delivery: its number (1 first), the seconds waited before it, the status, and
    ``"ack"`` or ``"nack"``."""

    attempt: int
    delay: float
    status: int
    outcome: str

    def as_json(self) -> dict[str, Any]:
        """``{"attempt", "delay", "status", "outcome"}``."""
        return {
            "attempt": self.attempt,
            "delay": self.delay,
            "status": self.status,
            "outcome": self.outcome,
        }


def push_until_ack(
    target: Target,
    make_request: Callable[[int], PushRequest],
    *,
    retries: int = 0,
    minimum_backoff: float = 10.0,
    maximum_backoff: float = MAX_BACKOFF,
    timeout: float = 10.0,
    sleep: Callable[[float], None] = time.sleep,
    on_attempt: Callable[[Attempt], None] = lambda attempt: None,
) -> list[Attempt]:
    """Deliver, and redeliver after each nack as the retry policy says, until an ack or
    ``retries`` redeliveries.

    Args:
        target: from :func:`resolve_target`.
        make_request: the request for delivery ``n`` (1 first): the same message each time,
            a fresh token, ``deliveryAttempt`` ``n`` when the subscription has a dead-letter
            policy.
        retries: redeliveries after the first delivery.
        minimum_backoff, maximum_backoff: the retry policy, seconds.
        timeout: seconds to wait for each answer.
        sleep: waits between deliveries (injectable for tests).
        on_attempt: called after each delivery (to print it at once).

    Raises:
        ValueError: as :func:`retry_delays`.
        DeliveryFailedError: as :func:`deliver`; the attempts so far were passed to ``on_attempt``.
    """
    delays = [0.0, *retry_delays(retries, minimum_backoff, maximum_backoff)]
    attempts: list[Attempt] = []
    for number, delay in enumerate(delays, start=1):
        if delay:
            sleep(delay)
        status = deliver(target, make_request(number), timeout=timeout)
        attempt = Attempt(number, delay, status, "ack" if is_ack(status) else "nack")
        attempts.append(attempt)
        on_attempt(attempt)
        if attempt.outcome == "ack":
            break
    return attempts
