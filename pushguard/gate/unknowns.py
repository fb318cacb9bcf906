"""What the real ``pulumi preview`` would know that an offline run does not: one entry per
value, with where it comes from, for every report format.

``pulumi preview`` reads a ``StackReference``'s outputs and any other resource a program reads
(``ReadResource``: the builtin provider reads the referenced stack, a cloud provider reads the
cloud; ``readStackReference`` in ``pkg/resource/deploy/builtins.go`` of pulumi/pulumi, commit
1b5949891b3c), calls data sources (``Invoke``), and opens the Pulumi ESC environments the stack
imports (``openStackEnv`` in ``pkg/cmd/pulumi/config/io.go``). Offline these are unknown unless
the team gives them (``pushguard preview --values``); what a program builds from an unknown
value (a resource made inside ``.apply()`` on it) is never registered, so it is not checked.
Each report lists these entries (text: "Unknown offline"; JSON: ``unknownOffline``; SARIF: a
note among the invocation's execution notifications), so a gap is never silent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

UNKNOWN_OFFLINE = "unknown-offline"
"""The SARIF notification descriptor of an entry."""

KINDS = ("environment", "stackReference", "read", "dataSource")
"""Entry kinds, in report order: an ESC environment the stack imports, a ``StackReference``,
another resource read, a data source (function) answered as unknown."""


@dataclass(frozen=True)
class UnknownOffline:
    """One value the real preview would know: its ``kind`` (one of :data:`KINDS`), ``name``
    (the environment, the referenced stack, ``TYPE NAME`` of a read, a function token), the
    ``message`` the reports print, and ``source``: the program's line (a read) or the stack
    config file's line (an environment), absolute path and line; ``None`` where the SDK sends
    none (an invoke)."""

    kind: str
    name: str
    message: str
    source: tuple[str, int] | None = None

    def location(self, relative: Callable[[Path], str]) -> dict[str, Any] | None:
        """``{"path", "line"}`` of :attr:`source`, the path as ``relative`` writes it (the
        reports' form, :func:`pushguard.gate.report.location`), or ``None`` without one."""
        if self.source is None:
            return None
        return {"path": relative(Path(self.source[0]).resolve()), "line": max(self.source[1], 1)}

    def to_json(
        self, relative: Callable[[Path], str], text: Callable[[str], str]
    ) -> dict[str, Any]:
        """The JSON report's entry: ``kind``, ``name``, ``message`` (through ``text``) and
        ``location`` (:meth:`location`)."""
        return {
            "kind": self.kind,
            "name": self.name,
            "message": text(self.message),
            "location": self.location(relative),
        }

    def sort_key(self) -> tuple[int, str, str, str, int]:
        """Report order: by kind, name, then place."""
        path, line = self.source if self.source is not None else ("", 0)
        return (KINDS.index(self.kind), self.name, self.message, path, line)


def sorted_unknowns(entries: list[UnknownOffline]) -> list[UnknownOffline]:
    """``entries`` without duplicates, in report order (the same input, the same report)."""
    return sorted(set(entries), key=UnknownOffline.sort_key)
