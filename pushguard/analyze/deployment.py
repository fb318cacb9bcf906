"""Reading existing Pulumi state: the files ``pulumi stack export`` writes, and the checkpoints of
a self-managed backend (``.pulumi/stacks/PROJECT/STACK.json[.gz]``).

The shapes are Pulumi's ``apitype`` exchange types
(https://github.com/pulumi/pulumi/blob/master/sdk/go/common/apitype/core.go):

- ``pulumi stack export`` writes an ``UntypedDeployment``: ``{"version": N, "deployment": {...}}``;
- a self-managed backend stores a ``VersionedCheckpoint``: ``{"version": N, "checkpoint":
  {"stack": ..., "latest": {...deployment...}}}``;
- the deployment is ``DeploymentV3`` (``manifest``, ``secrets_providers``, ``resources``,
  ``pending_operations``) or, in older states, ``DeploymentV2``/``DeploymentV1``. Version 4
  (``DeploymentSchemaVersionLatest``) is a ``DeploymentV3`` that uses features named in the
  document's ``features`` list (``pkg/resource/stack/deployment.go``: Pulumi writes 4 only when
  a resource uses one); it is read as 3, its output values (``outputDependencies``) by their
  value. Versions above 4 are refused as the CLI refuses them. Older resources are
  migrated as ``apitype`` documents it: V1's ``defaults`` are dropped; a V1/V2 resource's
  ``propertyDependencies`` are every dependency for every input property.

Secrets stay encrypted: a value ``{"4dabf18193072939515e22adb298388d":
"1b47061264138c4ac30d75fd1eb44270", "ciphertext": ...}`` becomes a secret whose value is unknown
(the wire form a policy pack gets for a secret it cannot see); an export made with
``--show-secrets`` carries ``"plaintext"`` (the JSON text of the value), which becomes a secret
with that value. Reports never show either (:mod:`pushguard.gate.redact`).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pulumi_policy.proxy import UNKNOWN_STRING_VALUE
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from pushguard.crossguard.urn import STACK_TYPE, parse_urn
from pushguard.crossguard.wire import SECRET_SIG, SIG_KEY

CURRENT_VERSION = 3
"""``DeploymentSchemaVersionCurrent``: the version Pulumi writes when no feature needs more."""
LATEST_VERSION = 4
"""``DeploymentSchemaVersionLatest``: the newest version Pulumi writes and pushguard reads."""

MAX_VALUE_DEPTH = 256
"""The deepest a property value may be nested (objects and lists, counted from the property):
a value nested deeper makes its file unreadable (named in the report, exit 2). Pulumi itself
never needs more than a few levels; the limit keeps reading and the pack's decoding bounded."""
MAX_STATE_BYTES = 1 << 30
"""The largest state file, after decompression: 1 GiB. A file larger, or a gzip that inflates
past it, is unreadable (named in the report) and never held in memory whole."""

RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
"""``resource.ResourceReferenceSig``: a resource reference ``{SIG, "urn", "id",
"packageVersion"}`` in a state."""
OUTPUT_VALUE_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
"""``resource.OutputValueSig``: an output value ``{SIG, "value"?, "secret"?, "dependencies"?}``
(version 4's ``outputDependencies``)."""

SKIPPED_FOLDERS = frozenset({"history", "backups", "locks"})
"""Folders of a self-managed backend's ``.pulumi`` that hold old copies or locks, not stacks:
skipped only right under a folder named ``.pulumi`` (the backend's root,
https://www.pulumi.com/docs/iac/concepts/state-and-backends/#local-filesystem); elsewhere (an
organisation or project named ``backups``) they are searched like any folder."""


class StateFileError(ValueError):
    """A state file cannot be read: ``path`` and why (the field, and what is allowed)."""

    def __init__(self, path: Path | str, message: str) -> None:
        self.path = str(path)
        self.message = message
        super().__init__(f"{path}: {message}")


class NotStateError(StateFileError):
    """A JSON file that is not Pulumi state at all: not an object, or an object with neither
    ``deployment`` (``pulumi stack export``) nor ``checkpoint`` (a backend's file), such as a
    ``package.json`` beside the exports. Found while walking a folder it is skipped and listed;
    named on the command line it is an error like any unreadable file."""


