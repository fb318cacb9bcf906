"""A push endpoint is a publicly reachable ``https://`` URL that every parser reads the same way.

Pub/Sub delivers push messages only to HTTPS endpoints with a certificate signed by a certificate
authority (https://cloud.google.com/pubsub/docs/push#properties_of_a_push_subscription). Plain
``http://`` exposes message data and the OIDC bearer token on the wire. The check also rejects what
lets a URL mean two things: userinfo (``https://trusted@evil.example``), backslashes,
whitespace and control characters, percent-encoded hosts, invalid international names and numeric
hosts that some clients read as IPv4 (``0x7f.1``); and hosts that cannot be publicly reachable
(private, loopback and link-local addresses such as the metadata server, ``localhost``,
``.internal``, single-label names such as ``metadata``, port 0).

Endpoints under a prefix in the policy config's ``exemptEndpointPrefixes`` (some Google-managed
integrations use other schemes) are exempt. Endpoint and prefix are compared as URLs, not as
strings (:func:`~pushguard.rules.endpoint.matches_exempt_prefix`): the same scheme, the whole
host, the port, and a path under the prefix's path; an endpoint with userinfo is never exempt,
so neither ``https://partner.example.evil.test`` nor ``https://partner.example@evil.test`` is
exempted by ``https://partner.example``.

An endpoint not known yet (at preview) is undecided, even when it is computed from a Cloud Run
service or Cloud Function in the same deployment: the engine sends a service's ``uri`` and any
value computed from it (``"http://" + ...``) alike, so neither is presumed to be the service's
``https://`` URL. The pack reports it as not verifiable at preview (an advisory, or a violation
with ``unknownAtPreview: enforce``), and checks the real value when it is known, before
``pulumi up`` creates the subscription.

Part of an endpoint not known yet may be known, and the rule judges that part. A program that
builds the endpoint from known text and a value an offline preview does not know (``"http://" +
host + "/push"`` or ``pulumi.Output.concat("http://", host, "/push")``, ``host`` a plain data
source's output or a ``secure:`` config value) sends a string holding Pulumi's unknown sentinel,
or a cut of it (:mod:`pushguard.rules.unknown_text`). What comes before it is how the endpoint
starts: when that already gives a scheme other than ``https`` (``http:``, ``ftp://``, as
:func:`~pushguard.rules.endpoint.prefix_scheme` reads it) or a start no ``https://`` URL has
(``ftp``, ``/push/``), the endpoint is a violation at the rule's level at preview, and the message
says the scheme is known and the rest is not. A start that may still become ``https://`` (``h``,
``http``), or is ``https://``, leaves the endpoint undecided (the host decides the rest), as does
a start that may be under an exempt prefix of the same scheme. An endpoint that is an unknown
Output (``Output.concat("http://", svc.uri)``, a ``StackReference`` output offline) shows nothing
of itself: the SDK sends the whole value as the sentinel (``serialize_property`` in pulumi's
``sdk/python/lib/pulumi/runtime/rpc.py``), so it stays undecided.

Eventarc triggers (the pack, the preview and analyze): a trigger's HTTP endpoint destination
(``destination.httpEndpoint.uri``) is where Eventarc's push subscription delivers, so it is held
to the same scheme: ``https://``. Google allows ``http://`` there ("Only HTTP and HTTPS protocols
are supported"; ``HttpEndpoint.uri`` in
https://cloud.google.com/eventarc/docs/reference/rest/v1/projects.locations.triggers), and
pushguard does not: events, and any token with them, would cross the network in cleartext
(exempt a specific endpoint with ``exemptEndpointPrefixes``). The endpoint is not required to be
public: Google documents it as an internal IP address or an internal DNS name of a service in a
VPC network, reached through a network attachment
(https://cloud.google.com/eventarc/standard/docs/vpc-endpoints/route-vpc-internal-endpoint-events),
so only hosts no service in a network can be are refused (loopback, link-local, the metadata
server: :func:`~pushguard.rules.endpoint.non_vpc_reason`). A trigger with a Cloud Run, GKE,
Workflows or Cloud Functions destination has no endpoint of its own: Eventarc addresses it through
the push subscription it creates and manages, so the rule lists it as not checked (Google manages
the endpoint), never as passed.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import EnforcementLevel, Result, Rule
from pushguard.rules.endpoint import (
    EndpointError,
    matches_exempt_prefix,
    non_public_reason,
    non_vpc_reason,
    parse_endpoint,
    prefix_allows_scheme,
    prefix_may_be_exempt,
    prefix_scheme,
)
from pushguard.rules.facts import SubscriptionFacts


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Violation when the endpoint is not a well-formed, public ``https://`` URL (for an Eventarc
    trigger: a well-formed ``https://`` URL a service in a VPC network can have)."""
    if "push_endpoint" in facts.unknown:
        yield _partly_known(facts)
        return
    google = facts.google_managed_endpoint()
    if google is not None:
        yield Result.unknown(google, "push_endpoint")
        return
    if not facts.push_endpoint or any(
        matches_exempt_prefix(facts.push_endpoint, prefix)
        for prefix in facts.exempt_endpoint_prefixes
    ):
        return  # no endpoint (a pull subscription) or an exempt one
    try:
        endpoint = parse_endpoint(facts.push_endpoint)
    except EndpointError as error:
        yield Result.violation(f"The {facts.endpoint_noun()} {error.reason}.", "push_endpoint")
        return
    if endpoint.scheme != "https":
        yield Result.violation(
            _scheme_message(facts, endpoint.scheme),
            "push_endpoint",
            scheme=endpoint.scheme,
            host=endpoint.host,
        )
        return
    if facts.is_trigger:
        reason = non_vpc_reason(endpoint)
        where = "cannot be a service in a VPC network"
    else:
        reason, where = non_public_reason(endpoint), "is not publicly reachable"
    if reason:
        yield Result.violation(
            f"The {facts.endpoint_noun()} {where}: {reason}.",
            "push_endpoint",
            host=endpoint.host,
        )


