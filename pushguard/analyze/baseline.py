"""``pushguard analyze --baseline PREVIOUS.json``: what changed since a previous analysis.

The baseline is the JSON report of an earlier ``pushguard analyze`` run that completed (no
``error``, exit code 0 or 1). Findings are matched by their ``findingId``
(:func:`pushguard.rules.identity.finding_id`; for a pack that writes none, by policy, URN and
message): each violation of this run is ``new`` or ``existing``, and each baseline finding of a
stack analysed in this run that is gone is **resolved**. A stack the baseline has but this run
did not analyse resolves nothing (it was not looked at).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pushguard.gate.result import StackResult, Violation


class BaselineError(ValueError):
    """The baseline cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class BaselineFinding:
    """One violation of the baseline report, as it wrote it."""

    project: str
    stack: str
    policy: str
    urn: str
    finding_id: str
    level: str
    message: str

    @property
    def key(self) -> str:
        """What a finding is matched by."""
        return self.finding_id or "\0".join((self.policy, self.urn, self.message))


def _key(v: Violation) -> str:
    return v.finding_id or "\0".join((v.policy, v.urn, v.message))


def _findings(path: Path, report: Mapping[str, Any]) -> list[BaselineFinding]:
    found = []
    for s, stack in enumerate(report["stacks"]):
        if not isinstance(stack, Mapping) or not isinstance(stack.get("violations"), list):
            raise BaselineError(f"baseline {path}: stacks[{s}] has no violations list")
        for n, v in enumerate(stack["violations"]):
            fields = ("policy", "urn", "findingId", "level", "message")
            if not isinstance(v, Mapping) or not all(isinstance(v.get(f), str) for f in fields):
                raise BaselineError(
                    f"baseline {path}: stacks[{s}].violations[{n}] lacks one of "
                    f"{', '.join(fields)} (a report of a pushguard older than finding IDs?)"
                )
            found.append(
                BaselineFinding(
                    str(stack.get("project", "")),
                    str(stack.get("stack", "")),
                    v["policy"],
                    v["urn"],
                    v["findingId"],
                    v["level"],
                    v["message"],
                )
            )
    return found


def load_baseline(path: Path) -> list[BaselineFinding]:
    """The findings of a previous ``pushguard analyze --format json`` report.

    Raises:
        BaselineError: the file cannot be read, is not JSON, is not an analyze report, or is the
            report of a run that failed (``error``, exit code 2).
    """
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BaselineError(f"baseline {path} cannot be read ({error.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaselineError(f"baseline {path} is not a JSON report: {error}") from None
    if not isinstance(report, Mapping) or not isinstance(report.get("stacks"), list):
        raise BaselineError(
            f"baseline {path} is not a 'pushguard analyze --format json' report (no stacks list)"
        )
    exit_code = (
        report.get("summary", {}).get("exitCode")
        if isinstance(report.get("summary"), Mapping)
        else None
    )
    if "error" in report or exit_code not in (0, 1):
        raise BaselineError(
            f"baseline {path} is the report of a run that did not complete (exit code "
            f"{exit_code}); use the report of a completed analysis"
        )
    return _findings(path, report)


def compare(stacks: list[StackResult], baseline: list[BaselineFinding]) -> list[BaselineFinding]:
    """Mark each violation of ``stacks`` ``new`` or ``existing`` (in place) and return the
    baseline findings resolved: of a stack analysed now, and no longer found (in baseline
    order)."""
    known = {f.key for f in baseline}
    current: set[str] = set()
    analysed: set[tuple[str, str]] = set()
    for result in stacks:
        analysed.add((result.project, result.stack))
        marked = []
        for v in result.violations:
            key = _key(v)
            current.add(key)
            marked.append(dataclasses.replace(v, change="existing" if key in known else "new"))
        result.violations = marked
    return [f for f in baseline if (f.project, f.stack) in analysed and f.key not in current]


def resolved_json(resolved: list[BaselineFinding]) -> list[dict[str, str]]:
    """The resolved findings as the JSON report lists them."""
    return [
        {
            "project": f.project,
            "stack": f.stack,
            "policy": f.policy,
            "urn": f.urn,
            "findingId": f.finding_id,
            "level": f.level,
            "message": f.message,
        }
        for f in resolved
    ]
