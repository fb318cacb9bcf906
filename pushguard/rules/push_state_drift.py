"""What runs is what the stack recorded. Audit only (``pushguard audit EXPORT --stacks
STATE``): not applicable in the component, the policy pack, the preview or analyze, which never
see the live side.

A stack's state records the push configuration it last applied. When the live subscription
differs, someone changed it out of band (an endpoint edited in the console, a push-auth account
swapped by hand, delivery paused), and everything the policy pack checked on the stack no longer
describes what runs; the stack's next update silently puts the recorded settings back, or, after
a refresh, keeps the change unreviewed. A subscription a stack holds that the export no
longer has, although it holds other assets of its project, was deleted out of band: the stack's
next update recreates it, and messages published meanwhile were never delivered.

Compared, field by field: whether delivery is paused (an empty push config,
https://cloud.google.com/pubsub/docs/push#stop_and_resume_push_delivery), the push endpoint, the
push-auth service account, the audience, unwrapped delivery (``noWrapper``) and its
``writeMetadata``, and the push ``attributes`` (``x-goog-version``;
https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions#PushConfig). Pub/Sub
sets ``x-goog-version`` itself when a subscription is created without it ("it will default to
the version of the Pub/Sub API used to make such call", and reading a subscription "will always
return a valid version"), so a state that records no version and a live ``v1`` (every current
client calls the v1 API) are the same setting: that difference alone is not drift. The
finding names the stack (fully qualified) and the fields that differ, values redacted as every
report is; a value read from a ``--show-secrets`` plaintext is compared but never shown. A value
the state holds encrypted cannot be compared: that field is not checked (never presumed equal,
never presumed drifted), and a stack whose differing fields are all not checked gives an
undecided finding. A subscription whose project the export does not hold is not checked either.
A subscription that more than one given stack manages is a violation of its own (``fields``
``claimed``, naming the stacks): each stack's deployment puts back the settings it recorded, so
whichever deployed last decides what runs, and a change reviewed in one stack is undone by the
other's next update.
Pulumi's own drift detection (``pulumi refresh --preview-only``, Pulumi Cloud drift runs) needs
each stack's cloud credentials; this needs only the exports the security team already has.
"""

from __future__ import annotations

from collections.abc import Iterator

from pushguard.rules.base import AUDIT_WITH_STACKS, EnforcementLevel, Result, Rule
from pushguard.rules.facts import SubscriptionFacts
from pushguard.rules.managed import PUSH_SETTINGS, PushSettings, StackRecord
from pushguard.rules.redaction import redact_urls

SECRET_SHOWN = "[secret]"
"""What a recorded value read from a ``--show-secrets`` plaintext is shown as."""

IMPLICIT_VERSION = "x-goog-version=v1"
"""The push attribute Pub/Sub sets on a subscription created through the v1 API without one
(https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions#PushConfig)."""


def same_attributes(live: tuple[str, ...], recorded: tuple[str, ...]) -> bool:
    """True when the push attributes (``key=value``) are the same setting: equal, or equal but
    for :data:`IMPLICIT_VERSION` on one side where the other names no ``x-goog-version``."""
    ours, theirs = set(live), set(recorded)

    def versioned(pairs: set[str]) -> bool:
        return any(pair.lower().startswith("x-goog-version=") for pair in pairs)

    if versioned(ours) != versioned(theirs):
        ours.discard(IMPLICIT_VERSION)
        theirs.discard(IMPLICIT_VERSION)
    return ours == theirs


def _shown(value: object) -> str:
    if value is None or value == ():
        return "none"
    if isinstance(value, tuple):
        return redact_urls(", ".join(value))
    return redact_urls(str(value).lower() if isinstance(value, bool) else str(value))


