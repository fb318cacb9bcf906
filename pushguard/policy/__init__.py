"""Policy configuration, read the same way by every enforcement point.

- :mod:`pushguard.policy.settings`: :class:`PackSettings`, the settings every policy accepts, their
  JSON schema, and :meth:`PackSettings.apply`, the one overlay of settings onto rule facts;
- :mod:`pushguard.policy.config_file`: the ``policy-config.json`` file, reconciled into levels and
  settings exactly as the Pulumi CLI does, with one shared decision about ``all``.
- :mod:`pushguard.policy.exceptions` and :mod:`pushguard.policy.resources`: accepted risks, and
  the resources one can name (each form, who matches it, its one spelling).

Depends only on :mod:`pushguard.rules` (so a Spark executor can unpickle settings without loading
Pulumi or gRPC).
"""

from pushguard.policy.config_file import (
    PolicyConfig,
    PolicyConfigError,
    PolicyInfo,
    RuleConfig,
    load_policy_config,
    load_rule_config,
    parse_policy_config,
    pushguard_policies,
    reconcile,
    rule_config,
)
from pushguard.policy.settings import (
    PackConfigError,
    PackSettings,
    parse_settings,
    settings_json_schema,
)

__all__ = [
    "PackConfigError",
    "PackSettings",
    "PolicyConfig",
    "PolicyConfigError",
    "PolicyInfo",
    "RuleConfig",
    "load_policy_config",
    "load_rule_config",
    "parse_policy_config",
    "parse_settings",
    "pushguard_policies",
    "reconcile",
    "rule_config",
    "settings_json_schema",
]
