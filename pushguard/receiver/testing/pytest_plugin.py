"""pytest fixtures for push handlers: a local issuer, a key source that trusts it, and signed
pushes.

Opt-in, never loaded on its own (pushguard registers no ``pytest11`` entry point, so installing
pushguard changes no one's test run, and a project without the ``receiver`` extra is not
affected). Load it in the test suite's top ``conftest.py``::

    pytest_plugins = ["pushguard.receiver.testing.pytest_plugin"]

or for one run: ``pytest -p pushguard.receiver.testing.pytest_plugin``. Without the
``receiver`` extra, loading it fails with an ``ImportError`` that names the extra.

Fixtures:

- ``push_issuer`` (session): a :class:`~pushguard.receiver.testing.LocalIssuer`.
- ``push_key_source``: a key source that trusts ``push_issuer`` alone, for
  ``PushVerifier(..., keys=push_key_source)``.
- ``make_push``: ``make_push(audience=..., service_account_email=..., data=b"...", ...)``, a
  :class:`~pushguard.receiver.testing.PushRequest` signed by ``push_issuer`` (the arguments of
  :func:`~pushguard.receiver.testing.push_request`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pushguard.receiver.keys import StaticKeySource
from pushguard.receiver.testing.issuer import LocalIssuer
from pushguard.receiver.testing.push import PushRequest, push_request


@pytest.fixture(scope="session")
def push_issuer() -> LocalIssuer:
    """A token issuer of the test session's own (a new 2048-bit RSA key)."""
    return LocalIssuer()


@pytest.fixture
def push_key_source(push_issuer: LocalIssuer) -> StaticKeySource:
    """Trusts ``push_issuer`` and nothing else."""
    return push_issuer.key_source()


@pytest.fixture
def make_push(push_issuer: LocalIssuer) -> Callable[..., PushRequest]:
    """Builds push requests signed by ``push_issuer``."""

    def build(**options: Any) -> PushRequest:
        return push_request(push_issuer, **options)

    return build
