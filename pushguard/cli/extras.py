"""Which extra each command needs, checked before the command imports it.

The base install (pushguard without extras) has the rules, the policy config and this command's
shell; Pulumi (``pulumi``, ``pulumi-gcp``, ``pulumi-policy`` and the gRPC they bring) is the
``pulumi`` extra, Spark the ``audit`` extra, so that a push endpoint installs ``receiver`` alone
and an audit cluster ``audit`` alone (pyproject.toml). A command run without its extra is a failed
run (exit 2, the CLI's contract) with one line naming what to install, never a traceback.
"""

from __future__ import annotations

import importlib.util
from typing import Final

import typer

from pushguard._about import project_url

EXTRA_MODULES: Final[dict[str, tuple[str, ...]]] = {
    "pulumi": ("pulumi", "pulumi_gcp", "pulumi_policy", "grpc"),
    "audit": ("pyspark", "pyarrow", "pandas"),
    "guardrails": ("celpy", "yaml"),
    "receiver": ("cachetools", "cryptography", "google.auth", "requests"),
}
"""Top-level modules each extra's distributions provide, as the commands import them."""


def missing_module(extra: str) -> str | None:
    """The first module of ``extra`` (a key of :data:`EXTRA_MODULES`) that cannot be imported
    here, or ``None`` when all can. Only looks the modules up (no import)."""
    for module in EXTRA_MODULES[extra]:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a broken parent package, or a stub without a spec
            found = False
        if not found:
            return module
    return None


def require_extra(command: str, extra: str) -> None:
    """Return when ``extra`` is installed; else print one line naming it and exit 2.

    ``command`` is the subcommand's name (``preview``), used in the line:
    ``pushguard preview: error: needs pulumi_gcp, which is not installed: install the "pulumi"
    extra: pip install "pushguard[pulumi] @ git+https://github.com/pushguard/pushguard@REF" ...``:
    the repository and a pinned ref (docs/install.md), never the bare name, which the package
    index would answer with whatever someone publishes under it.

    Raises:
        typer.Exit: code 2 when a module of the extra is missing.
    """
    module = missing_module(extra)
    if module is None:
        return
    repository = project_url("Repository")
    typer.echo(
        f"pushguard {command}: error: needs {module}, which is not installed: install the "
        f'"{extra}" extra: pip install "pushguard[{extra}] @ git+{repository}@REF" (REF: the '
        f"commit or tag you installed, see docs/install.md; from a clone of the repository: "
        f'pip install ".[{extra}]"; everything: pip install -e ".[dev]")',
        err=True,
    )
    raise typer.Exit(2)
