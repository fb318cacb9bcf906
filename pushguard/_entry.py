"""The ``pushguard`` console script's entry point: the CLI, or one line naming the extra to
install when the Pulumi dependencies are missing.

The ``pulumi``, ``pulumi-gcp`` and ``pulumi-policy`` distributions (and gRPC, which they bring)
are in the ``pulumi`` extra, so that a push endpoint can install ``pushguard[receiver]`` alone
(pyproject.toml). The command needs them; without them it exits 2 (a failed run, the CLI's exit
code contract) with that line instead of a traceback.
"""

from __future__ import annotations

import sys

PULUMI_MODULES = frozenset({"pulumi", "pulumi_gcp", "pulumi_policy", "grpc", "google.protobuf"})
"""Top-level modules of the ``pulumi`` extra's distributions."""

INSTALL_HINT = (
    'install the "pulumi" extra: pip install "pushguard[pulumi]" (from a clone of the '
    'repository: pip install ".[pulumi]"; for everything: pip install -e ".[dev]")'
)


def main() -> None:
    """Run the ``pushguard`` command (:func:`pushguard.cli.main`)."""
    try:
        from pushguard.cli import main as cli_main  # noqa: PLC0415 - the point of this module
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if missing.split(".")[0] not in PULUMI_MODULES and missing not in PULUMI_MODULES:
            raise
        sys.stderr.write(f"pushguard: the command needs {missing}, which is not installed: ")
        sys.stderr.write(f"{INSTALL_HINT}\n")
        sys.exit(2)
    cli_main()
