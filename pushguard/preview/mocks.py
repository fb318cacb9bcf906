"""Provider-faithful mocks of the Google Cloud provider for Pulumi's mock runtime.

What a real ``pulumi-gcp`` provider computes and knows at preview gets the same shape here (a
service account's email from ``accountId`` and ``project``, Pub/Sub IDs ``projects/P/...``,
auto-names with a random-looking suffix); any other resource type echoes its inputs, so programs
using other providers run too. ``gcp:organizations/getProject:getProject`` answers from the
project-number map, or with a clearly marked placeholder number.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import pulumi

PLACEHOLDER_PROJECT_NUMBER = "000000000000"
"""Answered by ``getProject`` for a project missing from the map (never a real number)."""

State = dict[str, Any]


def _digest(*parts: str, length: int = 8) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length]


def autoname(resource_name: str) -> str:
    """Pulumi's auto-name: the resource name plus a 7-character suffix (stable here)."""
    return f"{resource_name}-{_digest(resource_name, length=7)}"


class GcpMocks(pulumi.runtime.Mocks):
    """Mocks for ``pulumi.runtime.set_mocks`` that answer like the Google Cloud provider.

    ``project``: the ``gcp:project`` default; ``project_numbers``: project ID to number, for
    ``getProject`` and for resources that embed a number.
    """

    def __init__(
        self, project: str | None = None, project_numbers: Mapping[str, str] | None = None
    ):
        self.project = project
        self.project_numbers = dict(project_numbers or {})
        self._builders: dict[str, Callable[[str, State, str], tuple[str, State]]] = {
            "gcp:serviceaccount/account:Account": self._service_account,
            "gcp:pubsub/subscription:Subscription": self._pubsub("subscriptions"),
            "gcp:pubsub/topic:Topic": self._pubsub("topics"),
        }

    def project_number(self, project: str) -> str:
        """The configured number of ``project``, or :data:`PLACEHOLDER_PROJECT_NUMBER`."""
        return self.project_numbers.get(project, PLACEHOLDER_PROJECT_NUMBER)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, State]:
        """State and ID of a new resource, as the provider would report them."""
        inputs: State = dict(args.inputs)
        if not args.custom:
            return None, {}
        project = str(inputs.get("project") or self.project or "")
        builder = self._builders.get(args.typ)
        if builder is not None:
            return builder(args.name, inputs, project)
        if args.typ.lower().endswith("iammember"):
            etag = _digest(args.name, str(inputs.get("member")), str(inputs.get("role")))
            return f"{args.name}-{etag}", {**inputs, "etag": f"BwX{etag}"}
        return f"{args.name}-id", inputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> State:  # type: ignore[override]
        """Answers to provider functions; unknown functions return their arguments."""
        if args.token == "gcp:organizations/getProject:getProject":
            project = str(args.args.get("projectId") or self.project or "")
            number = self.project_number(project)
            return {
                "projectId": project,
                "number": number,
                "name": project,
                "id": f"projects/{project}",
            }
        return dict(args.args)

    @staticmethod
    def _service_account(name: str, inputs: State, project: str) -> tuple[str, State]:
        email = f"{inputs['accountId']}@{project}.iam.gserviceaccount.com"
        path = f"projects/{project}/serviceAccounts/{email}"
        unique_id = str(int(_digest(email, length=12), 16)).rjust(21, "1")[:21]
        state = {
            **inputs,
            "project": project,
            "email": email,
            "name": path,
            "member": f"serviceAccount:{email}",
            "uniqueId": unique_id,
        }
        return path, state

    @staticmethod
    def _pubsub(collection: str) -> Callable[[str, State, str], tuple[str, State]]:
        def build(name: str, inputs: State, project: str) -> tuple[str, State]:
            short = inputs.get("name") or autoname(name)
            return f"projects/{project}/{collection}/{short}", {
                **inputs,
                "name": short,
                "project": project,
            }

        return build
