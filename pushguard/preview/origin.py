"""Where a preview's resources come from (a program and its stack config), and the error that
ends a preview (:class:`PreviewError`)."""

from __future__ import annotations

from pathlib import Path

from pushguard.gate.result import Origin, RunError
from pushguard.preview.project import PulumiProject


class PreviewError(RunError):
    """The preview could not run (bad usage, missing config, the program raised or ended, the
    pack failed); the message says which and why. The CLI exits 2 and still writes the report.

    ``result`` holds what was known when it failed (project, stack, the program's output,
    findings of a ``PushSubscription`` refusal), or ``None`` before the project was read;
    ``debug`` is the program's traceback, shown with ``--debug``.
    """


class ProgramOrigin(Origin):
    """A stack previewed from its program: findings point at the constructor calls inside the
    program's folder, and findings about the whole stack at the stack's config file."""

    tool = "pushguard-preview"
    operation = "create"
    run_name = "Preview"

    def __init__(self, project: PulumiProject, stack: str) -> None:
        self.project, self.stack = project, stack

    def project_file(self, relative: str) -> Path:
        """``relative`` under the project folder."""
        return self.project.root.resolve() / relative

    def code_folder(self) -> Path | None:
        """The folder of the program's entry point."""
        return self.project.entry_point.resolve().parent

    def stack_location(self) -> tuple[Path, int]:
        """The first line of ``Pulumi.<stack>.yaml``."""
        return self.project.stack_config_file(self.stack).resolve(), 1

    def heading(self, stack: str, pack: str) -> str:
        """``Previewing STACK with PACK (offline)``."""
        return f"Previewing {stack} with {pack} (offline)\n"

    def resources_phrase(self, count: int) -> str:
        """``N to create``."""
        return f"{count} to create"
