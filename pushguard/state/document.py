"""What a Pulumi state document says, as plain JSON: export or checkpoint, its deployment schema
version, the organisation a checkpoint names, and secret envelopes. Shared by ``pushguard
analyze`` (:mod:`pushguard.analyze.deployment`) and the audit's ``--stacks``
(:mod:`pushguard.audit.stacks`).

The shapes are Pulumi's ``apitype`` exchange types
(https://github.com/pulumi/pulumi/blob/master/sdk/go/common/apitype/core.go):
``pulumi stack export`` writes an ``UntypedDeployment`` ``{"version": N, "deployment": {...}}``;
a self-managed backend stores a ``VersionedCheckpoint`` ``{"version": N, "checkpoint":
{"stack": ..., "latest": {...deployment...}}}``. A secret is ``{SIG_KEY: SECRET_SIG,
"ciphertext": ...}`` (encrypted) or, from ``pulumi stack export --show-secrets``,
``{SIG_KEY: SECRET_SIG, "plaintext": "<JSON text of the value>"}``
(``sdk/go/common/resource/properties.go``, ``pkg/resource/stack/deployment.go``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from pushguard.state.files import NotStateError, StateFileError, finite, no_constant

CURRENT_VERSION = 3
"""``DeploymentSchemaVersionCurrent``: the version Pulumi writes when no feature needs more."""
LATEST_VERSION = 4
"""``DeploymentSchemaVersionLatest``: the newest version Pulumi writes and pushguard reads."""

RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
"""``resource.ResourceReferenceSig``: a resource reference ``{SIG, "urn", "id",
"packageVersion"}`` in a state."""
OUTPUT_VALUE_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
"""``resource.OutputValueSig``: an output value ``{SIG, "value"?, "secret"?, "dependencies"?}``
(version 4's ``outputDependencies``)."""


SIG_KEY: Final = "4dabf18193072939515e22adb298388d"
"""``resource.SigKey``: the key that marks an object as a special value."""
SECRET_SIG: Final = "1b47061264138c4ac30d75fd1eb44270"
"""``resource.SecretSig``: ``SIG_KEY``'s value in a secret envelope."""


def deployment_of(path: Path | str, document: Any) -> tuple[int, dict[str, Any] | None]:
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


def organization(document: dict[str, Any]) -> str:
    """The organisation of a checkpoint's fully qualified ``stack`` name
    (``organization/project/stack``), else ``""``."""
    checkpoint = document.get("checkpoint")
    qualified = checkpoint.get("stack") if isinstance(checkpoint, dict) else None
    if isinstance(qualified, str) and qualified.count("/") == 2:
        return qualified.split("/", 1)[0]
    return ""


class EncryptedSecret:
    """The type of :data:`ENCRYPTED`: a secret value that stays encrypted (no ``plaintext``)."""

    def __repr__(self) -> str:
        return "ENCRYPTED"


ENCRYPTED: Final = EncryptedSecret()
"""What :func:`secret_value` gives for a secret whose value cannot be read (``ciphertext``)."""


def is_secret(value: Any) -> bool:
    """True when ``value`` is a secret envelope (``{SIG_KEY: SECRET_SIG, ...}``)."""
    return isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG


def secret_value(path: Path | str, where: str, envelope: dict[str, Any]) -> Any:
    """The value inside a secret envelope: a ``--show-secrets`` ``plaintext`` parsed from its
    JSON text, the wire form's ``value`` as it is, or :data:`ENCRYPTED` for a ``ciphertext``.

    Raises:
        StateFileError: a plaintext that is not the JSON text of a value, or an envelope with
            none of the three (``where`` names the property, ``path`` the file).
    """
    if "plaintext" in envelope:
        text = envelope["plaintext"]
        try:
            if not isinstance(text, str):
                raise ValueError(text)
            return json.loads(text, parse_constant=no_constant, parse_float=finite)
        except (ValueError, RecursionError):
            raise StateFileError(
                path, f"{where}: a secret's plaintext must be the JSON text of its value"
            ) from None
    if "value" in envelope:  # the wire form, as some tools write it
        return envelope["value"]
    if "ciphertext" in envelope:
        return ENCRYPTED
    raise StateFileError(path, f"{where}: a secret needs its ciphertext or plaintext")
