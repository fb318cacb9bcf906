"""What the given Pulumi stacks say about one subscription, beside what runs: the facts of
``push-unmanaged`` and ``push-state-drift`` (:class:`Management`).

Only the organisation audit with ``--stacks`` fills them (it has both sides: the live
subscription from Cloud Asset Inventory, the stacks' recorded outputs from their state). Every
other enforcement point leaves :attr:`~pushguard.rules.facts.SubscriptionFacts.management`
``None``, and both rules are then not applicable.

The compared push settings (:data:`PUSH_SETTINGS`) are the subscription's ``pushConfig``
(https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions#PushConfig):
the endpoint, the OIDC token's service account and audience, the unwrapped delivery
(``noWrapper``) and its ``writeMetadata``, the ``attributes`` (``x-goog-version``); and whether
delivery is paused (an empty push config: a paused push subscription is a pull subscription,
https://cloud.google.com/pubsub/docs/push#stop_and_resume_push_delivery).
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict

RECORDED_SETTINGS: Final = (
    "push_endpoint",
    "push_auth_account",
    "audience",
    "no_wrapper",
    "write_metadata",
    "attributes",
)
"""The push settings a stack's state records and the export holds (:class:`PushSettings`)."""

PUSH_SETTINGS: Final = ("paused", *RECORDED_SETTINGS)
"""The push settings compared between a stack's record and the live subscription, in report
order."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PushSettings(_Frozen):
    """One side's push settings: ``push_endpoint`` (``None``: paused, or a pull subscription),
    ``push_auth_account`` (lower case), ``audience``, ``no_wrapper`` (unwrapped delivery),
    ``write_metadata`` (``None`` when not set), ``attributes`` (sorted ``key=value``)."""

    push_endpoint: str | None = None
    push_auth_account: str | None = None
    audience: str | None = None
    no_wrapper: bool = False
    write_metadata: bool | None = None
    attributes: tuple[str, ...] = ()

    @property
    def paused(self) -> bool:
        """No push endpoint: a pull subscription, or push delivery paused."""
        return not self.push_endpoint

    def value(self, setting: str) -> object:
        """The value of one of :data:`PUSH_SETTINGS`."""
        return self.paused if setting == "paused" else getattr(self, setting)


class StackRecord(_Frozen):
    """One stack resource that manages the subscription, as its state recorded it.

    ``stack`` is the stack's fully qualified name (``organization/project/stack``; a
    ``pulumi stack export`` file does not name its organisation: ``project/stack``), ``urn`` the
    resource's URN, ``file`` the state file, ``recorded`` its push settings, ``not_checked`` the
    settings whose recorded value is an encrypted secret or unknown (they cannot be compared)
    and ``secret`` those read from a ``--show-secrets`` plaintext (compared; their values are
    never reported)."""

    stack: str
    urn: str
    file: str = ""
    recorded: PushSettings = PushSettings()
    not_checked: tuple[str, ...] = ()
    secret: tuple[str, ...] = ()


class Management(_Frozen):
    """What ``--stacks`` says of one subscription.

    ``records``: the stack resources that manage it (empty: no given stack does). ``live``: the
    subscription's settings in the export, ``None`` when the export does not hold it (a
    subscription only a stack knows). ``project_in_export``: the export holds some asset of
    the subscription's project, so its absence is a fact and not a gap of the export."""

    records: tuple[StackRecord, ...] = ()
    live: PushSettings | None = None
    project_in_export: bool = True
