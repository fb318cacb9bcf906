"""A finding's identity across runs: :func:`finding_id`, defined once for every enforcement point.

A finding is the same finding wherever and whenever it is seen when it is about the same
**asset** (a Pulumi URN, or a subscription path ``projects/P/subscriptions/S``; the Cloud Asset
Inventory form ``//pubsub.googleapis.com/projects/P/subscriptions/S`` is the same asset), the same
**rule** and the same **cause**. The cause is what the verdict stands on, never the wording of
the message: the result's field (:data:`~pushguard.rules.base.ResultField`) and its evidence
(string keys and values, order ignored). Rewording a message keeps every ID; a different member
holding a broad grant, or an endpoint on another host, is another cause and another ID.

The ID is ``pg1-`` and the first 24 hex digits (96 bits) of the SHA-256 of those three parts,
each length-prefixed: stable across runs, machines, exports and pushguard versions that keep
the ``pg1`` prefix (a change to the derivation changes the prefix). It feeds the preview's and
analyze's JSON (``findingId``), SARIF's ``partialFingerprints`` and the audit's rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

FINDING_ID_PREFIX = "pg1-"
"""The prefix of every :func:`finding_id` of this derivation (version 1)."""

CAI_SERVICE_PREFIX = "//pubsub.googleapis.com/"
"""Cloud Asset Inventory's full resource name prefix of Pub/Sub assets
(https://cloud.google.com/asset-inventory/docs/resource-name-format)."""


def asset_key(asset: str) -> str:
    """The asset part of an ID: a CAI full resource name and the subscription path it ends in
    name one asset (``//pubsub.googleapis.com/projects/p/subscriptions/s`` and
    ``projects/p/subscriptions/s`` give ``projects/p/subscriptions/s``); anything else (a URN)
    is kept as it is."""
    return asset.removeprefix(CAI_SERVICE_PREFIX)


def cause(field: str | None, evidence: Mapping[str, str] | None = None) -> str:
    """The cause of a result: its field (``""`` when none) and its evidence as sorted
    ``key=value`` pairs, one per line (``push_endpoint\\nhost=a.example\\nscheme=http``)."""
    pairs = sorted((str(k), str(v)) for k, v in (evidence or {}).items())
    return "\n".join([field or "", *(f"{k}={v}" for k, v in pairs)])


def finding_id(asset: str, rule_id: str, finding_cause: str) -> str:
    """The stable ID of a finding (``pg1-`` and 24 lowercase hex digits) from its ``asset``
    (URN or subscription path, see :func:`asset_key`), ``rule_id`` and ``finding_cause``
    (:func:`cause`). Pure: the same three strings give the same ID on every run."""
    digest = hashlib.sha256()
    for part in (asset_key(asset), rule_id, finding_cause):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return FINDING_ID_PREFIX + digest.hexdigest()[:24]
