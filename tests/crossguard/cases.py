"""The wire-level cases moved to tests/rules/cases/ (one file per rule, beside its fact-level
cases; run by test_pack_cases.py). This module keeps the names other tests import from it."""

from __future__ import annotations

from tests.crossguard.wire import ACCOUNT_URN, RUN_URN

__all__ = ["ACCOUNT_URN", "RUN_URN"]
