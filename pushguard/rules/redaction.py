"""URLs in text, redacted for display: the userinfo, query and fragment of every URL become
``[redacted]`` (scheme, host, port and path kept). Plain text functions with no dependency, so
every report uses them: :mod:`pushguard.gate.redact` (the preview's and analyze's reports, which
add secret values and unknowns) and the audit's ``report.html``.

The rules for finding URLs the way a client would take them are in
:mod:`pushguard.gate.redact`'s module documentation.
"""

from __future__ import annotations

import re
from typing import Final

REDACTED: Final = "[redacted]"
"""What a URL's userinfo, query and fragment are replaced by."""

_SPECIAL = r"(?:https?|wss?|ftp):[/\\]*"
_HIERARCHICAL = r"[A-Za-z][A-Za-z0-9+.\-]{0,31}://"  # bounded: linear over long words
_START = rf"(?:{_SPECIAL}|{_HIERARCHICAL})"
_URL_START = re.compile(_START, re.IGNORECASE)
_URL_IN_TEXT = re.compile(rf"{_START}\S*", re.IGNORECASE)
_AUTHORITY_END = re.compile(r"[/\\?#]")
_QUERY_START = re.compile(r"[?#]|%3[Ff]|%23")
_HOST_PORT = re.compile(r"(?:\[[0-9A-Fa-f:.]*(?:%25[^\]]*)?\]|[^:\[\]@]*)(?::[0-9]*)?")
_TRAILING = ".,;:!?'\"`>"
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _trim(url: str) -> str:
    """``url`` without the punctuation that ends the sentence around it (a closing bracket only
    when the URL does not open it)."""
    excess = {closer: url.count(closer) - url.count(opener) for closer, opener in _CLOSERS.items()}
    end = len(url)
    while end:
        last = url[end - 1]
        if last in _TRAILING:
            end -= 1
        elif last in _CLOSERS and excess[last] > 0:
            excess[last] -= 1
            end -= 1
        else:
            break
    return url[:end]


def _has_port(host_port: str) -> bool:
    after = host_port[host_port.find("]") + 1 :] if host_port.startswith("[") else host_port
    return ":" in after


class _Next:
    """The first match of a pattern at or after a position, in amortised linear time when the
    positions asked grow (each URL nested in a path asks again further on)."""

    def __init__(self, pattern: re.Pattern[str], text: str) -> None:
        self.pattern, self.text = pattern, text
        self._asked = -1
        self._found = -1

    def at_or_after(self, start: int) -> int:
        """The match's start, or -1."""
        # A search from an earlier position answers when it found nothing, or found a match at
        # or after ``start`` (there is none between the two positions then).
        if self._asked != -1 and start >= self._asked and not 0 <= self._found < start:
            return self._found
        match = self.pattern.search(self.text, start)
        self._asked, self._found = start, (match.start() if match else -1)
        return self._found


_AT = re.compile("@")


def _authority(
    url: str, begin: int, ats: _Next, tails: _Next, urls: _Next
) -> tuple[int, int, int] | None:
    """Where the URL's authority starting at ``begin`` has its host (``(userinfo end or -1,
    host start, authority end)``), taking the reading that hides more when in doubt; ``None``
    when one reading's host is another's query (``https://host?x@y``), so nothing after the
    scheme may be shown. ``ats`` finds the ``@`` signs, ``tails`` where a query or fragment may
    start, ``urls`` where a URL starts."""
    match = _AUTHORITY_END.search(url, begin)
    end = match.start() if match else len(url)
    # A URL that starts inside the authority and runs past it ("host'https://..."): it is
    # redacted on its own, and any "@" after it may still end this URL's userinfo.
    nested = urls.at_or_after(begin)
    spans = _URL_START.match(url, nested) if -1 < nested < end else None
    clipped = spans is not None and spans.end() > end
    end = nested if clipped else end
    at = url.rfind("@", begin, end)
    host_start = at + 1 if at != -1 else begin
    host_port = url[host_start:end]
    later = ats.at_or_after(end)
    if later == -1:
        return at, host_start, end
    plausible = _HOST_PORT.fullmatch(host_port) is not None
    query = tails.at_or_after(end)
    path_end = query if query != -1 else len(url)
    last_in_path = url.rfind("@", end, path_end) if url[end] == "/" else -1
    doubtful = (
        clipped
        or url[end] in "?#\\"
        or not plausible
        or (last_in_path != -1 and (_has_port(host_port) or url.find(":", end, last_in_path) != -1))
    )
    if not doubtful:
        return at, host_start, end
    after = _AUTHORITY_END.search(url, later + 1)
    at = url.rfind("@", begin, max(after.start() if after else len(url), path_end))
    if at > path_end:  # this reading's host is another one's query
        return None
    match = _AUTHORITY_END.search(url, at + 1)
    end = match.start() if match else len(url)
    # As above: a URL that starts inside this reading's authority ("@a'git+ssh://...") ends it.
    nested = urls.at_or_after(at + 1)
    spans = _URL_START.match(url, nested) if -1 < nested < end else None
    return at, at + 1, nested if spans is not None and spans.end() > end else end


def _redact_candidate(url: str) -> str:
    """One URL (a string that starts with a scheme) redacted, URLs nested in its path too."""
    ats, tails, urls = _Next(_AT, url), _Next(_QUERY_START, url), _Next(_URL_START, url)
    pieces: list[str] = []
    position = 0
    while True:
        start = _URL_START.match(url, position)
        if start is None:  # "http" left of a "http:" that ended a sentence
            pieces.append(url[position:])
            break
        pieces.append(url[position : start.end()])
        found = _authority(url, start.end(), ats, tails, urls)
        if found is None:
            pieces.append(REDACTED)
            break
        at, host_start, end = found
        host_port = url[host_start:end]
        if at != -1:
            pieces.append(f"{REDACTED}@")
        pieces.append(host_port if _HOST_PORT.fullmatch(host_port) else REDACTED)
        query = tails.at_or_after(end)
        tail = _QUERY_START.match(url, query) if query != -1 else None
        path_end = query if query != -1 else len(url)
        nested = _URL_START.search(url, end, path_end)
        if nested is not None:
            pieces.append(url[end : nested.start()])
            position = nested.start()
            continue
        pieces.append(url[end:path_end])
        if tail is not None:
            marker = tail.group()
            pieces.append(f"{marker}{REDACTED}" if marker != "#" else f"#{REDACTED}")
            if marker != "#" and "#" in url[tail.end() :]:
                pieces.append(f"#{REDACTED}")
        break
    return "".join(pieces)


def redact_url(url: str) -> str:
    """``url`` with its userinfo, query and fragment redacted (scheme, host, port and path kept);
    the whole string is taken as one URL, spaces included. A string that does not start with a
    URL is redacted as text (:func:`redact_urls`)."""
    stripped = url.lstrip()
    if not _URL_START.match(stripped):
        return redact_urls(url)
    return url[: len(url) - len(stripped)] + _redact_candidate(stripped)


def redact_urls(text: str) -> str:
    """``text`` with every URL in it redacted (:func:`redact_url`); nothing else changes."""

    def one(match: re.Match[str]) -> str:
        url = _trim(match.group())
        return _redact_candidate(url) + match.group()[len(url) :] if url else match.group()

    return _URL_IN_TEXT.sub(one, text)
