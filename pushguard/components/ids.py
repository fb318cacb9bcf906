"""The IDs the component gives Google when the team gives none: always valid, never shared.

A generated ID is a readable slug of the component's name followed by a hash of
``(Google Cloud project, component URN, role)``. The URN holds the Pulumi stack, the Pulumi project,
the parent components' types and the component's name
(https://www.pulumi.com/docs/iac/concepts/resources/names/#urns), so neither two components of one
stack (``orders.created`` and ``orders_created`` share their slug) nor the same component in two
stacks of one program deployed to one Google Cloud project (``prod`` and ``staging``) get the
same ID. The slug keeps only ASCII (a name's other characters are decomposed, NFKD, and what is
not ASCII is dropped), so any Unicode name gives a valid ID.

Google's rules:

- subscription and topic IDs: start with a letter, 3 to 255 characters of letters, digits and
  ``- _ . ~ + %``, not starting with ``goog``
  (https://cloud.google.com/pubsub/docs/pubsub-basics#resource_names);
- service account IDs: 6 to 30 characters matching ``[a-z]([-a-z0-9]*[a-z0-9])`` (RFC 1035;
  https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts/create).

The scheme (pushguard 0.2.0) replaced Pulumi's auto-naming (``NAME-`` and 7 random hex
characters, which kept invalid names such as ``3pl-shipments-b4a7ada``) and the account IDs
``SLUG-push`` of pushguard 0.1.0 (see CHANGELOG.md: resources named by the old scheme are
replaced).
"""

from __future__ import annotations

import base64
import hashlib
import re
import unicodedata
from typing import Final

PUBSUB_ID_PATTERN: Final = r"^[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$"
"""A subscription or topic ID (and it must not start with ``goog``)."""

ACCOUNT_ID_PATTERN: Final = r"^[a-z]([-a-z0-9]*[a-z0-9])$"
"""A service account ID (and it is 6 to 30 characters)."""

_PUBSUB_HASH: Final = 10
"""Hash characters of a Pub/Sub ID: 50 bits."""
_ACCOUNT_HASH: Final = 7
"""Hash characters of an account ID: 35 bits (an account ID has only 30 characters)."""
_PUBSUB_SLUG: Final = 200
_ACCOUNT_SLUG: Final = 30 - 1 - _ACCOUNT_HASH


def _digest(project: str, urn: str, role: str, size: int) -> str:
    """``size`` lower-case base32 characters (``a-z2-7``) of SHA-256 over the three parts."""
    raw = hashlib.sha256("\x00".join((project, urn, role)).encode()).digest()
    return base64.b32encode(raw).decode().lower()[:size]


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def component_name(urn: str) -> str:
    """The component's name, the last ``::`` part of its URN."""
    return urn.rsplit("::", 1)[-1]


def pubsub_id(project: str, urn: str, suffix: str = "") -> str:
    """The generated ID of a subscription or topic the component with ``urn`` makes in
    ``project``: ``SLUG[-SUFFIX]-HASH``, e.g. ``orders-sync-k3v9...`` for a component named
    ``orders sync``; ``suffix`` (``dead-letter``) names a second resource of the component and
    is kept whole however long the name (the name's slug is shortened first).

    A slug that does not start with a letter, or starts with ``goog`` (in any case), is prefixed
    with ``ps-``; an empty one is ``ps``. Always matches :data:`PUBSUB_ID_PATTERN` and never
    starts with ``goog``.
    """
    slug = re.sub(r"[^A-Za-z0-9_.~+]+", "-", _ascii(component_name(urn)))
    slug = re.sub(r"-{2,}", "-", slug).strip("-_.~+")
    if suffix:  # the name gives way, so the suffix survives the truncation below
        slug = slug[: _PUBSUB_SLUG - len(suffix) - len("ps--")].rstrip("-_.~+")
        slug = f"{slug}-{suffix}" if slug else suffix
    if not slug[:1].isalpha() or slug.lower().startswith("goog"):
        slug = f"ps-{slug}".rstrip("-")
    slug = slug[:_PUBSUB_SLUG].rstrip("-_.~+")
    return f"{slug}-{_digest(project, urn, suffix or 'subscription', _PUBSUB_HASH)}"


def account_id(project: str, urn: str) -> str:
    """The generated ID of the push-auth service account the component with ``urn`` makes in
    ``project``: ``SLUG-HASH``, at most 30 characters (``orders-sync-k3v9x2a``).

    The slug is lower-case letters, digits and single hyphens, at most 22 characters; one that
    does not start with a letter is prefixed with ``push-``, an empty one is ``push``. Always
    matches :data:`ACCOUNT_ID_PATTERN` with 6 to 30 characters.
    """
    slug = re.sub(r"[^a-z0-9]+", "-", _ascii(component_name(urn)).lower()).strip("-")
    if not slug[:1].isalpha():
        slug = f"push-{slug}".rstrip("-")
    slug = slug[:_ACCOUNT_SLUG].rstrip("-")
    return f"{slug}-{_digest(project, urn, 'push-auth', _ACCOUNT_HASH)}"