@dataclass(frozen=True)
class StateResource:
    """One resource of a stack's state, in the wire form a policy pack gets.

    ``inputs``/``outputs`` hold secrets as envelopes (value unknown when encrypted);
    ``provider`` is the provider reference ``PROVIDER_URN::PROVIDER_ID`` (``""`` for component
    resources and V1 states); ``line`` is the 1-based line of the resource in its file (0 when
    the file is not line-oriented)."""

    urn: str
    type: str
    custom: bool
    id: str
    parent: str
    provider: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    dependencies: tuple[str, ...]
    property_dependencies: dict[str, tuple[str, ...]]
    delete: bool = False
    protect: bool = False
    ignore_changes: tuple[str, ...] = ()
    additional_secret_outputs: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    line: int = 0

    @property
    def name(self) -> str:
        """The resource's name: the URN's last part (``URN.Name()``)."""
        return parse_urn(self.urn).name


@dataclass(frozen=True)
class StackState:
    """A stack's state as read from ``path``: project and stack names (from the stack
    resource's URN), the deployment schema ``version`` it was written in, the Pulumi version
    that wrote it, its resources in file order, how many secrets stayed encrypted and how many
    operations were pending (an interrupted update)."""

    path: Path
    project: str
    stack: str
    version: int
    pulumi_version: str
    resources: list[StateResource]
    encrypted_secrets: int = 0
    organization: str = ""
    """From a backend checkpoint's ``stack`` (``organization/project/stack``); ``""`` for an
    export, which does not name it."""
    pending_operations: int = 0


# --- the file shapes (apitype), checked before anything is analysed ------------------------

_OptionalStrings = list[StrictStr] | None


