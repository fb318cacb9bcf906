"""What of each rule the subscription resource decides: one entry per rule ID, for both targets.

Every rule of :data:`pushguard.rules.RULES` has an entry (tests/guardrails/test_registry.py fails,
naming the rule, when one has none, or when an entry names no rule). An entry says, per target,
``compiled`` (the condition decides exactly what the rule decides from the resource), ``partial``
(and what is left out) or ``not-compiled`` (and why), and gives the condition's builder
(:mod:`pushguard.guardrails.conditions`) and which Google-managed forms the condition could
otherwise flag (:mod:`pushguard.guardrails.managed`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from pushguard.guardrails import conditions
from pushguard.guardrails.model import Status
from pushguard.policy.settings import PackSettings

Builder = Callable[[PackSettings], str]

GCF_WIDER: Final = (
    "a subscription of the 1st-gen Cloud Functions form (gcf- name, App Engine tenant endpoint, "
    "no token) is let through without comparing its name's ending and its endpoint's topic path "
    "with its topic, which CEL in the documented subset cannot do (coverage.json notes."
    "googleManaged); the pack and the audit judge such a look-alike"
)

IAM: Final = (
    "needs IAM policies (of the service account, the project, the topic or the service), which "
    "are other resources than the subscription"
)


@dataclass(frozen=True)
class Entry:
    """One rule's declaration. ``status``/``reason``: the same on both targets (a perimeter rule
    differs only in how it is scoped, which the compiler adds). ``build``: the condition, or
    ``None`` for ``not-compiled``. ``cloud_build``/``cloud_functions``: the condition could be
    true on that product's subscriptions, so the Google-managed guard names it;
    ``without_account``: the condition already requires that no OIDC token is set.
    ``perimeter``: the rule applies only in perimeter projects (``perimeterProjects``)."""

    status: Status
    reason: str = ""
    build: Builder | None = None
    cloud_build: bool = True
    cloud_functions: bool = True
    without_account: bool = False
    perimeter: bool = False


def _not(reason: str) -> Entry:
    return Entry(Status.NOT_COMPILED, reason)


ENTRIES: Final[Mapping[str, Entry]] = MappingProxyType(
    {
        "push-endpoint-https": Entry(
            Status.PARTIAL,
            "compiled: the scheme (https:// required) and exemptEndpointPrefixes, read a little "
            "wider than the rule (any port, the prefix's path as a string prefix); left out: "
            "userinfo, malformed URLs and hosts that are not publicly reachable (private, "
            "loopback, link-local addresses, localhost, single-label names), which need URL "
            "parsing and IP classification CEL in the documented subset cannot do",
            conditions.endpoint_https,
            cloud_functions=False,  # a 1st-gen function's endpoint is https://
        ),
        "push-auth-oidc": Entry(
            Status.PARTIAL,
            "compiled: a push subscription without a push-auth service account; left out: "
            + GCF_WIDER,
            build=conditions.auth_oidc,
            without_account=True,
        ),
        "push-sa-same-project": _not(
            "compares the project of pushConfig.oidcToken.serviceAccountEmail with the project "
            "of the subscription's name: a part of one field against a part of another, which "
            "needs split() or RE2 back-references (RE2 has none), and a project named by number "
            "needs the projectNumbers map"
        ),
        "push-vpcsc-default-url": Entry(
            Status.PARTIAL,
            "compiled: inside the perimeter projects (policies attached to each, or a tag with "
            "--perimeter-tag; the SHA module names the projects), a push endpoint that is not an "
            "https:// URL on a run.app host; left out: the exact default-URL forms (hash form, "
            "deterministic form with the project number) and IDNA normalisation of the host, "
            "which the pack and the audit check; a subscription of the 1st-gen Cloud Functions "
            "form is let through with or without an OIDC token (the condition's length limit)",
            conditions.vpcsc_default_url,
            perimeter=True,
            without_account=True,
        ),
        "push-no-exactly-once": Entry(
            Status.PARTIAL,
            "compiled: exactly-once delivery on a push subscription; left out: "
            + GCF_WIDER
            + ", with or without an OIDC token (the condition's length limit)",
            conditions.no_exactly_once,
            without_account=True,
        ),
        "push-agent-token-creator": _not(
            IAM + ", and the Pub/Sub service agent's e-mail, which needs the project number"
        ),
        "push-invoker-binding": _not(IAM + " behind the endpoint"),
        "push-dead-letter-iam": _not(IAM + " (the dead-letter topic's and the subscription's)"),
        "push-no-query-token": Entry(
            Status.PARTIAL,
            "compiled: a query parameter whose raw name is one of the rule's secret names "
            "(case-insensitive; compound names with one - or _ between their words; the last "
            "part of a dotted name); left out: names spelled with other - and _ placements and "
            "percent-encoded names, which the rule decodes and CEL cannot",
            conditions.no_query_token,
            cloud_build=False,  # neither product's endpoint has a secret-named parameter
            cloud_functions=False,
        ),
        "push-audience-explicit": Entry(
            Status.COMPILED,
            build=conditions.audience_explicit,
            cloud_functions=False,  # a 1st-gen function's subscription has no OIDC token
        ),
        "push-sa-broad-grants": _not(IAM),
        "push-shared-iam-binding": _not(
            "needs the authoritative IAM bindings a deployment declares, which only the pack "
            "sees in a stack"
        ),
        "push-unmanaged": _not(
            "needs the Pulumi stacks' state (audit --stacks only): no resource field says which "
            "stack manages a subscription"
        ),
        "push-state-drift": _not(
            "needs the Pulumi stacks' state (audit --stacks only) to compare with"
        ),
        "push-target-requires-auth": _not(
            "needs the Cloud Run service's or function's IAM policy behind the endpoint, another "
            "resource"
        ),
    }
)
"""Every rule's entry, by rule ID."""
