"""Policy configs the guardrails tests compile: the defaults, and one with every setting the
compiler applies (exempt prefixes, perimeter projects by ID and number, projectNumbers, an
active exception, a disabled rule)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pushguard.policy.config_file import (
    RuleConfig,
    parse_policy_config,
    pushguard_policies,
    reconcile,
    rule_config,
)
from pushguard.policy.exceptions import utc_today

LEGACY = "projects/acme-orders/subscriptions/legacy"


def in_days(days: int) -> str:
    return (utc_today() + timedelta(days=days)).isoformat()


def rich_raw() -> dict[str, Any]:
    return {
        "push-endpoint-https": {
            "exemptEndpointPrefixes": [
                "https://partner.example/",
                "http://partner.example/hooks",
                "rpc://",
                'http://quote.example/a"b\\c',
            ],
            "exceptions": [{"resource": LEGACY, "reason": "migrating", "expires": in_days(30)}],
        },
        "push-vpcsc-default-url": {"perimeterProjects": ["acme-orders", "222222222222"]},
        "push-auth-oidc": {
            "exceptions": [{"resource": LEGACY, "reason": "migrating", "expires": in_days(30)}]
        },
        "push-sa-broad-grants": "disabled",
        "projectNumbers": {"acme-orders": "111111111111"},
    }


def config(raw: dict[str, Any] | None = None) -> RuleConfig:
    """The reconciled config of ``raw`` (``None``: the defaults), as the audit reads one."""
    return rule_config(reconcile(pushguard_policies(), parse_policy_config(raw or {}), source="t"))
