"""A finding's ID and exception in a pack diagnostic: the one encode/decode pair.

The Analyzer protocol's ``AnalyzeDiagnostic`` has no field for a finding's ID nor for an
exception (https://github.com/pulumi/pulumi/blob/master/proto/pulumi/analyzer.proto), so the pack
writes them at the end of the message, in brackets, where the Pulumi CLI shows them too::

    sub: The push endpoint uses http://; ... [finding pg1-0123456789abcdef01234567]
    sub: ... [finding pg1-...; excepted until 2026-12-31: partner migrates in Q4]
    sub: ... [finding pg1-...; exception expired 2026-01-31: partner migrates in Q4]

Every client of the pack (the preview, analyze) reads them back with :func:`decode`. Only the last
bracket counts and an exception's reason never holds ``[`` or ``]``
(:mod:`pushguard.policy.exceptions`), so a resource name in the message cannot forge one. Whether
an excepted finding counts is decided by the diagnostic's enforcement level, which the pack sets
(advisory while the exception holds), never by this text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pushguard.policy.exceptions import Excepted

_OPEN = " [finding "
_NOTE = re.compile(
    r"(?P<id>pg1-[0-9a-f]{24})"
    r"(?:; (?P<state>excepted until|exception expired) (?P<expires>\d{4}-\d{2}-\d{2}): "
    r"(?P<reason>[^\[\]]*))?"
)
_STATES = {"excepted until": "active", "exception expired": "expired"}


@dataclass(frozen=True)
class FindingNote:
    """What :func:`decode` read: the message without the note, the finding's ID (``""`` for
    another pack's diagnostic) and its exception (``None``: none)."""

    message: str
    finding_id: str = ""
    excepted: Excepted | None = None


def encode(message: str, finding_id: str, excepted: Excepted | None = None) -> str:
    """``message`` with the note of ``finding_id`` and ``excepted`` appended."""
    note = finding_id
    if excepted is not None:
        words = "excepted until" if excepted.active else "exception expired"
        note += f"; {words} {excepted.expires}: {excepted.reason}"
    return f"{message}{_OPEN}{note}]"


def decode(message: str) -> FindingNote:
    """The :class:`FindingNote` of a diagnostic's message; a message without a note written by
    :func:`encode` is returned whole, without an ID."""
    start = message.rfind(_OPEN)
    if start < 0 or not message.endswith("]"):
        return FindingNote(message)
    match = _NOTE.fullmatch(message[start + len(_OPEN) : -1])
    if match is None:
        return FindingNote(message)
    excepted = None
    if match["state"]:
        active = _STATES[match["state"]] == "active"
        excepted = Excepted("active" if active else "expired", match["reason"], match["expires"])
    return FindingNote(message[:start], match["id"], excepted)
