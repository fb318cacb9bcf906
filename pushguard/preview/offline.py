"""What the real ``pulumi preview`` would know and this offline run did not, as report entries
(:class:`~pushguard.gate.unknowns.UnknownOffline`), and the policy config's say on it.

Three sources besides the engine's reads (:mod:`pushguard.engine.reads`):

- the Pulumi ESC environments the stack file imports whose values were not given (``--values``,
  ``environments``), at the stack file's line naming each: their ``pulumiConfig`` and
  ``environmentVariables`` are missing, so with no ``gcp:project`` elsewhere the rules that
  need the project are not checked (the environment's ``GOOGLE_*`` variables never stand in:
  :meth:`pushguard.preview.stacks.LoadedStack.environ`); an inline ``values:`` block, and
  ``pulumiConfig`` given as ``"[secret]"``/``"[unknown]"``, likewise;
- the data sources (provider functions) the run answered as unknown (the run's
  ``unknown_calls``; the Python and Node.js SDKs send no source position with an invoke,
  ``sdk/python/lib/pulumi/runtime/invoke.py`` and ``sdk/nodejs/runtime/invoke.ts`` of
  pulumi/pulumi at commit 1b5949891b3c, so these have no line).

``unknownAtPreview: enforce`` on any policy of the pack (the same setting that makes a policy's
undecided value a violation, :class:`pushguard.policy.settings.PackSettings`; Pulumi passes
settings per policy, and pushguard refuses them under ``all``) makes a run with any such entry
exit 2, naming them: a PR check that asks for every value to be judged does not pass what was
never seen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pushguard.gate.unknowns import UnknownOffline
from pushguard.policy.config_file import PolicyConfig
from pushguard.preview.environments import ResolvedEnvironment, StackEnvironment

NOT_CHECKED = "resources created from it are not checked"

UNKNOWN_AT_PREVIEW = "unknownAtPreview"


def environment_unknowns(
    stack_file: str, declared: StackEnvironment, resolved: ResolvedEnvironment
) -> list[UnknownOffline]:
    """Entries for the ESC environments of ``stack_file`` (its path) whose values are not
    known (see the module docstring)."""
    entries = [
        UnknownOffline(
            "environment",
            item.name,
            f"Pulumi ESC environment {item.name}: its values (pulumiConfig, "
            "environmentVariables) are unknown offline (give what `esc open "
            f"{item.name} --format json` prints with --values, environments.{item.name}); "
            "config from it is missing, and with no gcp:project elsewhere the rules that need "
            "the project are not checked",
            (stack_file, item.line),
        )
        for item in resolved.unresolved
    ]
    if resolved.inline:
        entries.append(
            UnknownOffline(
                "environment",
                "(inline)",
                "the stack file's own environment values (environment: values:) are evaluated "
                "by Pulumi ESC and unknown offline; config from them is missing",
                (stack_file, declared.line),
            )
        )
    entries += [
        UnknownOffline(
            "environment",
            name,
            f"Pulumi ESC environment {name}: pulumiConfig {key} is not shown in the values "
            "file ([secret] or [unknown]), so unknown offline",
            (stack_file, _line_of(declared, name)),
        )
        for name, key in resolved.hidden
    ]
    return entries


def _line_of(declared: StackEnvironment, name: str) -> int:
    return next((i.line for i in declared.imports if i.name == name), declared.line or 1)


def call_unknowns(
    tokens: Iterable[str], details: Mapping[str, str] | None = None
) -> list[UnknownOffline]:
    """Entries for the provider functions (data sources) answered as unknown; ``details``: what
    more to say of a token (``"; ..."``: outputs the program could not be given as unknown)."""
    return [
        UnknownOffline(
            "dataSource",
            token,
            f"data source {token}: pulumi preview calls it; offline its result is unknown"
            f"{(details or {}).get(token, '')}; {NOT_CHECKED}",
        )
        for token in sorted(set(tokens))
    ]


def enforcing(resolved: Mapping[str, PolicyConfig]) -> list[str]:
    """The policies whose configuration (as the pack took it) says ``unknownAtPreview:
    enforce``, sorted."""
    return sorted(
        name
        for name, config in resolved.items()
        if config.properties.get(UNKNOWN_AT_PREVIEW) == "enforce"
    )


def enforce_error(entries: list[UnknownOffline], policies: list[str]) -> str:
    """The exit-2 message of a run with ``entries`` under ``unknownAtPreview: enforce`` (set
    on ``policies``)."""
    named = "; ".join(f"{e.kind} {e.name}" for e in entries)
    return (
        f"unknownAtPreview is enforce ({', '.join(policies)}) and {len(entries)} value(s) "
        f"that pulumi preview would know are unknown offline: {named}; give them with "
        "--values (stack references' outputs, ESC environments' values), or check this stack "
        "with `pulumi preview --policy-pack`"
    )
