"""Project numbers a stack states itself: pushguard's ``PushSubscription`` component.

The component knows its project's number (its ``project_number`` input, or
``gcp.organizations.get_project``) and registers two outputs that carry both of the project's
names: ``subscription_path`` (``projects/PROJECT_ID/subscriptions/ID``) and
``service_agent_email`` (``service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com``, the
Pub/Sub service agent: https://cloud.google.com/pubsub/docs/push#configure_for_push_authentication).
The stack half of the pack reads them so that a team's ``project_number`` reaches every
stack-level check without a second entry in the policy config; the policy config's top-level
``projectNumbers`` wins where both name a project.
"""

from __future__ import annotations

from collections.abc import Iterable

from pushguard.crossguard.resources import WireResource
from pushguard.rules.accounts import service_account_project

COMPONENT_TYPE = "pushguard:index:PushSubscription"
"""The component's type token (``pushguard.components.push_subscription.TYPE_TOKEN``)."""

_PATH = ("subscription_path", "subscriptionPath")
_AGENT = ("service_agent_email", "serviceAgentEmail")


def _first_str(resource: WireResource, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = resource.props.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def declared_numbers(resources: Iterable[WireResource]) -> dict[str, dict[str, str]]:
    """Per ``PushSubscription`` URN, its project ID -> number, from the components whose outputs
    are known; a number of zeros (the offline preview's placeholder for a number it was not
    given) is left out. A component's number is its own claim: it applies only to the
    resources the component declares (:func:`numbers_for`)."""
    found: dict[str, dict[str, str]] = {}
    for resource in resources:
        if resource.type != COMPONENT_TYPE:
            continue
        path, agent = _first_str(resource, _PATH), _first_str(resource, _AGENT)
        if not path or not agent:
            continue
        parts = path.split("/")
        owner = service_account_project(agent)
        if len(parts) != 4 or parts[0] != "projects" or owner is None:
            continue
        project, number = parts[1], owner.project_number
        if project.isdigit() or not number or int(number) == 0:
            continue
        found[resource.urn] = {project: number}
    return found


def numbers_for(resource: WireResource, declared: dict[str, dict[str, str]]) -> dict[str, str]:
    """The numbers that the component declaring ``resource`` (its parent) states."""
    return declared.get(resource.parent or "", {})
