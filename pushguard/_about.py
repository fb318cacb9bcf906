"""pushguard's version and project URLs, read from the installed distribution's metadata.

``pyproject.toml`` is the one place they are written (``[project] version`` and
``[project.urls]``); the code reads them back from the metadata pip installed, so they are never
repeated. Standard library only: the rules, which stay plain Python, use it too.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata
from typing import Final

DISTRIBUTION: Final = "pushguard"
"""The distribution name in ``pyproject.toml``."""


def version() -> str:
    """The installed pushguard's version (``[project] version``)."""
    return metadata.version(DISTRIBUTION)


@cache
def project_url(label: str) -> str:
    """The URL ``[project.urls]`` gives for ``label`` (``Repository``, ``Documentation``, ...).

    The metadata holds each as a ``Project-URL: label, url`` line; labels compare ignoring case.

    Raises:
        LookupError: the installed metadata has no URL with that label (reinstall pushguard,
            ``pip install -e .``, after editing ``[project.urls]``).
    """
    entries: list[str] = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    for entry in entries:
        name, _, url = entry.partition(",")
        if name.strip().casefold() == label.casefold():
            return url.strip()
    raise LookupError(
        f"the installed pushguard metadata has no {label!r} project URL (it has "
        f"{entries}): reinstall pushguard (`pip install -e .`)"
    )
