"""Google's own guardrails from pushguard's rules: what of each rule the Pub/Sub subscription
resource alone decides, compiled to CEL for Organization Policy custom constraints (deny at the
API, for every client, dry run first) and Security Health Analytics custom modules (detective).

The API (for ``pushguard guardrails`` and the ``OrgGuardrails`` component):

- :func:`compile_guardrails` ``(config, organization, options) -> Guardrails``: ``config`` is a
  :class:`~pushguard.policy.config_file.RuleConfig`
  (:func:`~pushguard.policy.config_file.load_rule_config` of a policy-config file, or
  ``load_rule_config(None)`` for the defaults), ``organization`` the organization ID,
  ``options`` an :class:`Options` (``method_types``, ``enforce``, ``perimeter_tag``, ``today``).
  It raises :class:`GuardrailError` (``field``, ``message``) for bad input or a documented limit
  exceeded. The result holds :class:`Constraint` (``name``, ``constraint_id``,
  ``resource_types``, ``method_types``, ``condition``, ``action_type``, ``display_name``,
  ``description``), :class:`PolicyFile` (``name``, ``constraint_id``, ``enforced``,
  ``tag_condition``), :class:`ShaModule` (``display_name``, ``expression``, ``resource_types``,
  ``severity``, ``description``, ``recommendation``) and :class:`Coverage` (``rule_id``,
  ``target``, ``status``, ``reason``) values: what ``gcp.orgpolicy.CustomConstraint``,
  ``gcp.orgpolicy.Policy`` (``dry_run_spec``/``spec`` with one rule ``enforce: true``, or the tag
  rule) and ``gcp.securitycenter.ManagementOrganizationSecurityHealthAnalyticsCustomModule``
  take.
- :func:`render` ``(guardrails) -> {path: text}`` and :func:`write_outputs` ``(folder, files)``:
  the gcloud files and coverage.json.

Sources of every fact: :mod:`pushguard.guardrails.sources`. Needs the ``guardrails`` extra
(cel-python, PyYAML).
"""

from __future__ import annotations

from pushguard.guardrails.compiler import Options, compile_guardrails, constraint_id
from pushguard.guardrails.files import render, write_outputs
from pushguard.guardrails.model import (
    Constraint,
    Coverage,
    GuardrailError,
    Guardrails,
    PolicyFile,
    ShaModule,
    Status,
)

__all__ = [
    "Constraint",
    "Coverage",
    "GuardrailError",
    "Guardrails",
    "Options",
    "PolicyFile",
    "ShaModule",
    "Status",
    "compile_guardrails",
    "constraint_id",
    "render",
    "write_outputs",
]
