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
  longer string too: a string built from an offline ``secure:`` config value; and a fragment of
  one, 8 characters or more, where a program cut it: :mod:`pushguard.rules.unknown_text`);
- every URL keeps its scheme, host, port and path; its userinfo becomes ``[redacted]@``, its
  query ``?[redacted]`` and its fragment ``#[redacted]``;
- secret values are found by where Pulumi put them: every string inside a secret envelope of a
  resource's inputs or of the stack outputs, and inside a secret envelope of a resource's
  outputs unless the inputs hold that same string, plain, at the same place (the engine makes a
  whole top-level output secret when any part of its input was: a plain ``audience`` inside a
  secret ``pushConfig`` output is still the plain input it was).

**One rule, by kind of thing shown.** A *value* (a resource's input or output, a stack output, a
resource's name) is hidden whole, never in part: a secret envelope becomes ``[secret]``, and so
does a string equal to a secret (ignoring case and surrounding spaces); a string that merely
holds a secret inside it, or a part of one, is shown as it is (``relay-push`` beside a secret
``relay``), as Pulumi shows it: secrecy follows the value, and a value the program made plain is
plain. A URN is a value too: its name part follows the value rule, the rest only loses URL
credentials. A *text* (a policy message, a not-checked reason, an exception's reason, a note, a
log line, the program's output, an error) cannot say which of its words came from a value, so
each secret, and each part of it a message may derive from it (a URL's host, path, query and
userinfo; an e-mail's domain; a service account's project), is replaced where it stands as a
whole token (:func:`pushguard.crossguard.secrets.scrubber`, the policy pack's own rule): never
inside a longer name (``relay-push``), always in "relay: ...", "host relay.example" or
"/hooks/relay/push". A secret shorter than four characters is replaced in text only where it is
quoted or is the whole text (hiding every "a" of a sentence would show the secret by the gaps).
The policy's remediation and description are the pack's own static text: only URL credentials
are redacted in them.

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pushguard.crossguard.secrets import scrubber
from pushguard.crossguard.urn import parse_urn
from pushguard.crossguard.wire import (
    SECRET_SIG,
    SIG_KEY,
    UNKNOWN_PARTS,
    is_unknown,
    record_secrets,
    secret_strings,
)
from pushguard.gate.result import ResourceRecord, StackResult, Violation
from pushguard.rules.redaction import REDACTED, redact_url, redact_urls

__all__ = [
    "PLAIN",
    "REDACTED",
    "SECRET_TEXT",
    "UNKNOWN_TEXT",
    "Redactor",
    "record_secrets",
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


def _unknowns(text: str) -> str:
    """``text`` with each unknown part (sentinels and fragments of them in a row,
    :data:`~pushguard.crossguard.wire.UNKNOWN_PARTS`) shown once as :data:`UNKNOWN_TEXT`."""
    return UNKNOWN_PARTS.replace(text, UNKNOWN_TEXT)


@dataclass(frozen=True)
class Redactor:
    """Redaction with a run's secret values (see the module documentation). Build it once per
    report with :meth:`for_result` (or :meth:`for_values`) and pass every value through
    :meth:`value`, every name through :meth:`string`, every URN through :meth:`urn` and every
    text through :meth:`text`.

    ``scrub`` hides secrets in text (:func:`pushguard.crossguard.secrets.scrubber`);
    ``wholes`` holds the secret strings, stripped and case-folded, that a value equal to one is
    hidden for."""

    scrub: Callable[[str], str]
    wholes: frozenset[str] = frozenset()

    @classmethod
    def for_secrets(cls, secrets: Iterable[str]) -> Redactor:
        """A redactor that hides ``secrets`` (unknown sentinels among them are ignored)."""
        found = {s for s in secrets if not is_unknown(s) and s.strip()}
        return cls(scrubber(found), frozenset(s.strip().casefold() for s in found))

    @classmethod
    def for_values(cls, *wire: Any, secrets: Iterable[str] = ()) -> Redactor:
        """A redactor that hides every string inside a secret envelope of the wire-form values
        ``wire`` (resource inputs and outputs, stack outputs), and ``secrets``."""
        found = {s for value in wire for s in secret_strings(value)}
        return cls.for_secrets([*found, *secrets])

    @classmethod
    def for_result(cls, result: Any) -> Redactor:
        """A redactor for a :class:`~pushguard.gate.result.StackResult` (or anything with
        ``resources``, a list of :class:`~pushguard.gate.result.ResourceRecord`, and
        optionally ``outputs``, the stack outputs in wire form): it hides the secret values of
        every resource's inputs and outputs
        (:func:`~pushguard.crossguard.wire.record_secrets`) and of the stack
        outputs."""
        return cls.for_results([result])

    @classmethod
    def for_results(cls, results: Iterable[Any]) -> Redactor:
        """:meth:`for_result` over several results at once (a text about all of them: the
        error of an analysis of many stacks)."""
        found: set[str] = set()
        for result in results:
            for record in getattr(result, "resources", ()):
                found.update(record_secrets(record.inputs, record.outputs))
            found.update(secret_strings(getattr(result, "outputs", None) or {}))
        return cls.for_secrets(found)

    def text(self, text: str) -> str:
        """``text`` (a message, a log line, the program's output) with the secret values
        replaced by ``[secret]`` where they stand as whole tokens, its URLs redacted, and
        unknown sentinels shown as ``[unknown]``."""
        return _unknowns(redact_urls(self.scrub(text)))

    def string(self, value: str) -> str:
        """One string value (or a resource name): ``[unknown]`` for an unknown sentinel,
        ``[secret]`` when it equals a secret, else with its URLs redacted (a value that starts
        with a URL is taken as one URL, spaces included: :func:`redact_url`)."""
        if is_unknown(value):
            return UNKNOWN_TEXT
        if value.strip().casefold() in self.wholes:
            return SECRET_TEXT
        return _unknowns(redact_url(value))

    def urn(self, urn: str) -> str:
        """A URN as reports show it: its name part as :meth:`string` shows a name, the rest
        with URL credentials redacted; the same URN always gives the same text (references
        still match). What is not a URN is redacted as :meth:`text`."""
        try:
            parts = parse_urn(urn)
        except ValueError:
            return self.text(urn)
        head = urn[: len(urn) - len(parts.name)]
        return PLAIN.text(head) + self.string(parts.name)

    def reference(self, reference: str) -> str:
        """A provider reference ``PROVIDER_URN::PROVIDER_ID``: the URN as :meth:`urn`, the ID
        as a value."""
        if not reference:
            return reference
        urn, separator, ident = reference.rpartition("::")
        if not separator or not urn.startswith("urn:"):
            return self.urn(reference)
        return f"{self.urn(urn)}::{self.string(ident)}"

    def value(self, value: Any) -> Any:
        """``value`` (wire form: mappings, lists, strings, numbers) for display: secret envelopes
        as ``[secret]``, unknowns as ``[unknown]``, every string value as :meth:`string` shows
        it (keys are property names and stay as they are)."""
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
    strings inside the value's own secret envelopes wherever else they are a whole value."""
    return Redactor.for_values(value, secrets=secrets).value(value)


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` for display: :meth:`Redactor.text`, hiding ``secrets``."""
    return Redactor.for_values(secrets=secrets).text(text)


def redact_result(result: StackResult) -> StackResult:
    """A copy of ``result`` fit for any report: every value a report shows passed through one
    :meth:`Redactor.for_result` (resource inputs and outputs, stack outputs: the value rule),
    every text (violation messages and exception reasons, what was not checked, what is
    unknown offline, notes, logs, the program's output: the text rule), every resource name
    and URN (a resource named after a URL with a password is shown without it; the same URN
    always redacts to the same text, so the copy's references still match). Remediations are
    the pack's static text: URL credentials only. Source positions are kept. The reports
    render only this copy."""
    r = Redactor.for_result(result)
    output = result.program_output
    return dataclasses.replace(
        result,
        resources=[_record(r, record) for record in result.resources],
        violations=[_violation(r, v) for v in result.violations],
        unjudged=[_violation(r, v) for v in result.unjudged],
        not_checked=[
            dataclasses.replace(n, urn=r.urn(n.urn) if n.urn else n.urn, reason=r.text(n.reason))
            for n in result.not_checked
        ],
        google_managed=[
            dataclasses.replace(m, urn=r.urn(m.urn) if m.urn else m.urn, reason=r.text(m.reason))
            for m in result.google_managed
        ],
        unknown_offline=[
            dataclasses.replace(u, name=r.text(u.name), message=r.text(u.message))
            for u in result.unknown_offline
        ],
        call_stacks={r.urn(urn): frames for urn, frames in result.call_stacks.items()},
        outputs=r.value(result.outputs),
        notes=[r.text(note) for note in result.notes],
        logs=[(level, r.text(message)) for level, message in result.logs],
        program_output=dataclasses.replace(
            output, stdout=r.text(output.stdout), stderr=r.text(output.stderr)
        ),
    )


def _violation(r: Redactor, v: Violation) -> Violation:
    """``v`` with its URN, message and exception reason redacted (its remediation is the
    pack's static text: URL credentials only)."""
    return dataclasses.replace(
        v,
        urn=r.urn(v.urn) if v.urn else v.urn,
        message=r.text(v.message),
        remediation=PLAIN.text(v.remediation),
        excepted=(
            dataclasses.replace(v.excepted, reason=r.text(v.excepted.reason))
            if v.excepted is not None
            else None
        ),
    )


def _record(r: Redactor, record: ResourceRecord) -> ResourceRecord:
    """``record`` with its values, URN, name and references redacted."""
    return dataclasses.replace(
        record,
        urn=r.urn(record.urn),
        name=r.string(record.name),
        parent=r.urn(record.parent) if record.parent else record.parent,
        provider=r.reference(record.provider),
        dependencies=tuple(r.urn(d) for d in record.dependencies),
        property_dependencies={
            key: tuple(r.urn(d) for d in deps) for key, deps in record.property_dependencies.items()
        },
        inputs=r.value(dict(record.inputs)),
        outputs=r.value(dict(record.outputs)),
        import_id=r.string(record.import_id) if record.import_id else "",
    )


def redact_error(message: str, result: StackResult | None) -> str:
    """An error message fit for any output: with the result's secrets when there is one."""
    return (Redactor.for_result(result) if result is not None else PLAIN).text(message)
