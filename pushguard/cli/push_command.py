"""``pushguard push URL``: a signed push, as Pub/Sub sends it, to an endpoint on this machine.

The token is signed by the signed-push test kit's local issuer (:mod:`pushguard.receiver.testing`),
kept in ``--issuer-key-dir``; the development server trusts it with
``PushVerifier(..., keys=local_key_source(DIR))`` (docs/receiver-local.md). The command prints
each delivery's status and whether Pub/Sub would take it as an acknowledgement, and with
``--retry N`` redelivers a nacked message as the subscription's retry policy would.

Exit codes: 0 the message was acknowledged, 1 it was nacked on every delivery, 2 bad usage
(what Pub/Sub would refuse to publish included: an attribute key starting with ``goog``, data
over 10 MB), a key folder that is not as the kit leaves it, a URL that is not this machine
(refused before any connection), no HTTP answer (connection refused, timed out), or an
interrupt (Ctrl-C, during a retry wait too), the cause on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from pushguard.cli.extras import require_extra
from pushguard.rules.endpoint import EndpointError, cloud_run_default_url_form, parse_endpoint

DEFAULT_PUSH_AUTH_ACCOUNT = "local-push-auth@pushguard-local.iam.gserviceaccount.com"
"""The token's ``email`` unless ``--push-auth-account`` is given."""


def component_audience(endpoint: str) -> str:
    """The audience the ``PushSubscription`` component gives a subscription whose push endpoint
    is ``endpoint`` and that sets no ``audience`` (:mod:`pushguard.components.audience`): the
    origin of a Cloud Run default URL (the service URL Cloud Run accepts), the function URL
    ``https://HOST/NAME`` of a 1st-gen function's ``cloudfunctions.net`` endpoint, else the
    endpoint itself (Pub/Sub's audience when none is set,
    https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions). A target with
    ``target.url`` or custom audiences gets that instead: pass ``--audience``."""
    try:
        parsed = parse_endpoint(endpoint)
    except EndpointError:
        return endpoint
    if cloud_run_default_url_form(parsed) is not None:
        return f"https://{parsed.host}"
    if parsed.scheme == "https" and parsed.host.endswith(".cloudfunctions.net"):
        name = urlsplit(endpoint).path.lstrip("/").split("/", 1)[0]
        return f"https://{parsed.host}/{name}" if name else endpoint
    return endpoint


def _fail(message: str) -> typer.Exit:
    typer.echo(f"pushguard push: error: {message}", err=True)
    return typer.Exit(2)


def _attributes(pairs: list[str]) -> dict[str, str]:
    attributes: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise _fail(f"--attribute: KEY=VALUE is required, got {pair!r}")
        if key in attributes:
            raise _fail(f"--attribute: {key!r} is given twice (a message has one value per key)")
        attributes[key] = value
    return attributes


def _data(data: str | None, data_file: Path | None, limit: int) -> bytes:
    """The message data; more than ``limit`` bytes is refused, a file read no further than
    ``limit + 1`` bytes (so ``/dev/zero`` is refused, not read to the end)."""
    if data is not None and data_file is not None:
        raise _fail("--data and --data-file: give one of them")
    if data_file is None:
        body = (data or "").encode("utf-8")
    else:
        try:
            with data_file.open("rb") as source:
                body = source.read(limit + 1)
        except OSError as exc:
            raise _fail(f"--data-file: {data_file} cannot be read ({exc.strerror})") from None
    if len(body) > limit:
        option = "--data" if data_file is None else f"--data-file: {data_file}"
        raise _fail(f"{option}: over Pub/Sub's message size limit of {limit} bytes (10 MB)")
    return body


def _check_flags(
    *,
    unwrapped: bool,
    write_metadata: bool,
    dead_letter: bool,
    backoff: tuple[float, float],
    allow_remote: bool,
) -> None:
    """Refuse flags that do not go together (exit 2); warn about ``--allow-remote``."""
    if write_metadata and not unwrapped:
        raise _fail("--write-metadata: only with --unwrapped (noWrapper.writeMetadata)")
    if dead_letter and unwrapped:
        raise _fail("--dead-letter: only a wrapped push carries deliveryAttempt")
    if backoff[0] > backoff[1]:
        raise _fail("--minimum-backoff: must not exceed --maximum-backoff")
    if allow_remote:
        typer.echo(
            "pushguard push: warning: --allow-remote: the push may leave this machine, with a "
            "token no deployed endpoint should trust",
            err=True,
        )


def _show(attempt: Any, *, as_json: bool) -> None:
    """One delivery: a JSON object (``attempt``, ``delay``, ``outcome``, ``status``) or a line."""
    if as_json:
        typer.echo(json.dumps(attempt.as_json(), sort_keys=True))
        return
    after = f" (after {attempt.delay:g} s)" if attempt.delay else ""
    typer.echo(f"attempt {attempt.attempt}: HTTP {attempt.status}: {attempt.outcome}{after}")


