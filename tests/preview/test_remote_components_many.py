"""Issue 26 (a new user's trial): several remote ``PushSubscription``s in one program.

Each remote component is constructed in a thread of its own; the threads used to race on the
first import of ``pulumi_gcp``'s lazily loaded submodules (``importlib.util.LazyLoader`` is not
thread-safe before Python 3.12.3), and the preview exited 2 with an ``AttributeError`` on
``pulumi_gcp.config.project``, ``organizations.get_project_output`` or ``projects.IAMMember``.
The program runs in a fresh child process per preview, so every run starts with nothing loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.preview.conftest import Invocation

SUB = "gcp:pubsub/subscription:Subscription"

PROGRAM = """\
import pulumi

for name in {NAMES!r}:
    pulumi.ComponentResource("pushguard:index:PushSubscription", name, {{
        "topic": name, "pushEndpoint": "https://orders-3kq2x7ab9c-ew.a.run.app/push",
        "target": {{"kind": "cloud-run", "name": "orders", "location": "europe-west1"}}}},
        remote=True)
"""


@pytest.mark.parametrize("count", [2, 4])
def test_several_remote_push_subscriptions_preview_every_time(
    count: int, preview: Callable[..., Invocation], make_project: Callable[..., Any]
) -> None:
    names = [f"orders{i}" for i in range(count)]
    project = str(make_project(PROGRAM.format(NAMES=names)))
    for _ in range(2):  # the race showed on most runs, not all
        result = preview(project, "--format", "json")
        assert result.exit_code == 0, result.stderr
        subs = [r for r in result.json()["resources"] if r["type"] == SUB]
        assert sorted(r["parent"].rsplit("::", 1)[1] for r in subs) == names
