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
from pushguard.rules.redaction import REDACTED, redact_url, redact_urls

__all__ = [
    "PLAIN",
    "REDACTED",
    "SECRET_TEXT",
    "UNKNOWN_TEXT",
    "Redactor",
    "redact_error",
    "redact_result",
    "redact_text",
    "redact_url",
    "redact_urls",
    "redact_value",
]

SECRET_TEXT: Final = "[secret]"
"""What a secret value is shown as."""
UNKNOWN_TEXT: Final = "[unknown]"
"""What a value not known until the resource is created is shown as."""
_UNKNOWNS = re.compile("(?:" + "|".join(sorted(map(re.escape, UNKNOWN_SENTINELS))) + ")+")
"""One or more unknown sentinels in a row: one unknown part of a string, shown once."""


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
