"""The files ``pushguard guardrails`` writes, in the formats ``gcloud`` reads, and how they are
written (all at once, or none).

- ``constraints/<constraint>.yaml``: a custom constraint, the fields of the ``CustomConstraint``
  resource (``name``, ``resourceTypes``, ``methodTypes``, ``condition``, ``actionType``,
  ``displayName``, ``description``: :data:`~pushguard.guardrails.sources.CUSTOM_CONSTRAINT_REST`),
  for ``gcloud org-policies set-custom-constraint FILE``
  (:data:`~pushguard.guardrails.sources.CUSTOM_CONSTRAINTS_PAGE`);
- ``policies/<constraint>.yaml`` (the perimeter rule: ``<constraint>--<project>.yaml``): an
  organization policy (``name``, and ``dryRunSpec`` or ``spec`` with ``rules``, each ``enforce``
  and for a tag an ``condition.expression``: :data:`~pushguard.guardrails.sources.POLICY_REST`,
  :data:`~pushguard.guardrails.sources.POLICY_RULE_REST`), for ``gcloud org-policies set-policy
  FILE``; a dry-run policy logs violations and denies nothing
  (:data:`~pushguard.guardrails.sources.DRY_RUN_PAGE`). A tag-conditioned policy has the tag's
  rule and the one unconditional rule, ``enforce: false``, that a boolean policy with conditions
  needs (:data:`~pushguard.guardrails.sources.POLICY_SPEC_RULES`);
- ``scc/<module>.yaml``: a Security Health Analytics custom config in the property names of the
  SHA page (``resource_selector.resource_types``, ``predicate.expression``, ``severity``,
  ``description`` and ``recommendation`` in quotation marks:
  :data:`~pushguard.guardrails.sources.SHA_CODE_PAGE`), for ``gcloud scc custom-modules sha create
  --display-name=MODULE --custom-config-from-file=FILE``;
- ``coverage.json``: per rule and target, the status and why (:func:`coverage_json`).

Everything is rendered before anything is written, into a temporary folder beside ``DIR``, which
then takes ``DIR``'s place (:func:`write_outputs`): a failure leaves ``DIR`` as it was. Output is
deterministic (same input, byte-identical files).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from pushguard.guardrails.compiler import iter_coverage
from pushguard.guardrails.managed import WIDER_THAN_RULES
from pushguard.guardrails.model import GuardrailError, Guardrails, PolicyFile
from pushguard.guardrails.sources import MODIFY_PUSH_CONFIG_NOTE


class _Quoted(str):
    """A string YAML writes in double quotes (the SHA page's description and recommendation)."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(
    _Quoted, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", str(v), style='"')
)


def _yaml(data: dict[str, Any]) -> str:
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=1 << 16,
        default_flow_style=False,
    )


def policy_document(policy: PolicyFile) -> dict[str, Any]:
    """The ``gcloud org-policies set-policy`` file of ``policy``: ``name`` and its ``spec`` or
    ``dryRunSpec`` with ``rules`` (``enforce``, and a tag rule's ``condition.expression``)."""
    rules: list[dict[str, Any]] = [{"enforce": True}]
    if policy.tag_condition:
        rules = [
            {"condition": {"expression": policy.tag_condition}, "enforce": True},
            {"enforce": False},
        ]
    spec = "spec" if policy.enforced else "dryRunSpec"
    return {"name": policy.name, spec: {"rules": rules}}


def render(guardrails: Guardrails) -> dict[str, str]:
    """Every file, by its path under ``DIR``, with its content."""
    files: dict[str, str] = {}
    for c in guardrails.constraints:
        files[f"constraints/{c.constraint_id}.yaml"] = _yaml(
            {
                "name": c.name,
                "resourceTypes": list(c.resource_types),
                "methodTypes": list(c.method_types),
                "condition": c.condition,
                "actionType": c.action_type,
                "displayName": c.display_name,
                "description": c.description,
            }
        )
    for p in guardrails.policies:
        files[f"policies/{p.file_stem}.yaml"] = _yaml(policy_document(p))
    for m in guardrails.modules:
        files[f"scc/{m.display_name}.yaml"] = _yaml(
            {
                "resource_selector": {"resource_types": list(m.resource_types)},
                "predicate": {"expression": m.expression},
                "severity": m.severity,
                "description": _Quoted(m.description),
                "recommendation": _Quoted(m.recommendation),
            }
        )
    files["coverage.json"] = coverage_json(guardrails)
    return files


def coverage_json(guardrails: Guardrails) -> str:
    """``coverage.json``: the organisation, the notes every rule shares (ModifyPushConfig, the
    Google-managed forms), and per rule (in ``RULES`` order) each target's status and reason."""
    names = {c.rule_id: c.constraint_id for c in guardrails.constraints}
    modules = {m.rule_id: m.display_name for m in guardrails.modules}
    rules = []
    for rule_id, constraint, sha in iter_coverage(guardrails):
        rules.append(
            {
                "rule": rule_id,
                "constraint": {
                    "status": constraint.status.value,
                    "reason": constraint.reason,
                    "name": names.get(rule_id),
                },
                "sha": {
                    "status": sha.status.value,
                    "reason": sha.reason,
                    "module": modules.get(rule_id),
                },
            }
        )
    data = {
        "organization": guardrails.organization,
        "notes": {"modifyPushConfig": MODIFY_PUSH_CONFIG_NOTE, "googleManaged": WIDER_THAN_RULES},
        "rules": rules,
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_outputs(folder: Path, files: dict[str, str]) -> None:
    """Write ``files`` into ``folder`` in one step: into a temporary folder beside it, then
    renamed into place. ``folder`` may not exist, be empty, or hold a previous output of this
    command (a ``coverage.json`` at its top), which is replaced.

    Raises:
        GuardrailError: ``folder`` holds something else, or is a file.
    """
    folder = folder.absolute()
    if folder.exists() and (
        not folder.is_dir() or (any(folder.iterdir()) and not (folder / "coverage.json").is_file())
    ):
        raise GuardrailError(
            "-o",
            f"{folder} must be a new or empty folder, or a previous output of pushguard guardrails",
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for name, content in sorted(files.items()):
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        old = folder.with_name(f".{folder.name}.old") if folder.exists() else None
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
            folder.rename(old)
        staging.rename(folder)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
