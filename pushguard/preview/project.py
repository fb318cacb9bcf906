"""Finding a Pulumi project and reading a stack's config the way the Pulumi CLI does.

The project file is ``Pulumi.json``, ``Pulumi.yaml`` or ``Pulumi.yml``, searched in that order
(``findProjectInDir`` with ``encoding.Exts`` in ``sdk/go/common/workspace/paths.go`` and
``sdk/go/common/encoding/marshal.go`` of pulumi/pulumi, commit 1b5949891b3c). It names the
program (``main``, default the project folder), where stack config files live
(``stackConfigDir``, or its old spelling ``config: DIR``:
``RewriteConfigPathIntoStackConfigDir`` in ``sdk/go/common/workspace/project.go``) and
project-level config defaults (``config:``, each a value or ``{default: ...}``).

A stack's config file is ``Pulumi.<stack><ext>`` with the *project file's* extension, in
``stackConfigDir`` when set, else next to the project file (``ProjectStackPath`` in
``paths.go``): a project with ``Pulumi.yml`` reads ``Pulumi.dev.yml``, never a leftover
``Pulumi.dev.yaml``. It holds ``config:`` with keys namespaced ``namespace:key`` (bare keys
belong to the project). The stack's config is the project's defaults, under the config of the
Pulumi ESC environments it imports (``pulumiConfig``, when their values are given:
:mod:`pushguard.preview.environments`), under the stack file's own (``mergeConfig`` in
``pkg/workspace/config.go``: the stack file wins, objects merged key by key). Structured values
are passed to the program as JSON text, as the CLI does.

``secure:`` values (also inside structured values) are secrets that cannot be decrypted without
the stack's secrets provider, so offline they are *unknown*: each becomes Pulumi's unknown
sentinel :data:`SECRET_UNKNOWN` and its key is a secret key. A program that passes such a value
to a resource (``config.require_secret("endpoint")`` or ``config.require("endpoint")``) sends an
unknown in wire form, as ``pulumi preview`` does for any value known only at deployment, and
``PushSubscription`` defers it like an Output (see :mod:`pushguard.components.inputs`). Neither
the ciphertext nor a placeholder that could pass for the value ever reaches the program.
Source: https://www.pulumi.com/docs/iac/concepts/projects/project-file/ and
https://www.pulumi.com/docs/iac/concepts/config/
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pulumi.runtime.rpc import UNKNOWN

SECRET_UNKNOWN: str = UNKNOWN
"""What a ``secure:`` config value reads as offline: Pulumi's unknown sentinel
(``04da6b54-80e4-46f7-96ec-b56ff0331ba9``), a value not known until deployment."""


class ProjectError(ValueError):
    """The Pulumi project or stack config cannot be read; the message says which file and why."""


@dataclass(frozen=True)
class PulumiProject:
    """A Pulumi project: its name, folder, program (a folder with ``__main__.py``, or a file),
    stack config folder, project-level config defaults (``{"namespace:key": value}``), the
    extension of its project file (``.yaml``, ``.yml`` or ``.json``), which its stack config
    files share, and its runtime (:data:`RUNTIMES`: ``python``, or ``nodejs`` for TypeScript and
    JavaScript)."""

    name: str
    root: Path
    main: Path
    stack_config_dir: Path
    config_defaults: Mapping[str, Any] = field(default_factory=dict)
    extension: str = ".yaml"
    runtime: str = "python"

    @property
    def file(self) -> Path:
        """The project file, ``Pulumi<extension>``."""
        return self.root / f"Pulumi{self.extension}"

    def stack_config_file(self, stack: str) -> Path:
        """``Pulumi.<stack><extension>`` in the stack config folder (``ProjectStackPath``)."""
        return self.stack_config_dir / f"Pulumi.{stack}{self.extension}"

    def stacks(self) -> list[str]:
        """The stacks that have a config file (of the project file's extension), sorted."""
        return sorted(
            path.name[len("Pulumi.") : -len(self.extension)]
            for path in self.stack_config_dir.glob(f"Pulumi.*{self.extension}")
        )

    @property
    def entry_point(self) -> Path:
        """The file the language host runs: ``main`` itself; in a folder, its ``__main__.py``
        for Python; for Node.js the file its ``package.json`` names (``main``), else its
        ``index.ts`` or ``index.js`` (:func:`node_entry_point`)."""
        if self.main.is_file():
            return self.main
        if self.runtime == "nodejs":
            return node_entry_point(self.main)
        return self.main / "__main__.py"


RUNTIMES = ("python", "nodejs")
"""The ``runtime`` names whose programs ``pushguard preview`` runs."""


def node_entry_point(folder: Path) -> Path:
    """The module Node.js loads for a program ``folder``, as ``@pulumi/pulumi``'s run entry
    picks it when ``Pulumi.yaml`` names no file (``sdk/nodejs/cmd/run/run.ts`` of
    pulumi/pulumi, commit 1b5949891b3c): the ``package.json`` in the folder names it
    (``exports`` as a string, else ``main``), else ``index.js``, else ``index.ts``; it may not
    exist (the run then says so)."""
    manifest = folder / "package.json"
    named: Any = None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            named = data.get("exports") if isinstance(data.get("exports"), str) else None
            named = named or data.get("main")
    except (OSError, ValueError):
        pass
    if isinstance(named, str) and named and (folder / named).is_file():
        return folder / named
    js = folder / "index.js"
    return js if js.is_file() else folder / "index.ts"


PROJECT_EXTENSIONS = (".json", ".yaml", ".yml")
"""The project file's extensions, in the order the CLI tries them (``encoding.Exts``)."""


def project_file(folder: Path) -> Path | None:
    """The project file in ``folder``: ``Pulumi.json``, ``Pulumi.yaml`` or ``Pulumi.yml``, the
    first that exists in that order (``findProjectInDir``), or ``None``."""
    for extension in PROJECT_EXTENSIONS:
        path = folder / f"Pulumi{extension}"
        if path.is_file():
            return path
    return None


def find_project(start: Path) -> Path:
    """The nearest folder at or above ``start`` with a project file, as the CLI searches.

    Raises:
        ProjectError: none up to the file system root.
    """
    start = start.resolve()
    for folder in (start, *start.parents):
        if project_file(folder) is not None:
            return folder
    raise ProjectError(f"no Pulumi.yaml in {start} or any folder above it")


def load_project(folder: Path) -> PulumiProject:
    """Read the project file in ``folder`` (:func:`project_file`).

    Raises:
        ProjectError: no project file, or one without a ``name``.
    """
    path = project_file(folder)
    if path is None:
        raise ProjectError(f"no Pulumi.yaml in {folder}")
    data = _read_yaml(path)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ProjectError(f"{path}: 'name' is required")
    runtime = _runtime(path, data.get("runtime"))
    main = folder / str(data.get("main") or ".")
    config = data.get("config") or {}
    if isinstance(config, str):  # the old spelling of stackConfigDir
        if data.get("stackConfigDir"):
            raise ProjectError(
                f"{path}: use only stackConfigDir, not both config and stackConfigDir, to name "
                "the stack config folder"
            )
        data["stackConfigDir"], config = config, {}
    stack_dir = folder / str(data.get("stackConfigDir") or ".")
    defaults = _config_defaults(path, name, config)
    project = PulumiProject(
        name=name,
        root=folder,
        main=main,
        stack_config_dir=stack_dir,
        config_defaults=defaults,
        extension=path.suffix,
        runtime=runtime,
    )
    if runtime == "nodejs" and not main.exists():
        raise ProjectError(f"{path}: the program {main} does not exist")
    if runtime == "python" and not project.entry_point.is_file():
        raise ProjectError(f"{path}: the program {project.entry_point} does not exist")
    return project


def _runtime(path: Path, runtime: Any) -> str:
    """The project's ``runtime`` (``name`` or ``{name: ..., options: ...}``; default
    ``python``), which must be one of :data:`RUNTIMES`: the preview runs the program as Pulumi's
    Python or Node.js language host does.

    Raises:
        ProjectError: another runtime (``yaml``, ``go``, ``dotnet``, ...), naming it and what to
            run instead.
    """
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if name is None:
        return "python"
    if name in RUNTIMES:
        return str(name)
    raise ProjectError(
        f"{path}: the project's program is not Python or Node.js (runtime: {name}); pushguard "
        "preview runs Python, TypeScript and JavaScript programs only. For a program in another "
        "language run the Pulumi CLI's `pulumi preview --policy-pack` with pushguard's pack, or "
        "`pushguard analyze` on the stack's state (`pulumi stack export`)"
    )


def _full_key(project: str, key: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _config_defaults(path: Path, project: str, raw: Any) -> dict[str, Any]:
    """Project-level config: a plain value, or a declaration with ``default`` (or ``value``)."""
    if not isinstance(raw, dict):
        raise ProjectError(f"{path}: 'config' must be a mapping")
    defaults: dict[str, Any] = {}
    for key, declared in raw.items():
        if isinstance(declared, dict):
            for field_name in ("value", "default"):
                if field_name in declared:
                    defaults[_full_key(project, str(key))] = declared[field_name]
                    break
        else:
            defaults[_full_key(project, str(key))] = declared
    return defaults


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise ProjectError(f"{path}: cannot be read ({error})") from None
    if not isinstance(data, dict):
        raise ProjectError(f"{path}: expected a mapping at the top level")
    return data


def load_stack_config(
    project: PulumiProject, stack: str, environment: Mapping[str, Any] | None = None
) -> tuple[dict[str, str], set[str]]:
    """The stack's config as the runtime takes it, and the keys whose values are secrets:
    the project's defaults, under ``environment`` (the ``pulumiConfig`` of the ESC environments
    the stack imports, keys as written: :mod:`pushguard.preview.environments`), under the stack
    file's ``config:`` (its value wins; where both are objects they are merged key by key, as
    ``mergeConfig`` merges them).

    Returns ``({"namespace:key": text}, {secret keys})``; text is the string value, or JSON for
    numbers, booleans, lists and mappings.

    Raises:
        ProjectError: the stack file is missing or malformed.
    """
    path = project.stack_config_file(stack)
    if not path.is_file():
        known = ", ".join(project.stacks()) or "none"
        raise ProjectError(f"no stack config {path} for stack {stack!r} (stacks with one: {known})")
    raw = _read_yaml(path).get("config") or {}
    if not isinstance(raw, dict):
        raise ProjectError(f"{path}: 'config' must be a mapping")
    values: dict[str, str] = {}
    secrets: set[str] = set()
    from_environment = {
        _full_key(project.name, str(key)): value for key, value in (environment or {}).items()
    }
    merged = {**project.config_defaults, **from_environment}
    for key, value in raw.items():
        full = _full_key(project.name, str(key))
        merged[full] = (
            _merge_object(value, from_environment[full]) if full in from_environment else value
        )
    for full, value in merged.items():
        plain, secret = _unknown_secure(value)
        if secret:
            secrets.add(full)
        values[full] = plain if isinstance(plain, str) else json.dumps(plain)
    return values, secrets


def _merge_object(value: Any, base: Any) -> Any:
    """``value`` merged over ``base`` where both are mappings, member by member; else
    ``value`` (``object.Merge`` in ``sdk/go/common/resource/config/object.go``)."""
    if isinstance(value, dict) and isinstance(base, dict):
        merged = dict(base)
        for key, item in value.items():
            merged[key] = _merge_object(item, merged.get(key))
        return merged
    return value


def _unknown_secure(value: Any) -> tuple[Any, bool]:
    """``value`` with every ``{secure: ciphertext}`` (also inside structured values) replaced by
    :data:`SECRET_UNKNOWN`, and whether there was one (the whole key is then a secret)."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_UNKNOWN, True
        items = {k: _unknown_secure(v) for k, v in value.items()}
        return {k: v for k, (v, _) in items.items()}, any(s for _, s in items.values())
    if isinstance(value, list):
        pairs = [_unknown_secure(v) for v in value]
        return [v for v, _ in pairs], any(s for _, s in pairs)
    return value, False
