"""No shared secret in the push endpoint's query string.

An old pattern verifies pushes with a secret query parameter (``?token=...``). The secret is then
stored in the subscription's configuration, readable by everyone with ``pubsub.subscriptions.get``,
written to request logs at the endpoint and at every proxy, and never rotated. OIDC authentication
replaces it (https://cloud.google.com/pubsub/docs/authenticate-push-subscriptions). Parameter names
are compared case-insensitively, ignoring ``-`` and ``_``; a dotted name is also judged by its last
part (``hub.verify_token`` as ``verify_token``); the value is never repeated in a message.

Besides the generic names (``token``, ``key``, ``secret``, ``password``, ``signature`` and their
variants), the names that well-known endpoints take a secret in:

- ``key``, ``api_key`` and ``x-api-key``: API keys, which clients "embed [...] in every call to
  your API as a query parameter or in a request header"
  (https://cloud.google.com/api-gateway/docs/authenticate-api-keys): Cloud Endpoints reads the
  ``key`` query parameter
  (https://cloud.google.com/endpoints/docs/openapi/restricting-api-access-with-api-keys) or the
  ``x-api-key`` header (as its OpenAPI docs say, quoted in
  https://github.com/cloudendpoints/endpoints-java/issues/109), a name then also put in URLs;
- ``code``: an Azure Functions access key ("provided in the URL using the ``?code=`` query string",
  https://learn.microsoft.com/azure/azure-functions/function-keys-how-to#use-access-keys);
- ``hub.verify_token``: the verification secret of Meta's (and WebSub-style) webhooks, sent as a
  query parameter (https://developers.facebook.com/docs/graph-api/webhooks/getting-started).

Eventarc triggers (the pack, the preview and analyze): the same holds for a trigger's HTTP
endpoint destination (``destination.httpEndpoint.uri``,
https://cloud.google.com/eventarc/docs/reference/rest/v1/projects.locations.triggers), a URL
stored in the trigger's configuration and sent on every delivery. A trigger with another
destination has no URL of its own, so there is nothing here to judge (``push-endpoint-https``
lists it as not checked: Google manages its endpoint).
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qsl, urlsplit

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.endpoint import EndpointError, parse_endpoint
from pushguard.rules.facts import SubscriptionFacts

SECRET_PARAMETER_NAMES = frozenset(
    {
        "token", "accesstoken", "authtoken", "idtoken", "bearer", "jwt",
        "key", "apikey", "xapikey", "secret", "clientsecret", "sharedsecret", "webhooksecret",
        "password", "passwd", "pwd", "pass", "auth", "authorization",
        "sig", "signature", "credential", "credentials",
        "code", "verifytoken",
    }
)  # fmt: skip
"""Normalised query parameter names that carry a shared secret."""


def _normalise(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")


def is_secret_name(name: str) -> bool:
    """True when a query parameter's name says it carries a secret: its normalised form, or that
    of its last dotted part, is one of :data:`SECRET_PARAMETER_NAMES`."""
    normalised = _normalise(name)
    return (
        normalised in SECRET_PARAMETER_NAMES
        or normalised.rpartition(".")[2] in SECRET_PARAMETER_NAMES
    )


def _query_names(endpoint: str) -> set[str]:
    """The query parameter names of a known ``endpoint``."""
    try:
        query = parse_endpoint(endpoint).query
    except EndpointError:
        # push-endpoint-https reports the endpoint; a token in it is still a token to rotate.
        try:
            query = urlsplit(endpoint).query
        except ValueError:
            return set()
    return {name for name, _ in parse_qsl(query, keep_blank_values=True)} if query else set()


def known_query_names(prefix: str) -> set[str]:
    """The query parameter names that the known start ``prefix`` of an endpoint already holds
    whole (what follows is not known yet): every ``&``-separated part after the first ``?``
    (up to a ``#``) except the last, and the last too once its ``=`` is known. ``"https://h/?
    token=" + <unknown>`` holds ``token``; ``"https://h/?tok" + <unknown>`` holds no name (the
    rest of it may follow). Names are decoded as :func:`urllib.parse.parse_qsl` decodes them."""
    query = prefix.partition("?")[2] if "?" in prefix.partition("#")[0] else ""
    query, fragment_started, _ = query.partition("#")
    parts = query.split("&")
    if not fragment_started and "=" not in parts[-1]:
        parts = parts[:-1]
    complete = "&".join(part if "=" in part else part + "=" for part in parts if part)
    return {name for name, _ in parse_qsl(complete, keep_blank_values=True)}


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when a query parameter's name says it carries a secret. An endpoint not known
    yet is judged by the names its known start already holds whole (:func:`known_query_names`)."""
    if "push_endpoint" in facts.unknown:
        names = known_query_names(facts.push_endpoint_prefix)
        known = " (known at preview; only the rest of the endpoint is not known yet)"
    elif facts.push_endpoint:
        names, known = _query_names(facts.push_endpoint), ""
    else:
        return
    secret_names = sorted(name for name in names if is_secret_name(name))
    if secret_names:
        yield Result.violation(
            f"The {facts.endpoint_noun()} carries a shared secret in its query string "
            f"(parameter {', '.join(secret_names)}){known}; use OIDC authentication instead.",
            "push_endpoint",
            parameters=",".join(secret_names),
        )


RULE = Rule(
    id="push-no-query-token",
    title="No shared-secret token in the push endpoint's query string",
    default_level=EnforcementLevel.ADVISORY,
    severity="medium",
    remediation=(
        "Remove the secret from the URL, rotate it, and authenticate pushes with OIDC: set a "
        "push-auth service account and verify the token at the endpoint (pushguard.receiver)."
    ),
    check=check,
    kinds=("subscription", "eventarc-trigger"),
)