class _Resource(BaseModel):
    """``ResourceV1``/``V2``/``V3``: the fields pushguard reads; others are ignored."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    urn: StrictStr = Field(pattern=r"^urn:pulumi:")
    type: StrictStr = Field(min_length=1)
    custom: StrictBool | None = None
    delete: StrictBool | None = None
    id: StrictStr | None = None
    inputs: dict[str, Any] | None = None
    outputs: dict[str, Any] | None = None
    parent: StrictStr | None = None
    protect: StrictBool | None = None
    dependencies: _OptionalStrings = None
    provider: StrictStr | None = None
    property_dependencies: dict[str, _OptionalStrings] | None = Field(
        None, alias="propertyDependencies"
    )
    additional_secret_outputs: _OptionalStrings = Field(None, alias="additionalSecretOutputs")
    aliases: list[Any] | None = None
    ignore_changes: _OptionalStrings = Field(None, alias="ignoreChanges")


class _Manifest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    version: StrictStr | None = None


class _Deployment(BaseModel):
    """``DeploymentV1``/``V2``/``V3``."""

    model_config = ConfigDict(extra="ignore")

    manifest: _Manifest | None = None
    resources: list[_Resource] | None = None
    pending_operations: list[Any] | None = None


def _located(error: ValidationError, raw: dict[str, Any]) -> str:
    """The first problems of a validation error, each with its place in the file (resource
    index and URN when there is one)."""
    problems = []
    for item in error.errors()[:3]:
        where = ".".join(str(p) for p in item["loc"])
        location = item["loc"]
        if len(location) >= 2 and location[0] == "resources" and isinstance(location[1], int):
            resources = raw.get("resources") or []
            entry = resources[location[1]] if location[1] < len(resources) else None
            urn = entry.get("urn") if isinstance(entry, dict) else None
            if isinstance(urn, str):
                where += f" ({urn})"
        problems.append(f"{where}: {item['msg']}")
    more = len(error.errors()) - len(problems)
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")


# --- values --------------------------------------------------------------------------------


_MAX_DOUBLE = 1.7976931348623157e308


class _SecretCounter:
    """Turns state values into wire values, counting the encrypted secrets."""

    def __init__(self, path: Path, urn: str) -> None:
        self.path, self.urn = path, urn
        self.encrypted = 0
        self.encrypted_properties: set[str] = set()
        """Top-level property names holding an encrypted value (``inputs.K``/``outputs.K``
        -> ``K``)."""

    def value(self, value: Any, where: str, depth: int = 0) -> Any:
        """``value`` in wire form: secrets as envelopes (encrypted: unknown), resource
        references as the analyzer marshals them (``MarshalOptions{KeepResources: false}`` in
        ``pkg/resource/plugin/analyzer_plugin.go``: the resource's ID, or its URN when it has
        none), output values by their value (unknown when they have none).

        Raises:
            StateFileError: nested deeper than :data:`MAX_VALUE_DEPTH`, a number no double holds,
                a malformed secret."""
        if depth > MAX_VALUE_DEPTH:
            raise StateFileError(
                self.path,
                f"{self.urn} {_short(where)}: a value nested deeper than {MAX_VALUE_DEPTH} levels "
                "(pushguard's limit)",
            )
        if isinstance(value, dict):
            sig = value.get(SIG_KEY)
            if sig == SECRET_SIG:
                return {SIG_KEY: SECRET_SIG, "value": self._secret(value, where, depth)}
            if sig == RESOURCE_SIG:
                ident = value.get("id")
                return ident if isinstance(ident, str) and ident else str(value.get("urn", ""))
            if sig == OUTPUT_VALUE_SIG:
                if "value" not in value:
                    return UNKNOWN_STRING_VALUE
                inner = self.value(value["value"], where, depth + 1)
                return {SIG_KEY: SECRET_SIG, "value": inner} if value.get("secret") else inner
            return {
                key: self.value(item, f"{where}.{key}", depth + 1) for key, item in value.items()
            }
        if isinstance(value, list):
            return [self.value(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_DOUBLE:
            raise StateFileError(
                self.path,
                f"{self.urn} {where}: the number does not fit a double (Pulumi's numbers)",
            )
        return value

    def _secret(self, envelope: dict[str, Any], where: str, depth: int) -> Any:
        if "plaintext" in envelope:
            text = envelope["plaintext"]
            try:
                if not isinstance(text, str):
                    raise ValueError(text)
                plain = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
            except (ValueError, RecursionError):
                raise StateFileError(
                    self.path,
                    f"{self.urn} {where}: a secret's plaintext must be the JSON text of its value",
                ) from None
            return self.value(plain, where, depth + 1)
        if "ciphertext" in envelope or "value" in envelope:
            if "value" in envelope:  # the wire form, as some tools write it
                return self.value(envelope["value"], where, depth + 1)
            self.encrypted += 1
            self.encrypted_properties.add(re.split(r"[.\[]", where, maxsplit=2)[1])
            return UNKNOWN_STRING_VALUE
        raise StateFileError(
            self.path, f"{self.urn} {where}: a secret needs its ciphertext or plaintext"
        )


# --- reading -------------------------------------------------------------------------------


def _short(where: str) -> str:
    """A property path cut to its first and last parts when long (a path 257 levels deep)."""
    return where if len(where) <= 120 else f"{where[:60]}...{where[-40:]}"


def _load_json(path: Path) -> tuple[Any, str]:
    """The parsed document and its text; ``.gz`` files are decompressed (a self-managed
    backend with ``PULUMI_SELF_MANAGED_STATE_GZIP``). At the peak, the file's (inflated) bytes
    and its text are held once each (about twice the inflated size for ASCII JSON), then the
    parsed document."""
    try:
        data = _read_bounded(path)
        text = data.decode("utf-8")
        del data  # the bytes are not needed once decoded: never held with the parsed document
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as error:
        raise StateFileError(path, f"cannot be read: {error}") from None
    except UnicodeDecodeError:
        raise StateFileError(path, "is not UTF-8 text (a state file is JSON)") from None
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite), text
    except json.JSONDecodeError as error:
        raise StateFileError(
            path, f"is not JSON ({error.msg} at line {error.lineno}, column {error.colno})"
        ) from None
    except RecursionError:
        raise StateFileError(
            path, f"has a value nested deeper than {MAX_VALUE_DEPTH} levels (pushguard's limit)"
        ) from None
    except ValueError as error:  # NaN, 1e999, a 5,000-digit integer
        raise StateFileError(path, f"is not a state Pulumi writes: {error}") from None


_CHUNK = 1 << 20
"""Bytes read, and at most bytes inflated, per step: what reading holds beyond the result."""
_GZIP_MAGIC = b"\x1f\x8b"


def _read_bounded(path: Path) -> bytearray:
    """The file's bytes, decompressed when gzipped (a ``.gz`` name or gzip's magic bytes),
    never more than :data:`MAX_STATE_BYTES`.

    The file's size is checked with ``stat`` before anything is read (a sparse 1.1 GB file is
    refused without being read), and only regular files are opened (a FIFO would block, a
    device never end). A gzip is inflated twice: first only counting, in steps of at most
    :data:`_CHUNK` bytes, so one that inflates past the limit is refused holding no more than
    one step; then, under the limit, into one buffer. Like Python's :mod:`gzip`, several
    members are read in turn and zero padding after the last is allowed; any other byte after
    the gzip stream is refused (https://www.rfc-editor.org/rfc/rfc1952 s. 2.2: a file is a
    series of members).

    Raises:
        StateFileError: not a regular file, larger than the limit, inflating past it,
            truncated, or with data after its gzip stream.
        OSError, zlib.error: the file cannot be read or is not a valid gzip."""
    limit = MAX_STATE_BYTES
    with open(path, "rb", opener=_open_regular) as stream:
        status = os.fstat(stream.fileno())
        if not stat.S_ISREG(status.st_mode):  # replaced since it was looked at
            raise StateFileError(path, "is not a regular file (a FIFO, socket or device)")
        size = status.st_size
        head = stream.read(2)
        stream.seek(0)
        if path.suffix != ".gz" and head != _GZIP_MAGIC:
            if size > limit:
                raise StateFileError(path, f"is larger than {limit >> 20} MiB (pushguard's limit)")
            data = bytearray(stream.read(limit + 1))
            if len(data) > limit:  # it grew while being read
                raise StateFileError(path, f"is larger than {limit >> 20} MiB (pushguard's limit)")
            return data
        total = 0

        def count(piece: bytes) -> None:
            nonlocal total
            total += len(piece)
            if total > limit:
                raise StateFileError(
                    path, f"inflates past {limit >> 20} MiB (pushguard's limit for a state)"
                )

        _inflate(path, stream, count)
        stream.seek(0)
        data = bytearray()
        _inflate(path, stream, data.extend, budget=total)
        return data


def _open_regular(name: str, flags: int) -> int:
    """``os.open`` that refuses anything but a regular file before opening it (opening a FIFO
    for reading blocks until a writer comes)."""
    if not stat.S_ISREG(os.stat(name).st_mode):
        raise StateFileError(name, "is not a regular file (a FIFO, socket or device)")
    return os.open(name, flags | getattr(os, "O_NONBLOCK", 0))


def _inflate(
    path: Path, stream: Any, sink: Callable[[bytes], None], budget: int | None = None
) -> None:
    """Inflate the gzip members of ``stream`` into ``sink``, at most :data:`_CHUNK` bytes at a
    time (``budget``: the size the first pass counted; a file changed in between is refused)."""
    inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip framing
    produced, pending = 0, b""
    while True:
        if inflate.eof:
            pending = pending.lstrip(b"\0")  # zero padding after a member, as gzip allows
            if len(pending) < 2:
                more = stream.read(_CHUNK)
                if not more and not pending:
                    return
                if more:
                    pending += more
                    continue
            if not pending.startswith(_GZIP_MAGIC):
                raise StateFileError(
                    path, "cannot be read: it has data after the end of its gzip stream"
                )
            inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # the next member
        if not pending:
            pending = stream.read(_CHUNK)
        piece = inflate.decompress(pending, _CHUNK)
        if not pending and not piece:
            break  # the file ended inside a member
        pending = inflate.unused_data if inflate.eof else inflate.unconsumed_tail
        produced += len(piece)
        if budget is not None and produced > budget:
            raise StateFileError(path, "changed while it was being read")
        sink(piece)
    raise StateFileError(path, "cannot be read: the gzip stream is truncated")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:40]} does not fit a double")
    return value


def _deployment(path: Path, document: Any) -> tuple[int, dict[str, Any] | None]:
    """``(version, deployment)`` of an export or a checkpoint (deployment ``None``: a stack
    that was never deployed).

    Raises:
        NotStateError: not an object, or neither ``deployment`` nor ``checkpoint`` in it.
        StateFileError: a state of a version pushguard does not read, or a malformed one.
    """
    if not isinstance(document, dict):
        raise NotStateError(
            path,
            "is not Pulumi state: must be a JSON object with version and deployment "
            "(pulumi stack export)",
        )
    if "deployment" not in document and "checkpoint" not in document:
        raise NotStateError(
            path,
            "is not Pulumi state: has neither deployment (pulumi stack export) nor checkpoint "
            "(a backend file)",
        )
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise StateFileError(
            path, f"version must be a deployment schema version (1 to {LATEST_VERSION})"
        )
    if version > LATEST_VERSION:
        raise StateFileError(
            path,
            f"deployment version {version} is newer than this pushguard reads "
            f"(1 to {LATEST_VERSION}); upgrade pushguard",
        )
    features = document.get("features")
    if features is not None and (
        not isinstance(features, list) or not all(isinstance(f, str) for f in features)
    ):
        raise StateFileError(path, "features must be a list of feature names (version 4)")
    if version < 1:
        raise StateFileError(path, f"version {version}: deployment versions start at 1")
    if "deployment" in document:
        deployment = document["deployment"]
        if deployment is None:
            raise StateFileError(path, "deployment is null; pulumi stack export writes an object")
    else:
        checkpoint = document["checkpoint"]
        if not isinstance(checkpoint, dict):
            raise StateFileError(path, "checkpoint must be an object")
        deployment = checkpoint.get("latest")
    if deployment is not None and not isinstance(deployment, dict):
        raise StateFileError(path, "deployment must be an object")
    return version, deployment


_URN_KEY = re.compile(r'"urn"\s*:\s*("(?:[^"\\]|\\.)*")')


def _lines(text: str, urns: list[str]) -> list[int]:
    """The line of each resource's own ``"urn"`` key, in order (resources are written in
    order, each starting with its URN); 0 where it is not found."""
    found: list[int] = []
    matches: Iterator[re.Match[str]] = _URN_KEY.finditer(text)
    counted, lines = 0, 1  # newlines are counted in C (str.count), once over the text
    for urn in urns:
        line = 0
        for match in matches:
            if json.loads(match.group(1)) == urn:
                if match.start() < counted:
                    counted, lines = 0, 1
                lines += text.count("\n", counted, match.start())
                counted, line = match.start(), lines
                break
        found.append(line)
        if not line:  # not found: search the rest afresh for the next one
            matches = _URN_KEY.finditer(text)
    return found


def read_state(path: Path) -> StackState:
    """Read one state file (export or checkpoint, any supported version, optionally gzipped).

    Raises:
        StateFileError: the file is missing, not JSON, not a deployment, of a version newer than
            3, or a resource lacks a URN or type or has a field of the wrong type (the message
            names the resource and the field); :class:`NotStateError` when the file is JSON
            but not Pulumi state at all (a ``package.json``).
    """
    document, text = _load_json(path)
    version, raw = _deployment(path, document)
    try:
        deployment = _Deployment.model_validate(raw or {})
    except ValidationError as error:
        raise StateFileError(path, _located(error, raw or {})) from None
    resources = deployment.resources or []
    lines = _lines(text, [r.urn for r in resources])
    converted: list[StateResource] = []
    encrypted = 0
    for resource, line in zip(resources, lines, strict=True):
        state = _convert(path, resource, version, line)
        converted.append(state[0])
        encrypted += state[1]
    _check_references(path, converted)
    project, stack = _names(path, document, converted)
    return StackState(
        path=path,
        project=project,
        stack=stack,
        version=version,
        pulumi_version=(deployment.manifest.version if deployment.manifest else None) or "",
        resources=converted,
        encrypted_secrets=encrypted,
        pending_operations=len(deployment.pending_operations or []),
        organization=_organization(document),
    )


def _convert(path: Path, r: _Resource, version: int, line: int) -> tuple[StateResource, int]:
    try:
        parse_urn(r.urn)
    except ValueError as error:
        raise StateFileError(path, f"resource urn: {error}") from None
    secrets = _SecretCounter(path, r.urn)
    inputs = secrets.value(_public(r.inputs), "inputs")
    outputs = secrets.value(_public(r.outputs), "outputs")
    dependencies = tuple(r.dependencies or ())
    if r.property_dependencies is not None:
        by_property = {k: tuple(v or ()) for k, v in r.property_dependencies.items()}
    elif version < CURRENT_VERSION:  # apitype's V2 -> V3 migration
        by_property = {key: dependencies for key in inputs} if dependencies else {}
    else:
        by_property = {}
    # An encrypted value is unknown whatever it was computed from: without its dependencies the
    # pack cannot presume it from them (the stack's only service account as the push-auth
    # account, say). The Pulumi CLI would decrypt it; analyze has no later check (issue 27).
    by_property = {k: v for k, v in by_property.items() if k not in secrets.encrypted_properties}
    resource = StateResource(
        urn=r.urn,
        type=r.type,
        custom=bool(r.custom),
        id=r.id or "",
        parent=r.parent or "",
        provider=r.provider or "",
        inputs=inputs,
        outputs=outputs,
        dependencies=dependencies,
        property_dependencies=by_property,
        delete=bool(r.delete),
        protect=bool(r.protect),
        ignore_changes=tuple(r.ignore_changes or ()),
        additional_secret_outputs=tuple(r.additional_secret_outputs or ()),
        aliases=tuple(a for a in r.aliases or () if isinstance(a, str)),
        line=line,
    )
    return resource, secrets.encrypted


def _check_references(path: Path, resources: list[StateResource]) -> None:
    """What Pulumi's snapshot integrity check refuses (``Snapshot.VerifyIntegrity`` in
    ``pkg/resource/deploy/snapshot.go``): two live resources with one URN, and a parent,
    dependency or provider reference that names no resource of the state (a provider reference
    is ``URN::ID`` of a ``pulumi:providers:*`` resource). A state that fails it would be analysed
    with parts of its facts missing, so it is refused instead.

    Raises:
        StateFileError: naming the resource and the reference.
    """
    urns: set[str] = set()
    providers: set[str] = set()
    for resource in resources:
        if resource.delete:
            continue
        if resource.urn in urns:
            raise StateFileError(path, f"{resource.urn}: two resources have this URN")
        urns.add(resource.urn)
        if resource.type.startswith("pulumi:providers:"):
            providers.add(f"{resource.urn}::{resource.id}")
    for resource in resources:
        if resource.delete:
            continue
        if resource.parent and resource.parent not in urns:
            raise StateFileError(
                path, f"{resource.urn}: parent {resource.parent} is not a resource of this state"
            )
        for dependency in resource.dependencies:
            if dependency not in urns:
                raise StateFileError(
                    path, f"{resource.urn}: dependency {dependency} is not a resource of this state"
                )
        if resource.provider and resource.provider not in providers:
            raise StateFileError(
                path,
                f"{resource.urn}: provider {resource.provider!r} is not a provider of this state "
                "(a provider reference is PROVIDER_URN::PROVIDER_ID)",
            )


def _public(properties: dict[str, Any] | None) -> dict[str, Any]:
    """The properties without Pulumi's internal keys (``__defaults``, ``__meta``...: any key
    starting with ``__``), which the engine does not send to analyzers
    (``resource.IsInternalPropertyKey``)."""
    return {k: v for k, v in (properties or {}).items() if not k.startswith("__")}


def _organization(document: dict[str, Any]) -> str:
    """The organisation of a checkpoint's fully qualified ``stack`` name
    (``organization/project/stack``), else ``""``."""
    checkpoint = document.get("checkpoint")
    qualified = checkpoint.get("stack") if isinstance(checkpoint, dict) else None
    if isinstance(qualified, str) and qualified.count("/") == 2:
        return qualified.split("/", 1)[0]
    return ""


def _names(path: Path, document: dict[str, Any], resources: list[StateResource]) -> tuple[str, str]:
    """Project and stack: from the stack resource's URN, else any resource's, else the
    checkpoint's ``stack`` (a stack never deployed), else the file name."""
    ordered = sorted(resources, key=lambda r: r.type != STACK_TYPE)
    if ordered:
        stack, project, _, _ = parse_urn(ordered[0].urn)
        return project, stack
    checkpoint = document.get("checkpoint")
    qualified = checkpoint.get("stack") if isinstance(checkpoint, dict) else None
    name = qualified.rsplit("/", 1)[-1] if isinstance(qualified, str) and qualified else ""
    return "", name or path.name.split(".", 1)[0]


