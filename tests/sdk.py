"""The Pulumi Python SDK the tests run with (CI runs them with the newest available and the
preview, engine and component tests again with the oldest ``pyproject.toml`` accepts: ``.ci/run``),
and the mark for a test that needs an SDK feature newer than the oldest."""

from __future__ import annotations

import importlib.metadata

import pytest
from packaging.version import Version

SDK_VERSION = Version(importlib.metadata.version("pulumi"))
"""This environment's ``pulumi``: the SDK of the tests' mock runtime, of ``pushguard preview``
run from here, and of the programs it runs in a team environment made from this one
(``tests/engine/conftest.py``: ``team_venv``) or with ``python3`` from ``PATH`` in CI."""

PULUMI_RUN = Version("3.254.0")
"""The first SDK with ``pulumi.run`` (#23945, commit f2df4f614b75 of pulumi/pulumi, first in tag
v3.254.0)."""

WAITS_ON_EXIT = Version("3.254.0")
"""The first SDK whose ``run_pulumi_func`` finishes the outstanding registrations when the program
ends with ``sys.exit`` (``except BaseException``; #23945, commit f2df4f614b75, first in tag
v3.254.0). At v3.204.0 it catches ``Exception`` only (``pulumi/runtime/stack.py``): a
registration still in flight at ``sys.exit`` is never sent (an exception lets it finish)."""

WHOLLY_UNKNOWN = Version("3.256.0")
"""The first SDK that resolves an invoke answered ``ResourceInvokeResponse.unknown`` as unknown
(``pulumi/runtime/invoke.py``: ``if resp.unknown``; #24040, commit 3abcd594a4, first in tag
v3.256.0); an older one reads the answer's ``return``."""


def needs_sdk(version: str, feature: str) -> pytest.MarkDecorator:
    """Skip unless the SDK is ``version`` or newer: ``feature`` (with its pull request and
    commit in pulumi/pulumi) came with that release."""
    return pytest.mark.skipif(
        Version(version) > SDK_VERSION,
        reason=f"{feature} came with pulumi {version}; this environment has pulumi {SDK_VERSION}",
    )
