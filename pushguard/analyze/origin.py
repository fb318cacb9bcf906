"""Where an analysed stack's resources come from: its state file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushguard.gate.report import shown
from pushguard.gate.result import Origin


@dataclass(frozen=True, eq=False)
class StateOrigin(Origin):
    """A stack read from its state (``pushguard analyze``): the state file, the line of the
    stack resource in it (findings about the whole stack point there), the deployment schema
    version and the Pulumi version that wrote it. Resources point at their own lines in the
    file."""

    tool = "pushguard-analyze"
    operation = "same"
    run_name = "Analysis"

    path: Path
    stack_line: int = 1
    version: int = 3
    pulumi_version: str = ""

    def project_file(self, relative: str) -> Path:
        """``relative`` beside the state file."""
        return self.path.resolve().parent / relative

    def code_folder(self) -> Path | None:
        """The state file's folder (each resource's source is its line in the file)."""
        return self.path.resolve().parent

    def stack_location(self) -> tuple[Path, int]:
        """The stack resource's line in the state file."""
        return self.path.resolve(), self.stack_line

    def heading(self, stack: str, pack: str) -> str:
        """``Analysing the state of STACK (FILE) with PACK``."""
        return f"Analysing the state of {stack} ({shown(str(self.path))}) with {pack}\n"

    def resources_phrase(self, count: int) -> str:
        """``N in the state``."""
        return f"{count} in the state"

    def report_fields(self, relative: Callable[[Path], str]) -> dict[str, Any]:
        """``state``: the file (as the report writes paths), its deployment version and the
        Pulumi version that wrote it."""
        return {
            "state": {
                "path": relative(self.path.resolve()),
                "deploymentVersion": self.version,
                "pulumiVersion": self.pulumi_version,
            }
        }
