"""The engine's answers to ``ReadResource``: a ``StackReference`` from the outputs the team gave
(``pushguard preview --values``), any other read unknown offline; every read the real preview
would answer and this one could not is recorded, with its line.

The real engine reads a ``pulumi:pulumi:StackReference`` with its builtin provider, even at
preview: the referenced stack's outputs from the backend, answered as the resource's properties
``name``, ``outputs`` (secret outputs as secrets) and ``secretOutputNames`` (sorted; the
outputs holding a secret) with the ID the program gave (``Read`` and ``readStackReference`` in
``pkg/resource/deploy/builtins.go`` of pulumi/pulumi, commit 1b5949891b3c). The SDKs read them
so (``sdk/python/lib/pulumi/stack_reference.py``: ``outputs``, ``secret_output_names``;
``get_output`` applies over ``outputs``, so an output built from it is known, and its
``.apply()`` callbacks run, exactly when the whole ``outputs`` value is).

Given values are the outputs as ``pulumi stack output --json`` prints them
(:mod:`pushguard.preview.values`): a ``"[secret]"`` there stands for a secret the CLI did not
show; it is answered as an unknown secret, and since the SDK reads the outputs as one value,
every output of that stack reference is then unknown at preview (recorded, naming the output).
A value in Pulumi's secret envelope is answered as that secret. A program that cannot take
secrets (``acceptSecrets`` false) gets plain values, as the engine sends them.

Any other read (``Resource.get``), and a stack reference without given outputs, is answered as
the monitor always answered it (:meth:`pushguard.engine.monitor.Monitor.ReadResource`): the
properties the program gave, outputs unknown at preview.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from google.protobuf import json_format
from pulumi.runtime import rpc

from pushguard.crossguard.wire import SECRET_SIG, SIG_KEY
from pushguard.gate.result import Source
from pushguard.gate.unknowns import UnknownOffline

STACK_REFERENCE = "pulumi:pulumi:StackReference"
"""The builtin type of a stack reference."""

HIDDEN_SECRET = "[secret]"
"""What ``pulumi stack output --json`` prints for a secret output without ``--show-secrets``."""

NOT_CHECKED = "resources created from it are not checked"


def _is_secret(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get(SIG_KEY) == SECRET_SIG


def _secret(value: Any) -> dict[str, Any]:
    return {SIG_KEY: SECRET_SIG, "value": value}


def _holds_secret(value: Any) -> bool:
    """Whether ``value`` holds a secret envelope anywhere (``HasSecrets``)."""
    if _is_secret(value):
        return True
    if isinstance(value, Mapping):
        return any(_holds_secret(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_secret(v) for v in value)
    return False


def _plain(value: Any) -> Any:
    """``value`` with every secret envelope replaced by its value."""
    if _is_secret(value):
        return _plain(value.get("value"))
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _file_line(position: Any) -> Source | None:
    """A ``SourcePosition``'s file and line (``None`` unless a ``file:`` URI)."""
    if not position.uri.startswith("file:"):
        return None
    return unquote(urlparse(position.uri).path), int(position.line)


def _installed(path: Path) -> bool:
    """Whether ``path`` is in an installed package (a virtual environment inside the
    project)."""
    return any(part in ("site-packages", "dist-packages") for part in path.parts)


def program_line(request: Any, root: Path | None) -> Source | None:
    """Where the program read: the innermost frame of the request's ``stackTrace`` (the SDK
    sends the frames innermost first, ``_get_stack_trace`` in ``pulumi/runtime/resource.py``)
    in the program's own code under ``root``, not in an installed package (``Resource.get``
    of a provider package is called from the program, but the SDK's ``sourcePosition`` is the
    package's line), else the ``sourcePosition``."""
    trace = request.stackTrace if request.HasField("stackTrace") else None
    for frame in trace.frames if trace is not None and root is not None else ():
        place = _file_line(frame.pc) if frame.HasField("pc") else None
        path = Path(place[0]).resolve() if place is not None else None
        inside = path is not None and root is not None and path.is_relative_to(root)
        if inside and path is not None and not _installed(path):
            return place
    return _file_line(request.sourcePosition) if request.HasField("sourcePosition") else None


class Reads:
    """Answers reads for one run from ``stack_references`` (stack name as the program names
    it, to its outputs) and keeps :attr:`unknown`, thread-safe; ``root``: the program's folder
    (:func:`program_line`)."""

    def __init__(
        self,
        stack_references: Mapping[str, Mapping[str, Any]] | None = None,
        root: Path | None = None,
    ) -> None:
        self.stack_references = {k: dict(v) for k, v in (stack_references or {}).items()}
        self.root = root
        self.unknown: list[UnknownOffline] = []
        self._lock = threading.Lock()

    def _note(self, kind: str, name: str, message: str, source: Source | None) -> None:
        with self._lock:
            self.unknown.append(UnknownOffline(kind, name, message, source))

    def answer(self, request: Any) -> dict[str, Any] | None:
        """The properties (wire form) to answer the ``ReadResourceRequest`` ``request`` with, or
        ``None`` when its result is unknown offline (recorded in :attr:`unknown`)."""
        type_, name, source = request.type, request.name, program_line(request, self.root)
        properties = json_format.MessageToDict(request.properties)
        if type_ != STACK_REFERENCE:
            self._note(
                "read",
                f"{type_} {name}",
                f"{type_} {name!r} is read from the cloud by pulumi preview: its properties "
                f"are unknown offline; {NOT_CHECKED}",
                source,
            )
            return None
        stack = str(properties.get("name") or name)
        outputs = self.stack_references.get(stack)
        if outputs is None:
            self._note(
                "stackReference",
                stack,
                f"StackReference {stack}: its outputs are unknown offline (give them with "
                f"--values, stackReferences.{stack}); {NOT_CHECKED}",
                source,
            )
            return None
        return self._stack_reference(stack, outputs, source, request.acceptSecrets)

    def _stack_reference(
        self, stack: str, outputs: Mapping[str, Any], source: Source | None, accept: bool
    ) -> dict[str, Any]:
        answered: dict[str, Any] = {}
        for key, value in outputs.items():
            if value == HIDDEN_SECRET:
                self._note(
                    "stackReference",
                    stack,
                    f"StackReference {stack} output {key}: [secret] in the values file (pulumi "
                    "stack output --json without --show-secrets), so unknown offline, and with "
                    f"it every output of this stack reference; {NOT_CHECKED}",
                    source,
                )
                answered[key] = _secret(rpc.UNKNOWN)
            else:
                answered[key] = value
        secret_names = sorted(k for k, v in answered.items() if _holds_secret(v))
        if not accept:
            answered = _plain(answered)
        return {"name": stack, "outputs": answered, "secretOutputNames": secret_names}
