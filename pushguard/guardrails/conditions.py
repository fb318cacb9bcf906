"""The CEL condition of each rule that the subscription resource decides, as the rule module
decides it (each builder cites the rule it follows). A condition is true where the rule finds a
violation: the constraint denies, the SHA module reports.

Every builder takes the rule's :class:`~pushguard.policy.settings.PackSettings` (its
``exemptEndpointPrefixes`` and so on) and returns the expression before exceptions and the
Google-managed guard are added (:mod:`pushguard.guardrails.compiler`).
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from pushguard.guardrails.cel import (
    AUD,
    EP,
    HAS_ACCOUNT,
    PUSH,
    R,
    all_of,
    any_of,
    matches,
    negate,
    re2_literal,
)
from pushguard.policy.settings import PackSettings
from pushguard.rules.push_no_query_token import SECRET_PARAMETER_NAMES

HTTPS: Final = r"^(?i:https)://"
"""The scheme the rule accepts, compared as ``parse_endpoint`` does (lower-cased)."""


def exempt_pattern(prefix: str) -> str:
    """An RE2 pattern true for every endpoint :func:`pushguard.rules.endpoint.matches_exempt_prefix`
    exempts under ``prefix``, and for a few more (never fewer): a scheme of its own (``rpc://``)
    is a case-insensitive string prefix, as the rule compares it; an ``http(s)://`` prefix is its
    scheme and host case-insensitively, any trailing dots, any port, then its path as written.
    The exact port and the path's segment boundary are the rule's (so the condition may exempt a
    little more; the coverage says so)."""
    parts = urlsplit(prefix)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") and not parts.netloc:
        return "^(?i:" + re2_literal(prefix) + ")"
    host = (parts.hostname or "").rstrip(".")
    rest = re2_literal(parts.path) if parts.path else "([/?#]|$)"
    return f"^(?i:{re2_literal(scheme)}://{re2_literal(host)})\\.*(:[0-9]*)?{rest}"


def endpoint_https(settings: PackSettings) -> str:
    """``push-endpoint-https``: the endpoint is not ``https://`` and under no exempt prefix
    (pushguard/rules/push_endpoint_https.py: exempt first, then the scheme)."""
    exempt = [matches(EP, exempt_pattern(p)) for p in settings.exempt_endpoint_prefixes]
    parts = [PUSH, negate(matches(EP, HTTPS))]
    if exempt:
        parts.append(negate(any_of(exempt)))
    return all_of(parts)


def auth_oidc(_: PackSettings) -> str:
    """``push-auth-oidc``: a push subscription without a push-auth service account
    (pushguard/rules/push_auth_oidc.py)."""
    return all_of([PUSH, negate(HAS_ACCOUNT)])


def no_exactly_once(_: PackSettings) -> str:
    """``push-no-exactly-once``: exactly-once delivery on a push subscription
    (pushguard/rules/push_no_exactly_once.py)."""
    field = f"{R}.enableExactlyOnceDelivery"
    return all_of([PUSH, f"has({field})", f"{field} == true"])


_PY_SPACE = (
    r"\t\n\x{0b}\x{0c}\r\x{1c}-\x{1f} \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}"
    r"\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
)
"""Python's ``str.isspace`` characters, which ``str.strip`` removes (the rule strips the
audience)."""


def audience_explicit(_: PackSettings) -> str:
    """``push-audience-explicit``: an authenticated push subscription whose audience is absent
    or only white space (pushguard/rules/push_audience_explicit.py strips it)."""
    explicit = all_of([f"has({AUD})", matches(AUD, f"[^{_PY_SPACE}]")])
    return all_of([PUSH, HAS_ACCOUNT, negate(explicit)])


_COMPOUNDS: Final = {
    "accesstoken": "access[-_]?token",
    "authtoken": "auth[-_]?token",
    "idtoken": "id[-_]?token",
    "apikey": "api[-_]?key",
    "xapikey": "x[-_]?api[-_]?key",
    "clientsecret": "client[-_]?secret",
    "sharedsecret": "shared[-_]?secret",
    "webhooksecret": "webhook[-_]?secret",
    "verifytoken": "verify[-_]?token",
}
"""Secret names of two or three words, with ``-`` or ``_`` allowed between the words."""


def secret_name_pattern() -> str:
    """An RE2 alternation of :data:`SECRET_PARAMETER_NAMES` (case-insensitive), the compound ones
    with one ``-`` or ``_`` allowed between their words."""
    names = sorted(SECRET_PARAMETER_NAMES, key=lambda n: (-len(n), n))
    return "(?i:" + "|".join(_COMPOUNDS.get(n, n) for n in names) + ")"


def no_query_token(_: PackSettings) -> str:
    """``push-no-query-token``: a query parameter whose raw name (or its last dotted part) is a
    secret name (pushguard/rules/push_no_query_token.py): the query is what follows the first
    ``?`` before any ``#``, parameters split on ``&``."""
    pattern = rf"^[^?#]*\?([^#]*&)?([^&#=]*\.)?{secret_name_pattern()}(=|&|#|$)"
    return all_of([PUSH, matches(EP, pattern)])


RUN_APP: Final = (
    r"^(?i:https)://([^/?#@]*\.(?i:run\.app)\.*(:[0-9]*)?([/?#]|$)|[^/?#]*[^\x{00}-\x{7f}])"
)
"""Endpoints the condition lets through in a perimeter: every ``https://`` URL whose host ends in
``run.app`` (the rule's two default-URL forms are both there), and any whose host has a
non-ASCII character (the rule reads the host after IDNA normalisation, which CEL cannot do)."""


def vpcsc_default_url(_: PackSettings) -> str:
    """``push-vpcsc-default-url``: a push subscription (of a perimeter project: the policy's
    attachment, or the SHA module's project test, says which) whose endpoint is not a Cloud Run
    default URL, read loosely (:data:`RUN_APP`; pushguard/rules/push_vpcsc_default_url.py)."""
    return all_of([PUSH, negate(matches(EP, RUN_APP))])


def in_projects(projects: list[str]) -> str:
    """The subscription's ``name`` is in one of ``projects`` (IDs or numbers, each as written)."""
    alternation = "|".join(re2_literal(p) for p in projects)
    return all_of([f"has({R}.name)", matches(f"{R}.name", f"^projects/({alternation})/")])
