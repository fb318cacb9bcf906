"""The pages every fact of the guardrails compiler stands on, by name, so docstrings, the generated
descriptions and docs/guardrails.md cite the same addresses.

Read this round (issue 38) with the project's search tools; what each page says that the compiler
relies on is quoted where it is used (:mod:`pushguard.guardrails.limits`,
:mod:`pushguard.guardrails.subset`, :mod:`pushguard.guardrails.files`).
"""

from __future__ import annotations

from typing import Final

CUSTOM_CONSTRAINTS_PAGE: Final = (
    "https://docs.cloud.google.com/resource-manager/docs/organization-policy/"
    "creating-managing-custom-constraints"
)
"""Organization Policy: "Creating and managing custom constraints"."""

CUSTOM_CONSTRAINT_REST: Final = (
    "https://cloud.google.com/resource-manager/docs/reference/orgpolicy/rest/v2/"
    "organizations.customConstraints"
)
"""The ``CustomConstraint`` REST resource: field names, the name, condition, display name and
description limits, ``MethodType`` ("UPDATE only custom constraints are not supported. Use CREATE
or CREATE, UPDATE.")."""

POLICY_REST: Final = (
    "https://docs.cloud.google.com/policy-intelligence/docs/reference/policysimulator/rest/"
    "Shared.Types/Policy"
)
"""The organization policy (``name``, ``spec``, ``dryRunSpec``, ``etag``)."""

POLICY_RULE_REST: Final = (
    "https://googleapis.dev/dotnet/Google.Apis.OrgPolicyAPI.v2/latest/api/"
    "Google.Apis.OrgPolicyAPI.v2.Data.GoogleCloudOrgpolicyV2PolicySpecPolicyRule.html"
)
"""``PolicySpec.PolicyRule``: ``enforce``, and ``condition``, whose expression "must contain 1 to
10 subexpressions, joined by the || or && operators. Each subexpression must use the
resource.matchTag(), resource.matchTagId(), resource.hasTagKey(), or resource.hasTagKeyId()"
function; ``matchTag`` takes the tag key's namespaced name (``123456789012/environment``) and the
value's short name."""

POLICY_SPEC_RULES: Final = (
    "https://pub.dev/documentation/googleapis/latest/orgpolicy_v2/"
    "GoogleCloudOrgpolicyV2PolicySpec/rules.html"
)
"""``PolicySpec.rules`` (generated from Google's API description): "In policies for boolean
constraints [...] There must be one and only one policy rule where condition is unset. Boolean
policy rules with conditions must set enforced to the opposite of the policy rule without a
condition" (quoted)."""

DRY_RUN_PAGE: Final = "https://docs.cloud.google.com/organization-policy/test-policies"
"""Organization policies in dry-run mode: "violations of the policy are audit logged, but the
violating actions aren't denied"."""

PUBSUB_CUSTOM_CONSTRAINTS_PAGE: Final = (
    "https://docs.cloud.google.com/pubsub/docs/custom-constraints"
)
"""Pub/Sub, "Use custom organization policies": ``pubsub.googleapis.com/Subscription`` is
supported; a constraint name "must start with custom., and can only include uppercase letters,
lowercase letters, or numbers"; the condition "has a maximum length of 1000 characters"; the
example condition ``has(resource.messageRetentionDuration)``."""

SHA_CODE_PAGE: Final = (
    "https://docs.cloud.google.com/security-command-center/docs/custom-modules-sha-code"
)
"""Security Command Center, "Code a custom module for Security Health Analytics": the YAML
properties ``resource_selector.resource_types`` ("one to five resource types", none twice),
``predicate.expression`` (a finding when it "resolve[s] to TRUE"), ``description`` and
``recommendation`` ("The text must be enclosed in quotation marks"), ``severity``."""

SHA_CUSTOM_CONFIG_REST: Final = (
    "https://cloud.google.com/security-command-center/docs/reference/"
    "security-center-management/rest/v1/CustomConfig"
)
"""The ``CustomConfig`` REST resource (``predicate``, ``customOutput``, ``resourceSelector``,
``severity``, ``description``, ``recommendation``; "Each custom module can specify up to 5
resource types")."""

SHA_GCLOUD_CREATE: Final = (
    "https://cloud.google.com/sdk/gcloud/reference/scc/custom-modules/sha/create"
)
"""``gcloud scc custom-modules sha create --custom-config-from-file=PATH_TO_FILE
--display-name=DISPLAY_NAME --enablement-state=ENABLEMENT_STATE [--organization=...]`` (its
example display name: ``test_display_name``)."""

SUBSCRIPTION_REST: Final = (
    "https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions"
)
"""The Pub/Sub ``Subscription`` REST resource the conditions are evaluated over."""

MODIFY_PUSH_CONFIG_NOTE: Final = (
    "Whether UPDATE covers the ModifyPushConfig call (which changes only the push config) is not "
    "documented on the pages read; a push config changed that way may not meet the constraint. "
    "The Security Health Analytics module and the audit still see it."
)
"""What coverage.json and the docs say of ``ModifyPushConfig`` (issue 38)."""
