"""Exceptions: a known risk accepted on one resource for one policy, for a while.

A policy's config may hold ``exceptions``, a list of
``{"resource": ..., "reason": ..., "expires": "YYYY-MM-DD"}``:

- ``resource``: a subscription path ``projects/P/subscriptions/S`` (every enforcement point that
  knows it: the pack when the subscription's project and name are known, the audit), its Cloud
  Asset Inventory full name ``//pubsub.googleapis.com/projects/P/subscriptions/S`` (normalised
  to the path), an Eventarc trigger path, or a Pulumi URN (the pack under
  ``pulumi preview``/``up``, ``pushguard preview`` and ``analyze``): the forms, and what each
  enforcement point matches, are in :mod:`pushguard.policy.resources`. Anything else (a typo such
  as ``projects/p/subscription/s``, an upper-case project ID, a ``*``) is refused;
- ``reason``: why the risk is accepted, shown beside the finding in every report (one line, at
  most 300 characters, no ``[`` or ``]``: reports carry it after the finding's message);
- ``expires``: the last day (UTC) the exception holds. From the next day the finding counts
  again and reports say the exception expired. An expiry more than ``exceptionMaxDays`` days
  (default 365) after today is refused, so every exception is looked at again.

An excepted finding is still reported with its reason and expiry but does not count for the exit
code (the pack lowers its diagnostic to advisory, so the Pulumi CLI passes too). This is the
mute-rule idea of Security Command Center and Prowler's mutelist, scoped to one resource and one
policy and always with an end date.

One policy holds at most one exception per resource (:func:`duplicates`): with two, which one
holds would depend on their order or dates, so the config is refused instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from pushguard.policy.resources import CAI_PUBSUB_PREFIX, normalise_resource

DEFAULT_MAX_DAYS = 365
"""How far ahead an expiry may be unless the policy's ``exceptionMaxDays`` raises it."""

REASON_MAX = 300
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_FORBIDDEN_IN_REASON = re.compile(r"[\[\]\x00-\x1f\x7f]")


def utc_today() -> date:
    """Today's date in UTC: the day exceptions are judged on."""
    return datetime.now(UTC).date()


def _reason(value: str) -> str:
    if _FORBIDDEN_IN_REASON.search(value):
        raise ValueError("must be one line without [ or ] (reports print it after the finding)")
    return value


def _expires(value: str) -> str:
    if not _DATE.match(value):
        raise ValueError(f"must be a date YYYY-MM-DD, not {value!r}")
    try:
        date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a calendar date") from None
    return value


class PolicyException(BaseModel):
    """One exception (see the module docstring). ``expires`` stays the string the config gave
    (``YYYY-MM-DD``), so reports repeat it exactly; :attr:`expiry` is its date."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    resource: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1),
        AfterValidator(normalise_resource),
    ]
    """The resource in its one spelling (:func:`~pushguard.policy.resources.normalise_resource`:
    a CAI full name is kept as the subscription path it ends in)."""
    reason: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=REASON_MAX),
        AfterValidator(_reason),
    ]
    expires: Annotated[str, AfterValidator(_expires)]

    @property
    def expiry(self) -> date:
        """The last day the exception holds."""
        return date.fromisoformat(self.expires)

    def active(self, today: date) -> bool:
        """True on or before the expiry day."""
        return today <= self.expiry


def too_far(
    exceptions: Iterable[PolicyException], max_days: int, today: date
) -> list[tuple[int, str]]:
    """``(index, message)`` of each exception whose expiry is more than ``max_days`` after
    ``today``."""
    limit = today + timedelta(days=max_days)
    return [
        (
            index,
            f"expires {item.expires} is more than {max_days} days ahead (latest allowed "
            f"{limit.isoformat()}); set exceptionMaxDays under the policy to allow it",
        )
        for index, item in enumerate(exceptions)
        if item.expiry > limit
    ]


def duplicates(
    exceptions: Iterable[PolicyException], key: Callable[[str], str] = lambda resource: resource
) -> list[tuple[int, str]]:
    """``(index, message)`` of each exception that names the same resource as an earlier one of
    the same policy; ``key`` gives a resource's identity (default: its normalised spelling; the
    settings also resolve a path's project by ``projectNumbers``)."""
    first: dict[str, int] = {}
    found = []
    for index, item in enumerate(exceptions):
        seen = first.setdefault(key(item.resource), index)
        if seen != index:
            found.append(
                (
                    index,
                    f"names {item.resource}, as item {seen} does: one exception per resource and "
                    "policy (with two, which one holds would depend on their order and dates)",
                )
            )
    return found


@dataclass(frozen=True)
class Excepted:
    """A finding's exception: ``state`` ``active`` (the finding does not count) or ``expired``
    (it counts again), with the exception's ``reason`` and ``expires`` (``YYYY-MM-DD``)."""

    state: Literal["active", "expired"]
    reason: str
    expires: str

    @property
    def active(self) -> bool:
        """True while the exception holds."""
        return self.state == "active"


def matching(exceptions: Iterable[PolicyException], names: Iterable[str]) -> list[PolicyException]:
    """The exceptions that name a resource known by ``names`` (its URN, its subscription or
    trigger path; a CAI full name matches the subscription path it ends in)."""
    wanted = {n.removeprefix(CAI_PUBSUB_PREFIX) for n in names if n}
    return [e for e in exceptions if e.resource in wanted]


def exception_for(
    exceptions: Iterable[PolicyException], names: Iterable[str], today: date
) -> Excepted | None:
    """The exception of a resource known by ``names`` (:func:`matching`): an active one when
    any matches and holds ``today``, else the latest expired one, else ``None``."""
    found = matching(exceptions, names)
    if not found:
        return None
    best = max(found, key=lambda e: e.expiry)
    return Excepted("active" if best.active(today) else "expired", best.reason, best.expires)


def exceptions_schema() -> dict[str, object]:
    """The JSON schema of ``exceptions`` in each policy's config schema (Pulumi validates
    ``policy-config.json`` against it before the pack runs)."""
    return {
        "type": "array",
        "description": "Accepted risks: resource (projects/P/subscriptions/S, its CAI name "
        "//pubsub.googleapis.com/projects/P/subscriptions/S, projects/P/locations/L/triggers/T "
        "or a URN; one exception per resource), reason, expires (YYYY-MM-DD, at most "
        "exceptionMaxDays ahead). An excepted finding is reported but does not fail the run "
        "until it expires.",
        "items": {
            "type": "object",
            "properties": {
                "resource": {"type": "string", "minLength": 1},
                "reason": {"type": "string", "minLength": 1, "maxLength": REASON_MAX},
                "expires": {"type": "string", "pattern": _DATE.pattern},
            },
            "required": ["resource", "reason", "expires"],
            "additionalProperties": False,
        },
    }


ExceptionList = Annotated[tuple[PolicyException, ...], Field(default=())]
