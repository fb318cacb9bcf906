"""One pack session, as the Pulumi CLI holds it: the pack connected and configured once, and its
answers turned into the result model (:class:`~pushguard.gate.result.Violation`,
:class:`~pushguard.gate.result.PolicyMeta`). The preview and analyze both open sessions this
way."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pushguard.crossguard.finding_note import decode
from pushguard.gate.analyzer import Diagnostic, PolicyPackProcess, initial_config, policy_infos
from pushguard.gate.result import PolicyMeta, Violation
from pushguard.policy.config_file import PROJECT_NUMBERS, PolicyConfig, reconcile, rule_config

PUSHGUARD_PACK = "pushguard"
"""The name pushguard's own pack reports; its settings are checked before any analysis."""

_SEVERITIES = {0: "", 1: "low", 2: "medium", 3: "high", 4: "critical"}


@dataclass(frozen=True)
class PackSession:
    """A connected, configured pack: ``info`` is its ``GetAnalyzerInfo`` answer, ``resolved``
    each policy's configuration as the pack took it, ``policies`` their metadata for reports."""

    pack: PolicyPackProcess
    info: Any
    resolved: dict[str, PolicyConfig]
    policies: dict[str, PolicyMeta]

    @classmethod
    def open(
        cls, pack: PolicyPackProcess, config: Mapping[str, PolicyConfig], source: str = ""
    ) -> PackSession:
        """Wait for the started ``pack``, ask its info and configure it with ``config`` (read
        from the file ``source``) as the CLI does.

        Raises:
            PackStartError: the pack did not start.
            PolicyConfigError: the config does not fit the pack's schemas, or (pushguard's own
                pack) holds settings the pack would refuse on every subscription.
            grpc.RpcError: the pack failed a call.
        """
        pack.connect()
        info = pack.info()
        if info.name == PUSHGUARD_PACK:
            # refused once here, before the pack sees it, not on every subscription
            policies, initial = policy_infos(info), initial_config(info)
            rule_config(reconcile(policies, config, initial, source, info.name), source)
        resolved = pack.configure(config, source=source)
        if info.name == PUSHGUARD_PACK:
            rule_config(resolved, source)
        meta = policy_meta(info, resolved)
        if info.name == PUSHGUARD_PACK:
            meta.pop(PROJECT_NUMBERS, None)  # settings, not a check: no rule in the reports
        return cls(pack, info, resolved, meta)

    @property
    def name(self) -> str:
        """The pack's name."""
        return str(self.info.name)

    @property
    def version(self) -> str:
        """The pack's version."""
        return str(self.info.version)

    def violations(self, diagnostics: list[Diagnostic]) -> list[Violation]:
        """The pack's diagnostics as :class:`Violation` values, in the same order."""
        return [to_violation(d, self.policies) for d in diagnostics]


def to_violation(diagnostic: Diagnostic, policies: Mapping[str, PolicyMeta]) -> Violation:
    """The :class:`Violation` of one pack diagnostic: ``mandatory`` and ``remediate`` count as
    mandatory, anything else as advisory; the remediation comes from the policy's metadata in
    ``policies`` (``""`` for a policy not listed there). The finding's ID and exception are
    read from the message (:func:`pushguard.crossguard.finding_note.decode`). An active
    exception is honoured only when the pack lowered the diagnostic to advisory (as the Pulumi
    CLI would see it); the violation then keeps its policy's configured level, marked excepted."""
    level = "mandatory" if diagnostic.level in ("mandatory", "remediate") else "advisory"
    meta = policies.get(diagnostic.policy)
    note = decode(diagnostic.message)
    excepted = note.excepted
    if excepted is not None and excepted.active:
        if level == "mandatory":
            excepted = None  # the pack did not apply it: it counts
        elif meta is not None and meta.level in ("mandatory", "remediate"):
            level = "mandatory"
    return Violation(
        policy=diagnostic.policy,
        level=level,
        urn=diagnostic.urn,
        message=note.message,
        remediation=meta.remediation if meta else "",
        finding_id=note.finding_id,
        excepted=excepted,
    )


def policy_meta(info: Any, levels: Mapping[str, PolicyConfig]) -> dict[str, PolicyMeta]:
    """Policy name to :class:`PolicyMeta` for every policy in the pack's ``GetAnalyzerInfo``
    answer ``info``, with each policy's level as configured in ``levels`` (``advisory`` when
    not configured) and its severity as a word (``""`` when unspecified)."""
    return {
        p.name: PolicyMeta(
            name=p.name,
            display_name=p.displayName,
            description=p.description,
            level=(levels[p.name].level or "advisory") if p.name in levels else "advisory",
            severity=_SEVERITIES.get(p.severity, ""),
            remediation=p.remediation_steps,
            url=p.url,
        )
        for p in info.policies
    }