def _partly_known(facts: SubscriptionFacts) -> Result:
    """The result on an endpoint not known yet: a violation when what is known of it, its
    start (:attr:`~pushguard.rules.facts.SubscriptionFacts.push_endpoint_prefix`), already
    rules out ``https://`` and every exempt prefix; else undecided."""
    prefix = facts.push_endpoint_prefix
    noun = facts.endpoint_noun()
    if prefix_allows_scheme(prefix, "https") or prefix_may_be_exempt(
        prefix, facts.exempt_endpoint_prefixes
    ):
        return Result.unknown(f"the {noun} is not known yet", "push_endpoint")
    scheme = prefix_scheme(prefix)
    if scheme:
        return Result.violation(
            f"{_scheme_message(facts, scheme)} Its scheme is known at preview; only the rest of "
            "it is not known yet.",
            "push_endpoint",
            scheme=scheme,
        )
    return Result.violation(
        f"The {noun} cannot be an https:// URL: its start is known at preview and rules "
        "https:// out; only the rest of it is not known yet. Use https://.",
        "push_endpoint",
    )


def _scheme_message(facts: SubscriptionFacts, scheme: str) -> str:
    if facts.is_trigger:
        return (
            f"The trigger's HTTP endpoint uses {scheme}://, so Eventarc would deliver events in "
            "cleartext; use https://."
        )
    return f"The push endpoint uses {scheme}://; Pub/Sub push must use https://."


RULE = Rule(
    id="push-endpoint-https",
    title="Push endpoints are public https:// URLs",
    default_level=EnforcementLevel.MANDATORY,
    severity="critical",
    remediation=(
        "Use an absolute https:// URL with a public host name and a CA-signed certificate, "
        "without user@ credentials, for example the Cloud Run service's run.app URL (for an "
        "Eventarc trigger's HTTP endpoint: an https:// URL of the service in the VPC network)."
    ),
    check=check,
    kinds=("subscription", "eventarc-trigger"),
)