def differences(live: PushSettings, record: StackRecord) -> list[str]:
    """The :data:`~pushguard.rules.managed.PUSH_SETTINGS` whose live value differs from the
    record's, those not checked left out; only ``paused`` when one side is paused (the others
    are then empty), ``write_metadata`` only when both deliver unwrapped."""
    recorded = record.recorded
    checked = [s for s in PUSH_SETTINGS if s not in record.not_checked]
    if live.paused != recorded.paused and "push_endpoint" not in record.not_checked:
        return ["paused"]
    if live.paused and recorded.paused:
        return []
    found = []
    for setting in checked:
        if setting in ("paused",):
            continue
        if setting == "write_metadata" and not (live.no_wrapper and recorded.no_wrapper):
            continue
        if setting == "attributes":
            if not same_attributes(live.attributes, recorded.attributes):
                found.append(setting)
        elif live.value(setting) != recorded.value(setting):
            found.append(setting)
    return found


def check(facts: SubscriptionFacts) -> Iterator[Result]:
    """Per stack that manages the subscription: a violation naming the fields that differ, or
    that the subscription was deleted out of band; undecided when what differs cannot be told
    (encrypted values, a project the export does not hold); and one violation when several
    stacks manage it. Nothing without stacks."""
    managed = facts.management
    if managed is None:
        return
    yield from _claimed(managed.records)
    for record in sorted(managed.records, key=lambda r: (r.stack, r.urn)):
        if managed.live is None:
            yield from _absent(facts, record, managed.project_in_export)
            continue
        fields = differences(managed.live, record)
        hidden = [s for s in record.not_checked if s in PUSH_SETTINGS]
        unchecked = f"; not checked (encrypted in the state): {', '.join(hidden)}" if hidden else ""
        if fields:
            details = "; ".join(
                f"{name}: live {_shown(managed.live.value(name))}, stack "
                f"{SECRET_SHOWN if name in record.secret else _shown(record.recorded.value(name))}"
                for name in fields
            )
            yield Result.violation(
                f"differs from the state of stack {record.stack} ({record.urn}): {details}"
                f"{unchecked}.",
                None,
                stack=record.stack,
                fields=",".join(fields),
            )
        elif hidden:
            yield Result.unknown(
                f"matches the state of stack {record.stack} ({record.urn}) in every field "
                f"compared{unchecked}: those are not checked.",
                None,
                stack=record.stack,
                not_checked=",".join(hidden),
            )


def _claimed(records: tuple[StackRecord, ...]) -> Iterator[Result]:
    """A violation when more than one stack manages the subscription (their names sorted)."""
    stacks = sorted({record.stack for record in records})
    if len(stacks) > 1:
        yield Result.violation(
            f"{len(stacks)} given stacks manage this subscription ({'; '.join(stacks)}): each "
            "deployment of one puts back the push settings it recorded, so the stack that "
            "deployed last decides what runs.",
            None,
            stacks="; ".join(stacks),
            fields="claimed",
        )


def _absent(facts: SubscriptionFacts, record: StackRecord, project_known: bool) -> Iterator[Result]:
    project = facts.project_id or "its project"
    if project_known:
        yield Result.violation(
            f"stack {record.stack} manages this subscription ({record.urn}) but the export does "
            f"not hold it, although it holds other assets of {project}: deleted out of band.",
            None,
            stack=record.stack,
            fields="deleted",
        )
    else:
        yield Result.unknown(
            f"stack {record.stack} manages this subscription ({record.urn}); the export holds "
            f"no asset of {project}, so whether it still exists is not checked.",
            None,
            stack=record.stack,
            not_checked="project",
        )


RULE = Rule(
    id="push-state-drift",
    title="The live push configuration matches the stack's state",
    default_level=EnforcementLevel.ADVISORY,
    severity="medium",
    remediation=(
        "Find who changed the subscription and why (Cloud Audit Logs, "
        "google.pubsub.v1.Subscriber.ModifyPushConfig / UpdateSubscription); then either put "
        "the change into the stack's program and deploy it, or deploy the stack again to restore "
        "the recorded settings (a refresh only records the change, unreviewed)."
    ),
    check=check,
    enforcement_points=AUDIT_WITH_STACKS,
)