def find_state_files(
    paths: Iterable[Path],
) -> tuple[list[Path], list[StateFileError], list[NotStateError]]:
    """The state files named by ``paths``: files as given, folders searched for ``*.json`` and
    ``*.json.gz``, sorted per folder; the files of a backend's ``.pulumi/history``,
    ``.pulumi/backups`` and ``.pulumi/locks`` folders are skipped, each listed with why. A path
    that does not exist, or a folder with no state file, is an error for that path only.
    Returns ``(files, errors, skipped)``."""
    found: list[Path] = []
    errors: list[StateFileError] = []
    skipped: list[NotStateError] = []
    for path in paths:
        if path.is_dir():
            files, problems, passed = _walk(path)
            errors += problems
            skipped += passed
            if not files and not problems and not passed:
                errors.append(StateFileError(path, "no state files (*.json, *.json.gz) in it"))
            found += files
        elif path.exists():
            found.append(path)  # a file, or something reading will name
        else:
            errors.append(StateFileError(path, "does not exist"))
    return found, errors, skipped


def _is_state_name(name: str) -> bool:
    return name.endswith(".json") or name.endswith(".json.gz")


def _walk(folder: Path) -> tuple[list[Path], list[StateFileError], list[NotStateError]]:
    """The state files under ``folder`` (sorted), the entries that could not be looked at (a
    folder that cannot be listed, a state-named link to nothing) and the files of a backend's
    history, backups and locks folders (skipped). Links to folders are not followed (a backend
    folder has none, and a loop would never end)."""
    files: list[Path] = []
    problems: list[StateFileError] = []
    skipped: list[NotStateError] = []

    def unlistable(error: OSError) -> None:
        problems.append(StateFileError(error.filename, f"cannot be listed: {error.strerror}"))

    for root, folders, names in os.walk(folder, onerror=unlistable):
        here = Path(root)
        kept = _backend_folder(here, folder)
        if kept is not None:
            skipped += (
                NotStateError(
                    here / name,
                    f"is in the backend's .pulumi/{kept} folder (old copies and locks, not stacks)",
                )
                for name in sorted(names)
                if _is_state_name(name)
            )
            folders.sort()
            continue
        folders.sort()
        for name in sorted(names):
            if not _is_state_name(name):
                continue
            entry = here / name
            if entry.is_file():
                files.append(entry)
            elif entry.is_symlink() and not entry.exists():
                problems.append(StateFileError(entry, "is a link to nothing"))
            else:
                problems.append(
                    StateFileError(entry, "is not a regular file (a FIFO, socket or device)")
                )
    return sorted(files), problems, sorted(skipped, key=lambda e: e.path)


def _backend_folder(here: Path, top: Path) -> str | None:
    """The backend folder (``history``, ``backups``, ``locks``) ``here`` is in, when it is
    right under a ``.pulumi`` folder at or below ``top``; else ``None``."""
    parts = here.relative_to(top).parts
    full = (top.name, *parts)
    for i in range(1, len(full)):
        if full[i] in SKIPPED_FOLDERS and full[i - 1] == ".pulumi" and i >= 1:
            return full[i]
    return None
