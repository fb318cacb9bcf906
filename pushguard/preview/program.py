"""How a team's program failed, as the engine reports it (:class:`ProgramFailure`).

The failure is described in the program's own process by the executor script
(:mod:`pushguard.engine.bootstrap`) and read back by :mod:`pushguard.engine.launcher`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProgramFailure:
    """Why a program run failed: the innermost error's type and message, and the deepest frame
    inside the project folder (``file:line``), if any.

    ``component`` and ``problems`` are set when the error is ``PushSubscription`` refusing its
    inputs (``(field, message)`` pairs; a rule's violation ends with ``[rule-id]``);
    ``traceback`` is the whole traceback, for ``--debug``.
    """

    kind: str
    message: str
    where: str | None
    component: str | None = None
    problems: tuple[tuple[str, str], ...] = ()
    traceback: str = ""

    def __str__(self) -> str:
        at = f" (at {self.where})" if self.where else ""
        return f"the program raised {self.kind}{at}: {self.message}"
