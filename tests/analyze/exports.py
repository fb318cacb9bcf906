"""State files in the shape ``pulumi stack export`` writes, built from a preview of the program
that would make them, as if the stack had been deployed.

The shape follows Pulumi's ``apitype`` definitions
(https://github.com/pulumi/pulumi/blob/master/sdk/go/common/apitype/core.go):
``UntypedDeployment`` ``{"version": 3, "deployment": DeploymentV3}``; ``DeploymentV3`` has
``manifest`` (``time``, ``magic``, ``version``), ``secrets_providers``, ``resources``; each
``ResourceV3`` has ``urn``, ``custom``, ``id`` (custom resources), ``type``, ``inputs``,
``outputs``, ``parent``, ``dependencies``, ``provider`` (``PROVIDER_URN::PROVIDER_ID``),
``propertyDependencies``, ``created``, ``modified``, written in that field order by Go's
``json.MarshalIndent`` with four spaces. The stack resource comes first, then the default
provider (``pulumi:providers:gcp::default_10_2_0``), then the resources in registration order.
Providers add ``__defaults`` to inputs; secrets are ``{SIG: SECRET_SIG, "ciphertext": ...}``.

Values the preview could not know (Pulumi's unknown sentinel) are replaced by what the provider
would have returned: service-account e-mails and names, topic and subscription IDs, etags.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable
from typing import Any

from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from pushguard.crossguard.urn import stack_urn
from pushguard.gate.result import StackResult

SIG = "4dabf18193072939515e22adb298388d"
SECRET = "1b47061264138c4ac30d75fd1eb44270"
TIME = "2026-11-02T09:14:07.123456789Z"
PROVIDER_VERSION = "10.2.0"

# The output of the resource a property depends on that holds its value once deployed.
_FROM_DEPENDENCY = {
    "serviceAccountEmail": "email",
    "member": "member",
    "serviceAccountId": "name",
    "topic": "id",
    "deadLetterTopic": "id",
    "subscription": "id",
    "pushAuthServiceAccountEmail": "email",
    # a Python component's registered outputs keep the program's snake_case keys
    "push_auth_service_account_email": "email",
    "subscription_id": "id",
}


def encrypted(value: Any = None) -> dict[str, str]:
    """A secret as ``pulumi stack export`` writes it without ``--show-secrets``."""
    return {SIG: SECRET, "ciphertext": "v1:" + uuid.uuid5(uuid.NAMESPACE_URL, repr(value)).hex}


def shown(value: Any) -> dict[str, str]:
    """A secret as ``pulumi stack export --show-secrets`` writes it."""
    return {SIG: SECRET, "plaintext": json.dumps(value)}


def _has_secret(value: Any) -> bool:
    if isinstance(value, dict):
        return value.get(SIG) == SECRET or any(_has_secret(v) for v in value.values())
    return isinstance(value, list) and any(_has_secret(v) for v in value)


def _plain(value: Any, revealed: Any, inside: bool = False) -> Any:
    """``value`` with each wire secret replaced by its value (``revealed`` for what is unknown
    inside a secret)."""
    if isinstance(value, dict):
        if value.get(SIG) == SECRET:
            return _plain(value.get("value"), revealed, inside=True)
        return {k: _plain(v, revealed, inside) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, revealed, inside) for v in value]
    return revealed if inside and value == UNKNOWN_STRING_VALUE else value


def _state_secrets(value: Any, revealed: Any, show: bool) -> Any:
    """Wire secrets as the state writes them: encrypted, or with ``--show-secrets`` the
    plaintext (``revealed`` for a value the preview did not know)."""
    if isinstance(value, dict):
        if value.get(SIG) == SECRET:
            plain = _plain(value, revealed)
            return shown(plain) if show else encrypted(plain)
        return {k: _state_secrets(v, revealed, show) for k, v in value.items()}
    if isinstance(value, list):
        return [_state_secrets(v, revealed, show) for v in value]
    return value


def _ids(record: Any, project: str) -> dict[str, Any]:
    """What the provider returns for a created resource beyond its inputs."""
    out = record.outputs
    kind = record.type.rsplit(":", 1)[-1]
    project = out.get("project") if isinstance(out.get("project"), str) else project
    if kind == "Account":
        email = f"{out['accountId']}@{project}.iam.gserviceaccount.com"
        return {
            "email": email,
            "member": f"serviceAccount:{email}",
            "name": f"projects/{project}/serviceAccounts/{email}",
            "uniqueId": str(100000000000000000000 + abs(hash(email)) % 10**20),
            "id": f"projects/{project}/serviceAccounts/{email}",
        }
    if kind == "Topic":
        return {"id": f"projects/{project}/topics/{out.get('name', record.name)}"}
    if kind == "Subscription":
        return {"id": f"projects/{project}/subscriptions/{out.get('name', record.name)}"}
    return {"id": f"{record.name}-id", "etag": "BwYXqV5kL2E="}


def _resolve(value: Any, key: str, deps: tuple[str, ...], known: dict[str, dict[str, Any]]) -> Any:
    if isinstance(value, dict):
        return {k: _resolve(v, k, deps, known) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, key, deps, known) for v in value]
    if value != UNKNOWN_STRING_VALUE:
        return value
    if key == "etag":
        return "BwYXqV5kL2E="
    for dep in deps:
        found = known.get(dep, {}).get(_FROM_DEPENDENCY.get(key, key))
        if found is not None:
            return found
    raise KeyError(f"no deployed value for {key!r} (dependencies {deps})")


def export_from_preview(  # noqa: C901, PLR0912, PLR0915 - the export, field by field
    result: StackResult,
    *,
    stack_outputs: dict[str, Any] | None = None,
    edit: Callable[[dict[str, Any]], None] | None = None,
    version: int = 3,
    revealed: dict[str, Any] | None = None,
    show_secrets: bool = False,
) -> dict[str, Any]:
    """The ``pulumi stack export`` document of the stack ``result`` previews, once deployed.

    ``stack_outputs`` replaces the stack's outputs (unknown at preview); ``edit`` may change
    each resource entry (for example to make a property secret) before it is written;
    ``version`` 2 or 1 writes the older ``DeploymentV2``/``V1`` shapes (no
    ``propertyDependencies``; V1 also no ``provider`` and a ``defaults`` field).

    Secrets: a resource's secret inputs stay secret in the state, and so does each output whose
    input of the same name holds a secret (as the engine does); ``revealed`` maps a resource
    name to the value of its secret the preview did not know; ``show_secrets`` writes
    plaintexts (``pulumi stack export --show-secrets``) instead of ciphertexts."""
    project, stack = result.project, result.stack
    config_project = next(
        (str(r.outputs["project"]) for r in result.resources if "project" in r.outputs),
        "example-project",
    )
    root = stack_urn(project, stack)
    provider_urn = f"urn:pulumi:{stack}::{project}::pulumi:providers:gcp::default_10_2_0"
    provider_id = str(uuid.uuid5(uuid.NAMESPACE_URL, provider_urn))
    provider_inputs = {
        "project": config_project,
        "region": "europe-west1",
        "version": PROVIDER_VERSION,
    }
    known: dict[str, dict[str, Any]] = {}
    for record in result.resources:  # first what each resource returns itself
        if record.custom:
            known[record.urn] = _ids(record, config_project)
    resources: list[dict[str, Any]] = [
        {
            "urn": root,
            "custom": False,
            "type": "pulumi:pulumi:Stack",
            "outputs": stack_outputs or {},
            "created": TIME,
            "modified": TIME,
        },
        {
            "urn": provider_urn,
            "custom": True,
            "id": provider_id,
            "type": "pulumi:providers:gcp",
            "inputs": {"__internal": {}, **provider_inputs},
            "outputs": dict(provider_inputs),
            "created": TIME,
            "modified": TIME,
        },
    ]
    for record in result.resources:
        by_key = dict(record.property_dependencies)
        if not record.custom:  # a component's outputs come from its children
            mine = [r for r in result.resources if r.parent == record.urn]
            # its subscription first: ``subscription_id`` is the subscription's ``id``
            mine.sort(key=lambda r: not r.type.endswith(":Subscription"))
            children = tuple(r.urn for r in mine)
            by_key = {k: children for k in record.outputs}

        def resolve(
            props: dict[str, Any], by_key: dict[str, Any] = by_key, own: str = record.urn
        ) -> dict[str, Any]:
            return {
                k: _resolve(copy.deepcopy(v), k, (own, *by_key.get(k, ())), known)
                for k, v in props.items()
            }

        secret = (revealed or {}).get(record.name)
        raw_inputs = {k: _plain(v, secret) for k, v in record.inputs.items()}
        raw_outputs = {k: _plain(v, secret) for k, v in record.outputs.items()}
        inputs = resolve(raw_inputs)
        outputs = {**resolve(raw_outputs), **known.get(record.urn, {})}
        for key, value in record.inputs.items():  # secrets as the state keeps them
            if _has_secret(value):
                inputs[key] = _state_secrets(value, secret, show_secrets)
                if key in outputs:
                    outputs[key] = shown(outputs[key]) if show_secrets else encrypted(outputs[key])
        if record.custom:
            known.setdefault(record.urn, {}).update(
                {k: v for k, v in outputs.items() if isinstance(v, str)}
            )
        entry: dict[str, Any] = {"urn": record.urn, "custom": record.custom}
        if record.custom:
            entry["id"] = outputs.get("id", f"{record.name}-id")
        entry["type"] = record.type
        entry["inputs"] = {"__defaults": [], **inputs} if record.custom else inputs
        entry["outputs"] = outputs
        entry["parent"] = record.parent or root
        if record.dependencies:
            entry["dependencies"] = list(record.dependencies)
        if record.custom:
            entry["provider"] = f"{provider_urn}::{provider_id}"
        entry["propertyDependencies"] = {
            k: list(v) for k, v in record.property_dependencies.items()
        }
        entry["created"] = entry["modified"] = TIME
        if edit is not None:
            edit(entry)
        if version < 3:
            entry.pop("propertyDependencies", None)
        if version < 2:
            entry.pop("provider", None)
            entry["defaults"] = {}
        resources.append(entry)
    deployment: dict[str, Any] = {
        "manifest": {"time": TIME, "magic": "0" * 64, "version": "v3.209.0"},
        "secrets_providers": {"type": "passphrase", "state": {"salt": "v1:Zm9vYmFy:v1:c2FsdA=="}},
        "resources": resources,
    }
    if version < 3:
        deployment.pop("secrets_providers")
    return {"version": version, "deployment": deployment}


def dumps(document: dict[str, Any]) -> str:
    """JSON text as ``pulumi stack export`` writes it (four-space indent)."""
    return json.dumps(document, indent=4) + "\n"
