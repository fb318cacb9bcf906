from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pushguard.gate.analyzer import PolicyPackProcess

PACK = Path(__file__).resolve().parents[2] / "policies"


@pytest.fixture(scope="session")
def pack() -> Iterator[PolicyPackProcess]:
    """The policy pack, started once as the Pulumi CLI starts it."""
    with PolicyPackProcess(PACK) as process:
        yield process
