"""Policy pack discovery: which pack folder a gate run uses (the one given, else pushguard's
own) and which interpreter runs it, as the Pulumi CLI would choose."""

from __future__ import annotations

from pathlib import Path

import yaml

from pushguard.crossguard import PACK_DIR
from pushguard.gate.result import RunError


class PackError(RunError):
    """The pack folder cannot be used (no ``PulumiPolicy.yaml``, another runtime, a missing
    virtualenv); the message names the file and what is wrong."""


def resolve_pack_dir(policy_pack: Path | None) -> Path:
    """The pack folder, resolved: ``policy_pack``, else pushguard's own (:data:`PACK_DIR`)."""
    return (policy_pack or PACK_DIR).resolve()


def pack_python(pack_dir: Path) -> str | None:
    """The interpreter the CLI would run the pack with: ``runtime.options.virtualenv`` of its
    ``PulumiPolicy.yaml`` when set, else ``None`` (this interpreter).

    Raises:
        PackError: no ``PulumiPolicy.yaml``, or a runtime other than python.
    """
    manifest = pack_dir / "PulumiPolicy.yaml"
    try:
        spec = yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise PackError(f"{manifest}: not a policy pack ({error})") from None
    runtime = spec.get("runtime") if isinstance(spec, dict) else None
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if name != "python":
        raise PackError(f"{manifest}: runtime {name!r}; pushguard runs python packs")
    options = runtime.get("options", {}) if isinstance(runtime, dict) else {}
    venv = options.get("virtualenv") if isinstance(options, dict) else None
    if not venv:
        return None
    python = (pack_dir / venv / "bin" / "python").resolve()
    if not python.is_file():
        raise PackError(f"{manifest}: virtualenv {venv!r} has no bin/python; create it first")
    return str(python)
