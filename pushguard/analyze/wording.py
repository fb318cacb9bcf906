"""What a policy pack says about a preview, worded for a deployed stack's state.

A pack answers ``pushguard analyze`` as it answers a preview: it cannot tell a state's encrypted
value from a value not known until ``pulumi up`` (both reach it as Pulumi's unknown sentinel), so
its messages speak of "preview" and of a check "at `pulumi up`". Neither is true of a state:
nothing follows an analysis, and the value is unknown because it is encrypted (or otherwise not in
the state). Every text analyze shows from the pack (violation messages, not-checked reasons)
passes through :func:`for_state`, which rewords each of those phrases; analyze itself never
speaks of a preview (the policy-config setting's name, ``unknownAtPreview``, is a name, kept).

The phrases, each pinned by a test against the pack that writes it:

- pulumi-policy's head of a policy that raised ``UnknownValueError``: ``can't run policy 'P'
  from policy pack 'PACK@vV' during preview: MESSAGE`` (``pulumi_policy/policy.py``, ``Analyze``
  and ``AnalyzeStack``; ``can't run remediation`` for ``Remediate``), and its default message
  ``TYPE value at .PATH can't be known during preview`` (``pulumi_policy/proxy.py``,
  ``UnknownValueError``): any pack built with pulumi-policy;
- pushguard's reason for a value not known: ``P is not known at preview (a secret, a data
  source's result or another stack's output, for example)``
  (:mod:`pushguard.crossguard.facts`), and ``at preview its uri itself and a value computed from
  it look alike``;
- pushguard's closing sentence :data:`~pushguard.crossguard.policies.CHECKED_LATER` ("checked
  again ... at `pulumi up`; set unknownAtPreview to enforce to fail the preview instead").
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from pushguard.crossguard.not_checked import NotChecked
from pushguard.crossguard.policies import CHECKED_LATER, UNVERIFIED
from pushguard.crossguard.urn import urn_name
from pushguard.gate.result import Violation

_HEAD: Final = re.compile(
    r"\A(can't run (?:policy|remediation) '.*?' from policy pack '.*?') during preview:"
)
"""pulumi-policy's head of a policy that could not run for an unknown value."""
_CANT_BE_KNOWN: Final = re.compile(r"(value at \S*) can't be known during preview")
"""pulumi-policy's ``UnknownValueError`` message."""
_NOT_KNOWN: Final = re.compile(r" is not known at preview \([^()]*\)")
"""pushguard's reason for a property not known (:mod:`pushguard.crossguard.facts`)."""
_LOOK_ALIKE: Final = "; at preview its "
"""pushguard's reason for an endpoint computed from a service's URL."""


def not_checked_later(encrypted: bool) -> str:
    """The sentence that replaces :data:`CHECKED_LATER`: why the value was not checked, that
    nothing checks it later, and how to have it checked (``encrypted``: the state holds
    encrypted secrets)."""
    why = (
        "The value is encrypted in the state (exported without --show-secrets)"
        if encrypted
        else "The value is unknown in the state"
    )
    return (
        f"{why}, so it was not checked, and nothing checks it later; to check it, analyse an "
        "export made with `pulumi stack export --show-secrets`, or one exported where the "
        "stack's secrets provider (its passphrase or key) is available (no report shows the "
        "value); set unknownAtPreview to enforce to fail the analysis instead"
    )


def for_state(text: str, *, encrypted: bool) -> str:
    """``text`` (a pack's message or not-checked reason) with each phrase about a preview (see
    the module documentation) said of a state instead (``encrypted``: the state holds encrypted
    secrets). Text without those phrases is returned as it is."""
    if "preview" not in text:
        return text
    unknown = "is encrypted in the state" if encrypted else "is not known in the state"
    text = _HEAD.sub(r"\1 on this state:", text)
    text = _CANT_BE_KNOWN.sub(rf"\1 {unknown}", text)
    text = _NOT_KNOWN.sub(f" {unknown}", text)
    text = text.replace(_LOOK_ALIKE, "; in a plan its ")
    return text.replace(CHECKED_LATER, not_checked_later(encrypted))


def violation_for_state(violation: Violation, *, encrypted: bool) -> Violation:
    """``violation`` with its message :func:`for_state`."""
    return replace(violation, message=for_state(violation.message, encrypted=encrypted))


def not_checked_for_state(entry: NotChecked, *, encrypted: bool) -> NotChecked:
    """``entry`` with its reason :func:`for_state`."""
    return replace(entry, reason=for_state(entry.reason, encrypted=encrypted))


def unverified(violation: Violation) -> bool:
    """Whether ``violation`` is pushguard's pack saying, under ``unknownAtPreview: enforce``,
    that it could not decide a value of the resource (``NAME: could not be verified: ...``,
    :data:`~pushguard.crossguard.policies.UNVERIFIED`), rather than a violation it found."""
    name = urn_name(violation.urn) if violation.urn else ""
    # pulumi-policy writes a violation as DESCRIPTION, a line break, then the message.
    return bool(name) and f"\n{name}: {UNVERIFIED}: " in f"\n{violation.message}"