def push_command(  # noqa: PLR0917 - typer maps parameters to options
    url: Annotated[
        str,
        typer.Argument(
            metavar="URL", help="The endpoint: http://127.0.0.1:PORT/PATH (loopback only)."
        ),
    ],
    data: Annotated[
        str | None, typer.Option("--data", help="The message data, as UTF-8 text.")
    ] = None,
    data_file: Annotated[
        Path | None, typer.Option("--data-file", help="The message data: a file's bytes.")
    ] = None,
    attribute: Annotated[
        list[str] | None,
        typer.Option("--attribute", metavar="KEY=VALUE", help="A message attribute (repeatable)."),
    ] = None,
    ordering_key: Annotated[
        str | None, typer.Option("--ordering-key", help="The message's ordering key.")
    ] = None,
    unwrapped: Annotated[
        bool,
        typer.Option("--unwrapped", help="The subscription sets noWrapper: the body is the data."),
    ] = False,
    write_metadata: Annotated[
        bool,
        typer.Option(
            "--write-metadata",
            help="With --unwrapped: metadata as x-goog-pubsub-* headers, attributes as headers.",
        ),
    ] = False,
    subscription: Annotated[
        str | None,
        typer.Option("--subscription", help="projects/P/subscriptions/S the push names."),
    ] = None,
    dead_letter: Annotated[
        bool,
        typer.Option(
            "--dead-letter",
            help="The subscription has a dead-letter policy: the envelope carries "
            "deliveryAttempt (1, 2, ...).",
        ),
    ] = False,
    audience: Annotated[
        str | None,
        typer.Option(
            "--audience",
            help="The token's aud: the component's `audience` output (default: derived from "
            "--endpoint as the component derives it).",
        ),
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint",
            help="The subscription's push endpoint as deployed (default: URL), for the default "
            "audience: a Cloud Run URL's origin, a 1st-gen function's URL, else the endpoint.",
        ),
    ] = None,
    push_auth_account: Annotated[
        str,
        typer.Option(
            "--push-auth-account",
            help="The token's email: the component's `push_auth_service_account_email` output.",
        ),
    ] = DEFAULT_PUSH_AUTH_ACCOUNT,
    issuer_key_dir: Annotated[
        Path | None,
        typer.Option(
            "--issuer-key-dir",
            help="The local issuer's folder (created on first use; the receiver trusts it with "
            "local_key_source(DIR)). Default: ~/.cache/pushguard/local-issuer.",
        ),
    ] = None,
    retry: Annotated[
        int,
        typer.Option("--retry", min=0, max=100, help="Redeliveries after a nack (0-100)."),
    ] = 0,
    minimum_backoff: Annotated[
        float,
        typer.Option("--minimum-backoff", min=0, max=600, help="Retry policy: minimum backoff, s."),
    ] = 10.0,
    maximum_backoff: Annotated[
        float,
        typer.Option("--maximum-backoff", min=0, max=600, help="Retry policy: maximum backoff, s."),
    ] = 600.0,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, max=600, help="Seconds to wait for an answer.")
    ] = 10.0,
    allow_remote: Annotated[
        bool,
        typer.Option("--allow-remote", help="Also send to a host that is not this machine."),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object per delivery (status, outcome).")
    ] = False,
) -> None:
    """Send a signed push, as Pub/Sub sends it, to an endpoint on this machine; print each
    delivery's status and whether Pub/Sub would take it as an ack or a nack.

    Exit codes: 0 acknowledged, 1 nacked on every delivery (--retry N redelivers with the
    subscription's backoff), 2 bad usage (an attribute Pub/Sub refuses, data over 10 MB, a key
    folder that is not as the kit leaves it), a URL that is not this machine (refused before any
    connection), no HTTP answer (connection refused, timed out) or Ctrl-C.
    """
    require_extra("push", "receiver")
    from pushguard.receiver import testing as kit  # noqa: PLC0415 - needs the receiver extra

    body = _data(data, data_file, kit.MAX_DATA_BYTES)
    attributes = _attributes(attribute or [])
    _check_flags(
        unwrapped=unwrapped,
        write_metadata=write_metadata,
        dead_letter=dead_letter,
        backoff=(minimum_backoff, maximum_backoff),
        allow_remote=allow_remote,
    )
    try:
        target = kit.resolve_target(url, allow_remote=allow_remote)
    except (ValueError, OSError) as exc:
        raise _fail(str(exc)) from None
    try:
        issuer = kit.load_or_create_issuer(issuer_key_dir)
    except ValueError as exc:
        raise _fail(f"--issuer-key-dir: {exc}") from None
    except OSError as exc:
        raise _fail(f"--issuer-key-dir: {exc.filename or issuer_key_dir}: {exc.strerror}") from None
    options: dict[str, Any] = {
        "audience": audience or component_audience(endpoint or url),
        "service_account_email": push_auth_account,
        "data": body,
        "attributes": attributes,
        "ordering_key": ordering_key,
        "subscription": subscription or kit.DEFAULT_SUBSCRIPTION,
        "message_id": kit.new_message_id(),
        "unwrapped": unwrapped,
        "write_metadata": write_metadata,
    }
    try:
        kit.push_request(issuer, **options)  # checks the options once, before any connection
    except ValueError as exc:
        raise _fail(str(exc)) from None

    def request(number: int) -> kit.PushRequest:
        return kit.push_request(issuer, **options, delivery_attempt=number if dead_letter else None)

    try:
        attempts = kit.push_until_ack(
            target,
            request,
            retries=retry,
            minimum_backoff=minimum_backoff,
            maximum_backoff=maximum_backoff,
            timeout=timeout,
            on_attempt=lambda attempt: _show(attempt, as_json=as_json),
        )
    except kit.DeliveryFailedError as exc:
        raise _fail(f"no answer from {url}: {exc}") from None
    except KeyboardInterrupt:
        raise _fail("interrupted before an acknowledgement") from None
    acked = attempts[-1].outcome == "ack"
    if not as_json:
        verdict = "acknowledged" if acked else "nacked: Pub/Sub would redeliver it"
        typer.echo(f"{verdict} ({len(attempts)} deliver{'y' if len(attempts) == 1 else 'ies'})")
    raise typer.Exit(0 if acked else 1)
