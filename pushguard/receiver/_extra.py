"""The receiver's third-party modules, checked first: a base install (no ``receiver`` extra) gets
an ``ImportError`` that says what to install, not a bare ``ModuleNotFoundError: cachetools``.

The ``receiver`` extra (pyproject.toml) brings google-auth, cryptography, requests and cachetools;
cryptography and cachetools are imported when the package is, google-auth and requests only when
Google's certificates are first fetched.
"""

from __future__ import annotations

EXTRA_MODULES = frozenset({"cachetools", "cryptography", "google", "requests"})
"""Top-level modules of the ``receiver`` extra's distributions."""

INSTALL = 'pip install "pushguard[receiver] @ git+https://github.com/pushguard/pushguard@REF"'
"""What to install: the repository at a pinned ref (docs/install.md), never the bare name, which
the package index would answer with whatever someone publishes under it (pushguard is on none)."""

try:
    import cachetools  # noqa: F401
    import cryptography  # noqa: F401
except ModuleNotFoundError as missing:
    if (missing.name or "").split(".")[0] not in EXTRA_MODULES:
        raise
    raise ImportError(
        f"pushguard.receiver needs the 'receiver' extra (module {missing.name!r} is missing): "
        f"{INSTALL} (REF: the commit or tag you installed; docs/install.md)",
        name=missing.name,
    ) from missing
