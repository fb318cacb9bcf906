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

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pulumi_policy.proxy import UNKNOWN_STRING_VALUE
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from pushguard.state.document import (
    CURRENT_VERSION,
    ENCRYPTED,
    LATEST_VERSION,
    OUTPUT_VALUE_SIG,
    RESOURCE_SIG,
    SECRET_SIG,
    SIG_KEY,
    secret_value,
)
from pushguard.state.document import deployment_of as _deployment
from pushguard.state.document import organization as _organization
from pushguard.state.files import (
    MAX_STATE_BYTES,
    MAX_VALUE_DEPTH,
    SKIPPED_FOLDERS,
    NotStateError,
    StateFileError,
    find_state_files,
)
from pushguard.state.files import load_json as _load_json
from pushguard.state.files import short as _short
from pushguard.state.urn import STACK_TYPE, parse_urn

__all__ = [
    "CURRENT_VERSION",
    "LATEST_VERSION",
    "MAX_STATE_BYTES",
    "MAX_VALUE_DEPTH",
    "OUTPUT_VALUE_SIG",
    "RESOURCE_SIG",
    "SKIPPED_FOLDERS",
    "NotStateError",
    "StackState",
    "StateFileError",
    "StateResource",
    "find_state_files",
    "read_state",
]


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
        inner = secret_value(self.path, f"{self.urn} {where}", envelope)
        if inner is ENCRYPTED:
            self.encrypted += 1
            self.encrypted_properties.add(re.split(r"[.\[]", where, maxsplit=2)[1])
            return UNKNOWN_STRING_VALUE
        return self.value(inner, where, depth + 1)


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
