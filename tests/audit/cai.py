"""Cloud Asset Inventory export lines in the real shapes of the fixtures in tests/fixtures/cai/
(forseti's and cloud-foundation-toolkit's snake_case GCS exports): builders for test scenarios."""

from __future__ import annotations

import json
from typing import Any

ORG = "organizations/111222333"
FOLDER = "folders/444555"
CRM = "//cloudresourcemanager.googleapis.com/"


def line(asset: dict[str, Any]) -> str:
    return json.dumps(asset, separators=(",", ":"))


def ancestors(number: str) -> list[str]:
    return [f"projects/{number}", FOLDER, ORG]


def project(project_id: str, number: str) -> dict[str, Any]:
    return {
        "name": f"{CRM}projects/{number}",
        "asset_type": "cloudresourcemanager.googleapis.com/Project",
        "resource": {
            "version": "v1",
            "discovery_name": "Project",
            "parent": f"{CRM}{FOLDER}",
            "data": {
                "projectId": project_id,
                "projectNumber": number,
                "lifecycleState": "ACTIVE",
                "parent": {"type": "folder", "id": FOLDER.split("/")[1]},
            },
        },
        "ancestors": ancestors(number),
    }


def organization() -> dict[str, Any]:
    """The organization's own resource, which an organization-wide resource export lists (as
    forseti's mock_cai_resources.dump does)."""
    return {
        "name": f"{CRM}{ORG}",
        "asset_type": "cloudresourcemanager.googleapis.com/Organization",
        "resource": {
            "version": "v1",
            "discovery_name": "Organization",
            "data": {"name": ORG, "displayName": "acme.example", "lifecycleState": "ACTIVE"},
        },
        "ancestors": [ORG],
    }


def folder() -> dict[str, Any]:
    return {
        "name": f"{CRM}{FOLDER}",
        "asset_type": "cloudresourcemanager.googleapis.com/Folder",
        "resource": {"parent": f"{CRM}{ORG}", "data": {"name": FOLDER, "parent": ORG}},
        "ancestors": [FOLDER, ORG],
    }


def subscription(
    project_id: str,
    number: str,
    name: str,
    endpoint: str | None,
    account: str | None = None,
    audience: str | None = None,
    dead_letter: str | None = None,
) -> dict[str, Any]:
    push: dict[str, Any] = {}
    if endpoint is not None:
        push["pushEndpoint"] = endpoint
    if account is not None:
        push["oidcToken"] = {"serviceAccountEmail": account}
        if audience is not None:
            push["oidcToken"]["audience"] = audience
    data: dict[str, Any] = {
        "name": f"projects/{project_id}/subscriptions/{name}",
        "topic": f"projects/{project_id}/topics/orders",
        "ackDeadlineSeconds": 10,
        "pushConfig": push,
        "messageRetentionDuration": "604800s",
    }
    if dead_letter:
        data["deadLetterPolicy"] = {"deadLetterTopic": dead_letter, "maxDeliveryAttempts": 10}
    return {
        "name": f"//pubsub.googleapis.com/projects/{project_id}/subscriptions/{name}",
        "asset_type": "pubsub.googleapis.com/Subscription",
        "resource": {
            "version": "v1",
            "discovery_name": "Subscription",
            "parent": f"{CRM}projects/{number}",
            "data": data,
        },
        "ancestors": ancestors(number),
    }


def service_account(
    project_id: str, number: str, account_id: str, unique_id: str
) -> dict[str, Any]:
    email = f"{account_id}@{project_id}.iam.gserviceaccount.com"
    return {
        "name": f"//iam.googleapis.com/projects/{project_id}/serviceAccounts/{unique_id}",
        "asset_type": "iam.googleapis.com/ServiceAccount",
        "resource": {
            "parent": f"{CRM}projects/{number}",
            "data": {
                "email": email,
                "name": f"projects/{project_id}/serviceAccounts/{email}",
                "projectId": project_id,
                "uniqueId": unique_id,
            },
        },
        "ancestors": ancestors(number),
    }


def run_service(project_id: str, number: str, name: str, uri: str) -> dict[str, Any]:
    """A Cloud Run v2 service (run.googleapis.com/Service, as in tfplan2cai's v2 example)."""
    return {
        "name": (
            f"//run.googleapis.com/projects/{project_id}/locations/europe-west1/services/{name}"
        ),
        "asset_type": "run.googleapis.com/Service",
        "resource": {
            "version": "v2",
            "parent": f"{CRM}projects/{number}",
            "data": {
                "name": f"projects/{project_id}/locations/europe-west1/services/{name}",
                "uri": uri,
                "urls": [uri],
            },
        },
        "ancestors": ancestors(number),
    }


def iam(
    asset: dict[str, Any], *bindings: tuple[str, list[str]], condition: str | None = None
) -> dict[str, Any]:
    policy_bindings = []
    for role, members in bindings:
        binding: dict[str, Any] = {"role": role, "members": members}
        if condition:
            binding["condition"] = {
                "title": condition,
                "expression": "request.time < timestamp('2020-01-01T00:00:00Z')",
            }
        policy_bindings.append(binding)
    return {
        "name": asset["name"],
        "asset_type": asset["asset_type"],
        "iam_policy": {"etag": "BwXLiBc_lI4=", "bindings": policy_bindings},
        "ancestors": asset.get("ancestors", []),
    }


def container_iam(key: str, asset_type: str, *bindings: tuple[str, list[str]]) -> dict[str, Any]:
    return {
        "name": f"{CRM}{key}",
        "asset_type": asset_type,
        "iam_policy": {"bindings": [{"role": r, "members": m} for r, m in bindings]},
    }


def perimeter(*numbers: str, dry_run: bool = False) -> dict[str, Any]:
    config = {
        "resources": [f"projects/{n}" for n in numbers],
        "restricted_services": ["pubsub.googleapis.com"],
    }
    return {
        "name": f"{CRM}{ORG}",
        "asset_type": "cloudresourcemanager.googleapis.com/Organization",
        "service_perimeter": {
            "name": "accessPolicies/111222333444/servicePerimeters/payments",
            "title": "payments",
            ("spec" if dry_run else "status"): config,
        },
        "ancestors": [ORG],
    }


def agent(number: str) -> str:
    return f"serviceAccount:service-{number}@gcp-sa-pubsub.iam.gserviceaccount.com"


def perimeter_resource(name: str, *numbers: str) -> dict[str, Any]:
    """A perimeter as the accesscontextmanager.googleapis.com/ServicePerimeter resource (the
    camelCase shape of tfplan2cai's example_access_context_manager_service_perimeter.json)."""
    policy = "accessPolicies/987654"
    return {
        "name": f"//accesscontextmanager.googleapis.com/{policy}/servicePerimeters/{name}",
        "asset_type": "accesscontextmanager.googleapis.com/ServicePerimeter",
        "resource": {
            "version": "v1",
            "discovery_name": "ServicePerimeter",
            "parent": f"//accesscontextmanager.googleapis.com/{policy}",
            "data": {
                "name": f"{policy}/servicePerimeters/{name}",
                "title": name,
                "perimeterType": "PERIMETER_TYPE_REGULAR",
                "status": {
                    "resources": [f"projects/{n}" for n in numbers],
                    "restrictedServices": ["pubsub.googleapis.com"],
                },
            },
        },
        "ancestors": [ORG],
    }
