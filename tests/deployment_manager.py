"""Deployment Manager deployments pushguard cannot read offline, and one it reads (issue 34),
shared by the preview, protocol and analyze tests. Each is a pulumi-gcp
``gcp:deploymentmanager/deployment:Deployment`` whose ``target.config.content`` is the YAML
configuration Deployment Manager expands
(https://cloud.google.com/deployment-manager/docs/configuration/syntax-reference).

:data:`UNREADABLE`: name -> (the deployment's inputs, what the "cannot be checked" reason says).
:data:`TWO_SUBSCRIPTIONS`: one deployment declaring two http push subscriptions.
"""

from __future__ import annotations

from typing import Any

DEPLOYMENT = "gcp:deploymentmanager/deployment:Deployment"
PROJECT = "acme-web"
HTTP = "http://hooks.example.com/push"

JINJA = """resources:
- name: {{ env["name"] }}
  type: pubsub.v1.subscription
  properties:
    subscription: {{ properties["subscription"] }}
    topic: projects/acme-web/topics/orders
    pushConfig:
      pushEndpoint: {{ properties["endpoint"] }}
"""
"""A template creating a push subscription from its properties (Google's sample
``google/resource-snippets/pubsub-v1/pubsub.jinja`` in GoogleCloudPlatform/deploymentmanager-samples
does the same for a pull subscription)."""

TEMPLATED = f"""imports:
- path: pubsub.jinja
resources:
- name: orders-push
  type: pubsub.jinja
  properties:
    subscription: orders-push
    endpoint: {HTTP}
"""

REFERENCED = """resources:
- name: relay
  type: gcp-types/cloudfunctions-v1:projects.locations.functions
  properties:
    parent: projects/acme-web/locations/europe-west1
    function: relay
    httpsTrigger: {}
- name: orders-push
  type: pubsub.v1.subscription
  properties:
    subscription: orders-push
    topic: projects/acme-web/topics/orders
    pushConfig:
      pushEndpoint: $(ref.relay.httpsTrigger.url)
"""

BROKEN = f"""resources:
- name: orders-push
  type: pubsub.v1.subscription
  properties: {{subscription: orders-push, pushConfig: {{pushEndpoint: {HTTP}}}
"""

REPOINTED = f"""resources:
- name: repoint
  action: gcp-types/pubsub-v1:pubsub.projects.subscriptions.modifyPushConfig
  properties:
    subscription: projects/acme-web/subscriptions/orders
    pushConfig:
      pushEndpoint: {HTTP}
"""


def target(content: Any, **extra: Any) -> dict[str, Any]:
    """A deployment's inputs with ``content`` as its configuration."""
    return {"name": "orders", "target": {"config": {"content": content}, **extra}}


UNREADABLE: dict[str, tuple[dict[str, Any], str]] = {
    "template": (
        target(TEMPLATED, imports=[{"name": "pubsub.jinja", "content": JINJA}]),
        "imports 'pubsub.jinja'",
    ),
    "reference": (target(REFERENCED), "pushConfig holds a reference ($(ref.NAME.PROPERTY))"),
    "yaml": (target(BROKEN), "target.config.content is not valid YAML"),
    "action": (target(REPOINTED), "sets pushConfig, a push configuration pushguard does not read"),
}

TWO_SUBSCRIPTIONS = f"""resources:
- name: orders-topic
  type: pubsub.v1.topic
  properties:
    topic: orders
- name: first
  type: pubsub.v1.subscription
  properties:
    subscription: first
    topic: $(ref.orders-topic.name)
    pushConfig:
      pushEndpoint: {HTTP}
- name: second
  type: gcp-types/pubsub-v1:projects.subscriptions
  properties:
    name: projects/{PROJECT}/subscriptions/second
    topic: $(ref.orders-topic.name)
    pushConfig:
      pushEndpoint: {HTTP}/second
"""
"""Two push subscriptions (one per mapped type), and a topic they refer to (``topic`` is not a
field the rules read, so its reference does not stop the check)."""


def program(deployments: dict[str, dict[str, Any]]) -> str:
    """A Python program declaring each deployment (name -> inputs) as pulumi-gcp's SDK does."""
    lines = ["import pulumi"]
    lines += [
        f"pulumi.CustomResource({DEPLOYMENT!r}, {n!r}, {p!r})" for n, p in deployments.items()
    ]
    return "\n".join(lines) + "\n"


def urn(name: str, project: str = "team", stack: str = "dev") -> str:
    return f"urn:pulumi:{stack}::{project}::{DEPLOYMENT}::{name}"
