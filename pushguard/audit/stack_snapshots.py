"""``--stacks``: which state files are the stacks, and which are older snapshots or copies of
them (:func:`choose_states`). Plain Python on the driver, over one small row per state file.

A stack is who it is, not what it is called:

- **its location**: the self-managed backend that holds it, the folder with its ``.pulumi``
  folder (a backend keeps a stack at ``.pulumi/stacks/PROJECT/STACK.json[.gz]``, or
  ``.pulumi/stacks/STACK.json`` in the layout without projects: ``StackBasePath`` of
  ``projectReferenceStore`` and ``legacyReferenceStore`` in pulumi/pulumi
  ``pkg/backend/diy/store.go``; https://www.pulumi.com/docs/iac/concepts/state-and-backends/#local-filesystem);
  for any other file (``pulumi stack export`` writes one anywhere), the folder it is in;
- **its name**: ``organization/PROJECT/STACK`` from a backend's checkpoint (a self-managed
  backend's organisation is always ``organization``: ``ParseReference`` in the same file), or
  ``PROJECT/STACK`` from an export, which does not name its organisation (``UntypedDeployment``
  in ``sdk/go/common/apitype/core.go`` has only a version and the deployment).

Two files of the same location and name are **snapshots of the same stack**: the one whose
deployment has the latest ``manifest.time`` ("Time of the update", ``ManifestV1`` in
``apitype/core.go``) is used, the others are ignored (listed in ``summary.json``). Two files of
the same name in different locations are **different stacks** that happen to share a name (two
backends built from one template): both count, each reported as ``NAME (LOCATION)`` whenever the
name alone would not tell them apart. A file with the same name, ``manifest.time`` and
subscription records as another is **a copy of the same state** (a second copy of a backend, a
link, a ``.json.gz`` beside the ``.json``), wherever it is: it adds nothing. Two snapshots of
one stack with the same ``manifest.time`` but different records cannot be ordered: the run stops
and names them (fail closed).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pushguard.audit.summary import StackSnapshot
from pushguard.state.files import StateFileError

_RFC3339_NANO = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$"
)


class StateConflictError(ValueError):
    """Two snapshots of one stack have the same ``manifest.time`` and different records."""


@dataclass(frozen=True)
class StateFile:
    """One readable state file, as its executor read it: its ``file``, ``location`` and
    ``name`` (the module's identity), ``time`` (``manifest.time`` in UTC with nanoseconds:
    :func:`manifest_time`; None when the deployment has none), ``digest`` of its subscription
    records (:func:`records_digest`), how many ``records`` it has and how many of them are
    ``without_path``."""

    file: str
    location: str
    name: str
    time: str | None
    digest: str
    records: int = 0
    without_path: int = 0


@dataclass(frozen=True)
class StateChoice:
    """What :func:`choose_states` decided: the ``used`` files, each with the name its stack is
    reported under, and the ``snapshots`` of the stacks given more than once."""

    used: dict[str, str]
    snapshots: list[StackSnapshot]


def state_location(file: str) -> str:
    """The location of a state file (see the module docstring): the folder that holds its
    ``.pulumi`` folder, else its own folder; absolute, links in it resolved."""
    folder = Path(file).parent.resolve()
    parts = folder.parts
    if ".pulumi" in parts:
        last = len(parts) - 1 - parts[::-1].index(".pulumi")
        return str(Path(*parts[:last]))
    return str(folder)


def manifest_time(file: str, deployment: dict[str, Any] | None) -> str | None:
    """The deployment's ``manifest.time`` as ``YYYY-MM-DDTHH:MM:SS.NNNNNNNNNZ`` in UTC (Go's
    ``time.Time`` writes RFC 3339 with up to nine fraction digits and the zone it had), which
    sorts as time; None without a manifest or a time.

    Raises:
        StateFileError: a time that is not RFC 3339."""
    manifest = (deployment or {}).get("manifest")
    value = manifest.get("time") if isinstance(manifest, dict) else None
    if value is None:
        return None
    found = _RFC3339_NANO.match(value) if isinstance(value, str) else None
    if found is None:
        raise StateFileError(
            file, "manifest.time must be an RFC 3339 time (the time of the update)"
        )
    day, clock, fraction, zone = found.groups()
    zone = "+00:00" if zone in ("Z", "z") else zone
    try:
        moment = datetime.fromisoformat(f"{day}T{clock}{zone}")
    except ValueError:
        raise StateFileError(file, f"manifest.time {value!r} is not a valid time") from None
    utc = moment.astimezone(UTC)
    return f"{utc.strftime('%Y-%m-%dT%H:%M:%S')}.{(fraction or '').ljust(9, '0')}Z"


def records_digest(rows: Iterable[tuple[Any, ...]]) -> str:
    """A digest of a file's subscription records (their order left out): files with the same
    digest record the same subscriptions the same way."""
    text = json.dumps(sorted(json.dumps(list(row), default=str) for row in rows))
    return hashlib.sha256(text.encode()).hexdigest()


def _copies(states: list[StateFile]) -> dict[str, StateFile]:
    """Each file -> the file that stands for its state: of the copies of one state (same name,
    time and records), the first by location and file."""
    groups: dict[tuple[str, str | None, str], list[StateFile]] = {}
    for state in states:
        groups.setdefault((state.name, state.time, state.digest), []).append(state)
    standing: dict[str, StateFile] = {}
    for group in groups.values():
        first = min(group, key=lambda s: (s.location, s.file))
        for state in group:
            standing[state.file] = first
    return standing


def _newest(snapshots: list[StateFile]) -> StateFile:
    """The snapshot of one stack to use: the latest ``manifest.time`` (a snapshot without one
    is older than any with one).

    Raises:
        StateConflictError: the latest time is shared by snapshots that differ."""
    latest = max(snapshots, key=lambda s: (s.time is not None, s.time or ""))
    tied = [s for s in snapshots if s.time == latest.time]
    if len(tied) > 1:
        files = ", ".join(sorted(s.file for s in tied))
        raise StateConflictError(
            f"{files}: snapshots of stack {latest.name} in {latest.location} with the same "
            f"manifest.time ({latest.time or 'none'}) and different subscriptions; give one"
        )
    return latest


def choose_states(states: list[StateFile]) -> StateChoice:
    """The state files to use (see the module docstring), each with its stack's reported
    name, and the stacks given more than once with the file used and those ignored.

    Raises:
        StateConflictError: two snapshots of one stack cannot be ordered."""
    standing = _copies(states)
    stacks: dict[tuple[str, str], list[StateFile]] = {}
    for state in {s.file: s for s in standing.values()}.values():
        stacks.setdefault((state.location, state.name), []).append(state)
    used = {key: _newest(snapshots) for key, snapshots in stacks.items()}
    locations: dict[str, set[str]] = {}
    for location, name in used:
        locations.setdefault(name, set()).add(location)
    shown = {
        key: name if len(locations[name]) == 1 else f"{name} ({location})"
        for key in used
        for location, name in (key,)
    }
    snapshots = []
    for key, chosen in sorted(used.items(), key=lambda item: shown[item[0]]):
        ignored = sorted(
            s.file
            for s in states
            if (standing[s.file].location, standing[s.file].name) == key and s.file != chosen.file
        )
        if ignored:
            snapshots.append(
                StackSnapshot(
                    stack=shown[key], used=chosen.file, manifest_time=chosen.time, ignored=ignored
                )
            )
    return StateChoice({s.file: shown[key] for key, s in used.items()}, snapshots)
