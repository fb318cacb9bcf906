"""A Google-managed subscription in the pack's answers: the one encode/decode pair.

A subscription Google creates and configures for its own products
(:mod:`pushguard.rules.google_managed`) is judged by no policy. The pack says so the way the
Analyzer protocol has for a policy that does not apply to a resource: no diagnostic, and in the
``AnalyzeStack`` answer one ``PolicyNotApplicable {policy_name, reason}`` per enabled policy
(https://github.com/pulumi/pulumi/blob/master/proto/pulumi/analyzer.proto: "information about
policies that were not applicable"; pulumi-policy's own ``not_applicable(reason)`` answers the
same message). The protocol has no status field and no resource field, so the reason carries
both, as the "not checked" entries do (:mod:`pushguard.crossguard.not_checked`: the URN at the
end, in brackets)::

    gcb-deploy: google-managed by Cloud Build: created and configured by Cloud Build for ...

Every client of the pack (the preview, analyze) reads them back with :func:`decode` into one
:class:`GoogleManagedEntry` per subscription, apart from what was not checked. A "not checked"
reason always holds ``: not checked:``, and a recognised subscription's trigger or function
name never holds ``:`` (:mod:`pushguard.rules.google_managed` accepts letters, digits, ``_`` and
``-`` only), so a resource named to look like the marker is still read as not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pushguard.crossguard.not_checked import NotChecked
from pushguard.crossguard.resources import WireResource
from pushguard.crossguard.scope import current_scope
from pushguard.crossguard.secrets import scrub
from pushguard.rules.google_managed import GOOGLE_MANAGED, PRODUCTS, GoogleManaged

_MARK = re.compile(
    rf": {GOOGLE_MANAGED} by (?P<product>{'|'.join(re.escape(p) for p in PRODUCTS)}): "
)
_NOT_CHECKED = ": not checked: "


@dataclass(frozen=True)
class GoogleManagedEntry:
    """A subscription ``urn`` (where its findings would be placed) that Google manages:
    ``product`` (one of :data:`~pushguard.rules.google_managed.PRODUCTS`) and ``reason``, the
    sentence that names the subscription and what of the product it serves."""

    urn: str
    product: str
    reason: str


def reason(sub: WireResource, managed: GoogleManaged) -> str:
    """The ``PolicyNotApplicable`` reason (before the URN) for ``sub``, recognised as
    ``managed``."""
    return f"{sub.name}: {GOOGLE_MANAGED} by {managed.product}: {managed.describe()}"


def note(policy: str, sub: WireResource, managed: GoogleManaged) -> None:
    """Note that ``policy`` does not apply to ``sub``, which Google manages (answered by the
    server as a ``not_applicable`` entry on the subscription, as the "not checked" notes are)."""
    notes = current_scope().notes
    if notes is not None:
        notes.not_checked.append(NotChecked(policy, sub.report_urn, scrub(reason(sub, managed))))


def decode(entry: NotChecked) -> GoogleManagedEntry | None:
    """The :class:`GoogleManagedEntry` of a decoded ``not_applicable`` entry written by
    :func:`note`, or ``None`` for any other entry (what was not checked)."""
    found = _MARK.search(entry.reason)
    if found is None or _NOT_CHECKED in entry.reason:
        return None
    return GoogleManagedEntry(entry.urn, found["product"], entry.reason)


def split(
    entries: list[NotChecked],
) -> tuple[list[NotChecked], list[GoogleManagedEntry]]:
    """``entries`` (decoded ``not_applicable`` answers, every policy's) as what was not checked
    and the Google-managed subscriptions, each of these once (every policy names it), sorted by
    URN and reason."""
    not_checked: list[NotChecked] = []
    managed: set[GoogleManagedEntry] = set()
    for entry in entries:
        decoded = decode(entry)
        if decoded is None:
            not_checked.append(entry)
        else:
            managed.add(decoded)
    return not_checked, sorted(managed, key=lambda m: (m.urn, m.reason))
