"""Redaction for reports: no secret value, query string or userinfo leaves ``pushguard preview``
or ``pushguard analyze``.

A report shows resource inputs, stack outputs, policy messages (from any pack, not only
pushguard's), the program's logs and output, and error messages. Each may carry a secret: a
secret Output, a webhook URL with ``?token=...``, ``https://user:password@host``. The report
code passes every value through :meth:`Redactor.value` and every text through
:meth:`Redactor.text` (or the module functions :func:`redact_value`, :func:`redact_text`,
:func:`redact_url` for one-off use):

- a secret envelope ``{"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
  "value": ...}`` becomes ``[secret]``; Pulumi's unknown sentinels become ``[unknown]`` (inside a
  longer string too: a string built from an offline ``secure:`` config value);
- every URL keeps its scheme, host, port and path; its userinfo becomes ``[redacted]@``, its
  query ``?[redacted]`` and its fragment ``#[redacted]``;
- every string that was inside a secret envelope anywhere in the preview (and, for URLs, its
  host, path, query and userinfo) becomes ``[secret]`` wherever else it appears
  (:func:`pushguard.crossguard.secrets.scrubber`, as the policy pack scrubs its messages).

URLs are found the way a client would take them; where parsers could disagree, the redaction takes
the reading that hides more. A URL starts at a scheme followed by ``://`` (or, for ``http``,
``https``, ``ws``, ``wss`` and ``ftp``, by ``:`` and any slashes or backslashes, which WHATWG
parsers accept). In free text it runs to the next whitespace: quotes, ``>`` and punctuation that
end a sentence are left outside, a quote inside is part of it (so a query after it is still
redacted). A string value that starts with a URL is taken whole, spaces included.

Its authority ends at the first ``/``, ``\\``, ``?`` or ``#``, or where a URL that runs past it
starts; the userinfo is everything before the authority's last ``@``. An ``@`` after the authority
may mean a userinfo that holds one of those delimiters (``https://user:pa?ss@host/``,
``https://user:12/ss@host/``). It is taken to when the authority ends in ``?``, ``#``, ``\\`` or at
another URL, when it does not read as ``host[:port]``, or when an ``@`` in the path follows a
``:`` or an authority with a port: the userinfo then runs on to the last ``@`` of the path, or up
to the next delimiter after the first ``@``, whichever is later. If that ``@`` is past a ``?`` or
``#``, this reading's host is the other's query (``https://host?x=a@b``), so everything after the
scheme is ``[redacted]``. An authority that does not read as ``host[:port]`` is ``[redacted]`` as a
whole. Percent-encoded ``?`` and ``#`` (``%3F``, ``%23``) in a path start the redacted part too,
and URLs nested in a path are redacted in turn. In free text a password that holds whitespace
cannot be told from the text around it: only the part before the whitespace is recognised.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pushguard.crossguard.secrets import scrubber
from pushguard.crossguard.wire import (
    SECRET_SIG,
    SIG_KEY,
    UNKNOWN_SENTINELS,
    is_unknown,
    secret_strings,
)
from pushguard.gate.result import ResourceRecord, StackResult

SECRET_TEXT: Final = "[secret]"
"""What a secret value is shown as."""
UNKNOWN_TEXT: Final = "[unknown]"
"""What a value not known until the resource is created is shown as."""
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
_UNKNOWNS = re.compile("(?:" + "|".join(sorted(map(re.escape, UNKNOWN_SENTINELS))) + ")+")
"""One or more unknown sentinels in a row: one unknown part of a string, shown once."""
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
    return at, at + 1, match.start() if match else len(url)


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


def _unknowns(text: str) -> str:
    return _UNKNOWNS.sub(UNKNOWN_TEXT, text) if "-" in text else text


@dataclass(frozen=True)
class Redactor:
    """Redaction with a preview's secret values (see the module documentation). Build it once per
    report with :meth:`for_result` (or :meth:`for_values`) and pass every value and text
    through it."""

    scrub: Callable[[str], str]

    @classmethod
    def for_values(cls, *wire: Any, secrets: Iterable[str] = ()) -> Redactor:
        """A redactor that hides every string inside a secret envelope of the wire-form values
        ``wire`` (resource inputs and outputs, stack outputs), and ``secrets``."""
        found = {s for value in wire for s in secret_strings(value)}
        found.update(secrets)
        return cls(scrubber(s for s in found if not is_unknown(s)))

    @classmethod
    def for_result(cls, result: Any) -> Redactor:
        """A redactor for a :class:`~pushguard.gate.result.StackResult` (or anything with
        ``resources``, a list of :class:`~pushguard.gate.result.ResourceRecord`, and
        optionally ``outputs``, the stack outputs in wire form): it hides the secret values of
        every resource's inputs and outputs and of the stack outputs."""
        records: list[ResourceRecord] = list(getattr(result, "resources", ()))
        wire: list[Any] = [dict(r.inputs) for r in records]
        wire += [dict(r.outputs) for r in records]
        wire.append(getattr(result, "outputs", None) or {})
        return cls.for_values(*wire)

    def text(self, text: str) -> str:
        """``text`` (a message, a log line, the program's output) with its URLs redacted, the
        secret values replaced by ``[secret]`` and unknown sentinels by ``[unknown]``."""
        return _unknowns(self.scrub(redact_urls(text)))

    def string(self, value: str) -> str:
        """One string value: ``[unknown]`` for an unknown sentinel, else redacted; a value that
        starts with a URL is taken as one URL, spaces included (:func:`redact_url`)."""
        if is_unknown(value):
            return UNKNOWN_TEXT
        return _unknowns(self.scrub(redact_url(value)))

    def value(self, value: Any) -> Any:
        """``value`` (wire form: mappings, lists, strings, numbers) for display: secret envelopes
        as ``[secret]``, unknowns as ``[unknown]``, every string value redacted (keys are
        property names and stay as they are)."""
        if isinstance(value, Mapping):
            if value.get(SIG_KEY) == SECRET_SIG:
                return SECRET_TEXT
            # Keys are property names (the provider's schema), not values: never scrubbed.
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        if isinstance(value, str):
            return self.string(value)
        return value


