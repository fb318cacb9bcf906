"""Every test starts from the same environment, whatever the machine's: the Google provider's
project and region variables (set in Cloud Shell and on many CI runners) and Pulumi's config
variables would otherwise change what a preview resolves. Tests that need one set it."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from pushguard.preview.mocks import PROJECT_VARIABLES, REGION_VARIABLES

# No property test is timed: on a loaded 2-core CI machine (a JVM or a pack process beside it) a
# single example can take far over hypothesis's 200 ms default deadline, and a flaky deadline
# says nothing about behaviour. Speed lives in bench/ (docs/development.md).
settings.register_profile("pushguard", deadline=None)
settings.load_profile("pushguard")


@pytest.fixture(autouse=True)
def _no_ambient_cloud_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PROJECT_VARIABLES, *REGION_VARIABLES, "PULUMI_CONFIG", "PULUMI_STACK"):
        monkeypatch.delenv(name, raising=False)
    for name in [n for n in os.environ if n.startswith("PULUMI_CONFIG_")]:
        monkeypatch.delenv(name)
