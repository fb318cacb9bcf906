"""The Terraform ``google`` and ``google-beta`` providers bridged with ``pulumi package add
terraform-provider`` -> pulumi-gcp's wire form.

A dynamically bridged provider names every resource ``PACKAGE:index/MEMBER:TYPE``: one module,
``index``, and the Terraform resource name without its ``google_`` prefix, in camelCase
(``MEMBER``) and PascalCase (``TYPE``): ``google_pubsub_subscription`` is
``google:index/pubsubSubscription:PubsubSubscription`` and, for ``hashicorp/google-beta``,
``google-beta:index/pubsubSubscription:PubsubSubscription``
(``tokens.SingleModule(prefix, "index", tokens.MakeStandard(name))`` in
https://github.com/pulumi/pulumi-terraform-bridge/blob/master/dynamic/info.go). The properties are
the Terraform schema's attributes in camelCase, single-item blocks as objects: the same schema
pulumi-gcp is bridged from (https://registry.terraform.io/providers/hashicorp/google/latest/docs/resources/pubsub_subscription,
``push_config.oidc_token.service_account_email``, ``project``...), so only the type token changes.
The project: the resource's ``project``, else the provider's (``google:project`` or
``google-beta:project`` for the default provider, which like pulumi-gcp also reads
``GOOGLE_PROJECT``... from its environment). Keys are read as the bridge reads them
(``push_config``, ``PushConfig``: :func:`~pushguard.crossguard.routes.names.bridged`, applied by
:func:`pushguard.crossguard.routes.canonical` before :func:`to_gcp`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pushguard.crossguard.graph import (
    ACCOUNT,
    FUNCTION_V1,
    FUNCTION_V2,
    PERIMETER,
    PERIMETER_RESOURCE,
    PERIMETERS,
    RUN_V1,
    RUN_V2,
    TOPIC,
)
from pushguard.crossguard.resources import SUBSCRIPTION_TYPE, WireResource
from pushguard.state.subscriptions import TERRAFORM_PACKAGES

PACKAGES: tuple[str, ...] = TERRAFORM_PACKAGES
"""The package names ``pulumi package add terraform-provider hashicorp/google`` (and
``hashicorp/google-beta``) registers resources under."""

_PLAIN: Mapping[str, str] = {
    "pubsubSubscription": SUBSCRIPTION_TYPE,
    "pubsubTopic": TOPIC,
    "serviceAccount": ACCOUNT,
    "cloudRunV2Service": RUN_V2,
    "cloudRunService": RUN_V1,
    "cloudfunctionsFunction": FUNCTION_V1,
    "cloudfunctions2Function": FUNCTION_V2,
    "accessContextManagerServicePerimeter": PERIMETER,
    "accessContextManagerServicePerimeters": PERIMETERS,
    "accessContextManagerServicePerimeterResource": PERIMETER_RESOURCE,
}

# Terraform IAM resource -> pulumi-gcp's, per kind (Member, Binding, Policy).
_IAM: Mapping[str, str] = {
    "serviceAccountIam": "gcp:serviceaccount/iAM{k}:IAM{k}",
    "projectIam": "gcp:projects/iAM{k}:IAM{k}",
    "cloudRunV2ServiceIam": "gcp:cloudrunv2/serviceIam{k}:ServiceIam{k}",
    "cloudRunServiceIam": "gcp:cloudrun/iam{k}:Iam{k}",
    "cloudfunctionsFunctionIam": "gcp:cloudfunctions/functionIam{k}:FunctionIam{k}",
    "pubsubTopicIam": "gcp:pubsub/topicIAM{k}:TopicIAM{k}",
    "pubsubSubscriptionIam": "gcp:pubsub/subscriptionIAM{k}:SubscriptionIAM{k}",
}


def _table() -> dict[str, str]:
    members = dict(_PLAIN)
    for stem, gcp in _IAM.items():
        for kind in ("Member", "Binding", "Policy"):
            members[f"{stem}{kind}"] = gcp.format(k=kind)
    table: dict[str, str] = {}
    for package in PACKAGES:
        for member, gcp in members.items():
            table[f"{package}:index/{member}:{member[0].upper()}{member[1:]}"] = gcp
    return table


TYPES: Mapping[str, str] = _table()
"""Bridged type token -> the pulumi-gcp type token with the same Terraform schema."""

SUBSCRIPTION_TYPES: tuple[str, ...] = tuple(t for t, g in TYPES.items() if g == SUBSCRIPTION_TYPE)


def to_gcp(resource: WireResource) -> WireResource:
    """``resource`` (a type of :data:`TYPES`) as the pulumi-gcp resource with the same schema:
    only the type token changes (URN, name, properties and provider are kept)."""
    return replace(resource, type=TYPES[resource.type])