PLAIN: Final = Redactor(lambda text: text)
"""A redactor that knows no secret values: URLs, secret envelopes and unknowns only."""


def redact_value(value: Any, secrets: Iterable[str] = ()) -> Any:
    """``value`` (wire form) for display: :meth:`Redactor.value`, hiding ``secrets`` and the
    strings inside the value's own secret envelopes wherever else they appear in it."""
    return Redactor.for_values(value, secrets=secrets).value(value)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` for display: :meth:`Redactor.text`, hiding ``secrets``."""
    return Redactor.for_values(secrets=secrets).text(text)


def redact_result(result: StackResult) -> StackResult:
    """A copy of ``result`` fit for any report: every value and text a report shows passed
    through one :meth:`Redactor.for_result` (resource inputs and outputs, stack outputs,
    violation messages, remediations and exception reasons, what was not checked, notes, logs,
    the program's output), and every URN and resource name the same way (a resource named after
    a URL with a password is shown without it; the same URN always redacts to the same text, so
    the copy's references still match). Source positions are kept. The reports render only
    this copy."""
    r = Redactor.for_result(result)
    output = result.program_output
    return dataclasses.replace(
        result,
        resources=[_record(r, record) for record in result.resources],
        violations=[
            dataclasses.replace(
                v,
                urn=r.text(v.urn),
                message=r.text(v.message),
                remediation=r.text(v.remediation),
                excepted=(
                    dataclasses.replace(v.excepted, reason=r.text(v.excepted.reason))
                    if v.excepted is not None
                    else None
                ),
            )
            for v in result.violations
        ],
        not_checked=[
            dataclasses.replace(n, urn=r.text(n.urn), reason=r.text(n.reason))
            for n in result.not_checked
        ],
        call_stacks={r.text(urn): frames for urn, frames in result.call_stacks.items()},
        outputs=r.value(result.outputs),
        notes=[r.text(note) for note in result.notes],
        logs=[(level, r.text(message)) for level, message in result.logs],
        program_output=dataclasses.replace(
            output, stdout=r.text(output.stdout), stderr=r.text(output.stderr)
        ),
    )


def _record(r: Redactor, record: ResourceRecord) -> ResourceRecord:
    """``record`` with its values, URN, name and references redacted."""
    return dataclasses.replace(
        record,
        urn=r.text(record.urn),
        name=r.text(record.name),
        parent=r.text(record.parent),
        provider=r.text(record.provider),
        dependencies=tuple(r.text(d) for d in record.dependencies),
        property_dependencies={
            key: tuple(r.text(d) for d in deps)
            for key, deps in record.property_dependencies.items()
        },
        inputs=r.value(dict(record.inputs)),
        outputs=r.value(dict(record.outputs)),
    )


def redact_error(message: str, result: StackResult | None) -> str:
    """An error message fit for any output: with the result's secrets when there is one."""
    return (Redactor.for_result(result) if result is not None else PLAIN).text(message)
