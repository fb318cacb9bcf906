"""A "not checked" entry: a policy that could not decide for want of configuration.

The Analyzer protocol answers it as ``PolicyNotApplicable {policy_name, reason}``
(https://github.com/pulumi/pulumi/blob/master/proto/pulumi/analyzer.proto), which has no field for
the resource. The pack writes the resource's URN at the end of the reason, in brackets, so the
Pulumi CLI shows which subscription it is about; :func:`encode` and :func:`decode` are the two
halves of that one format, and every client of the pack (the preview, analyze) decodes with
:func:`decode` into the typed :class:`NotChecked`.
"""

from __future__ import annotations

from dataclasses import dataclass

_OPEN = " [urn:pulumi:"


@dataclass(frozen=True)
class NotChecked:
    """``policy`` could not check the resource ``urn`` (``""``: the whole stack); ``reason``
    says why and which policy-config setting lets it decide."""

    policy: str
    urn: str
    reason: str


def encode(entry: NotChecked) -> tuple[str, str]:
    """``(policy_name, reason)`` of the protocol's ``PolicyNotApplicable`` for ``entry``: the
    reason followed by `` [URN]`` when the entry is about one resource."""
    if not entry.urn:
        return entry.policy, entry.reason
    return entry.policy, f"{entry.reason} [{entry.urn}]"


def decode(policy_name: str, reason: str) -> NotChecked:
    """The :class:`NotChecked` of one ``PolicyNotApplicable`` answer: a reason written by
    :func:`encode` gives back its URN; any other (another pack's) is about the whole stack."""
    start = reason.rfind(_OPEN)
    if start < 0 or not reason.endswith("]"):
        return NotChecked(policy_name, "", reason)
    return NotChecked(policy_name, reason[start + 2 : -1], reason[:start])
