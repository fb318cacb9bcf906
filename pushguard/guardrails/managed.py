"""The Google-managed subscriptions no compiled condition denies, in CEL.

The facts are those of :mod:`pushguard.rules.google_managed` (the one recognition every
enforcement point uses; the audit applies it before the rules run, pushguard/audit/evaluate.py):
Cloud Build Pub/Sub triggers create ``gcb-TRIGGER`` subscriptions pushing to
``rpc://name:CloudBuildPushEndpoint:gslb:google.pubsub.v1.cloudbuildpushendpoint-prod-REGION``;
1st-gen Cloud Functions create ``gcf-FUNCTION[-REGION]-TOPIC`` subscriptions pushing, without an
OIDC token, to
``https://HASH-dot-TENANT-tp.appspot.com/_ah/push-handlers/pubsub/projects/P/topics/T?pubsub_trigger=true``.
The patterns are that module's, anchored (RE2's ``$`` is the end of the text, so a trailing newline
is not let through, as Python's ``fullmatch`` does not let it through either).

What CEL within the documented subset (:mod:`pushguard.guardrails.subset`) cannot say, and so is
wider here than in Python (it only ever lets more through, never denies what the rules'
recognition lets through): that the ``gcf-`` name ends in the topic's ID, and that the topic in the
endpoint's path is the subscription's own topic. Both compare a part of one field with another
(``split``, ``endsWith`` of a concatenation, or RE2 back-references, which RE2 does not have), and
the project and topic in the path are matched by their characters only. The endpoint must still be
exactly the App Engine tenant form, with the fixed path and query and no token, so what a
look-alike could receive is what that module's docstring says: messages, never an identity token.
:data:`WIDER_THAN_RULES` says it in coverage.json and the docs.
"""

from __future__ import annotations

from typing import Final

from pushguard.guardrails.cel import EP, HAS_ACCOUNT, HAS_NAME, R, all_of, any_of, matches, negate

_REGION = r"[a-z]+-[a-z]+[0-9]+"
_SUBSCRIPTIONS = r"/subscriptions/"
"""A subscription's ID follows it (``projects/P/subscriptions/S``; neither P nor S has a ``/``)."""

CLOUD_BUILD: Final = all_of(
    [
        matches(f"{R}.name", _SUBSCRIPTIONS + r"gcb-[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?$"),
        matches(
            EP,
            r"^rpc://name:CloudBuildPushEndpoint:gslb:google\.pubsub\.v1\."
            rf"cloudbuildpushendpoint-prod-(global|{_REGION})$",
        ),
    ]
)
"""A Cloud Build trigger's subscription (an OIDC token may be set: Cloud Build documents the
trigger's own service account for the push)."""

_GCF_NAME = matches(
    f"{R}.name", _SUBSCRIPTIONS + r"gcf-[A-Za-z][A-Za-z0-9_-]*-[A-Za-z][^/]{2,254}$"
)
_GCF_ENDPOINT = matches(
    EP,
    r"^https://[0-9a-f]{32}-dot-[a-z][0-9a-f]{16}p?-tp\.appspot\.com/_ah/push-handlers/"
    r"pubsub/projects/[a-z0-9.:-]+/topics/[A-Za-z][A-Za-z0-9._~+-]{2,254}\?pubsub_trigger=true$",
)


def cloud_functions_v1(*, without_account: bool = False) -> str:
    """A 1st-gen Cloud Function's subscription, as far as the subset can say it (see the module
    docstring). ``without_account``: the condition it is part of already requires that no OIDC
    token is set, so the clause is left out (the condition stays the same, and shorter)."""
    parts = (
        [_GCF_NAME, _GCF_ENDPOINT]
        if without_account
        else [_GCF_NAME, negate(HAS_ACCOUNT), _GCF_ENDPOINT]
    )
    return all_of(parts)


def google_managed(
    *,
    cloud_build: bool = True,
    cloud_functions: bool = True,
    without_account: bool = False,
    also: tuple[str, ...] = (),
) -> str:
    """True for the subscriptions Google creates and configures, of the products asked for;
    every compiled condition ends in ``&& !(...)`` of it. A condition that cannot be true on one
    product's form (an ``https://`` endpoint is never Cloud Build's ``rpc://``) may leave that
    product out: the parity tests run every condition on both products' forms. ``also``: more
    tests of ``resource.name`` to let through under the same ``has()`` (the exceptions)."""
    products = []
    if cloud_build:
        products.append(f"({CLOUD_BUILD})")
    if cloud_functions:
        products.append(f"({cloud_functions_v1(without_account=without_account)})")
    return f"{HAS_NAME} && " + any_of([*products, *also])


GOOGLE_MANAGED: Final = google_managed()
"""Both products, the OIDC clause included."""

WIDER_THAN_RULES: Final = (
    "Google-managed subscriptions are let through by their documented name and endpoint forms "
    "(pushguard/rules/google_managed.py). For 1st-gen Cloud Functions, CEL in the documented "
    "subset cannot compare the gcf- name's ending or the endpoint's topic path with the "
    "subscription's topic, so a subscription of that exact App Engine tenant form whose name or "
    "path names another topic is let through here; the pack and the audit judge it."
)
"""What coverage.json and docs/guardrails.md say of the Google-managed classification."""
