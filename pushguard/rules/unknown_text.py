"""Where a string holds a value not known yet: Pulumi's unknown sentinels, whole or cut.

At preview Pulumi stands for a value not known yet with a sentinel string, one per type, each a
UUID: ``04da6b54-80e4-46f7-96ec-b56ff0331ba9`` for a string (``UnknownStringValue`` and its six
siblings in pulumi's ``sdk/go/common/resource/plugin/rpc.go``; the Python SDK's
``pulumi.runtime.rpc.UNKNOWN``, the Node.js SDK's ``unknownValue`` in ``sdk/nodejs/runtime/rpc.ts``;
pulumi-policy's ``UNKNOWN_*_VALUE`` in ``pulumi_policy/proxy.py``; github.com/pulumi/pulumi at
commit 1b5949891b3cefcb9974752b24a5ecef0acc86c8). A program that builds a string from a plain
value holding one (an offline ``secure:`` config value, a plain data source's output offline)
makes a string that holds the sentinel; a program that cuts such a value
(``s[:12]``, ``s.split("-")[0]``, ``s.upper()``) makes one that holds a *fragment* of it, which a
rule would otherwise read as known text: ``https://04da6b54-80e/push`` is not a host the cloud
will see.

:class:`UnknownText` finds both. A fragment counts from :data:`FRAGMENT_LENGTH` characters
(compared without regard to case): 8 is the length of a UUID's first group, what
``s.split("-")[0]`` and ``s[:8]`` leave, and the shortest cut that still names the sentinel: a
given run of 8 hexadecimal digits occurs by chance about once in 16**8 (4.3e9) positions, so real
text (a Cloud Run URL's 10-character hash, an ID) is not taken for one, while shorter cuts
(``04da``, ``80e4``) are ordinary hexadecimal words. A cut shorter than that is read as known text.

Plain Python over plain strings (the rules' layer): the enforcement points pass the sentinels
they know (:mod:`pushguard.crossguard.wire`, :mod:`pushguard.components.spec`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Final

FRAGMENT_LENGTH: Final = 8
"""The fewest characters of a sentinel that count as a fragment of it (see the module)."""

_CANDIDATE = re.compile(f"[0-9A-Fa-f-]{{{FRAGMENT_LENGTH},}}")
"""Runs of the characters sentinels are made of, long enough to hold a fragment."""


class UnknownText:
    """Finds the unknown parts of strings: each sentinel of ``sentinels``, and each part of one
    at least :data:`FRAGMENT_LENGTH` characters long, in any case.

    Raises:
        ValueError: a sentinel shorter than :data:`FRAGMENT_LENGTH`, or not made of
            hexadecimal digits and ``-`` as Pulumi's are.
    """

    def __init__(self, sentinels: Iterable[str]) -> None:
        grams: set[str] = set()
        for sentinel in sentinels:
            if len(sentinel) < FRAGMENT_LENGTH or not _CANDIDATE.fullmatch(sentinel):
                raise ValueError(f"not a sentinel of hexadecimal digits and '-': {sentinel!r}")
            lowered = sentinel.lower()
            grams.update(
                lowered[i : i + FRAGMENT_LENGTH] for i in range(len(lowered) - FRAGMENT_LENGTH + 1)
            )
        self._grams = frozenset(grams)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """``(start, end)`` of each unknown part of ``text``, in order, each as long as it
        goes: sentinels and fragments side by side are one part. Every character of a part is
        inside a run of :data:`FRAGMENT_LENGTH` characters that a sentinel holds."""
        for run in _CANDIDATE.finditer(text):
            start = end = -1
            lowered = run.group().lower()
            for offset in range(len(lowered) - FRAGMENT_LENGTH + 1):
                if lowered[offset : offset + FRAGMENT_LENGTH] not in self._grams:
                    continue
                at = run.start() + offset
                if at > end:
                    if end >= 0:
                        yield start, end
                    start = at
                end = at + FRAGMENT_LENGTH
            if end >= 0:
                yield start, end

    def holds(self, text: str) -> bool:
        """True when ``text`` holds a sentinel or a fragment of one."""
        return next(self.spans(text), None) is not None

    def known_prefix(self, text: str) -> str | None:
        """The text before the first unknown part of ``text`` (``""`` when it starts with one);
        ``None`` when ``text`` holds none."""
        first = next(self.spans(text), None)
        return None if first is None else text[: first[0]]

    def replace(self, text: str, shown: str) -> str:
        """``text`` with each unknown part replaced by ``shown``."""
        parts: list[str] = []
        last = 0
        for start, end in self.spans(text):
            parts += [text[last:start], shown]
            last = end
        return "".join(parts) + text[last:] if parts else text
