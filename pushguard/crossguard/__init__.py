"""The CrossGuard policy pack: the rule set on any push subscription, whatever its route
(pulumi-gcp's ``gcp:pubsub/subscription:Subscription`` and the routes of :mod:`.routes`).

``policies/__main__.py`` calls :func:`serve`; teams composing their own pack can take
:func:`build_policies` instead (messages are then not scrubbed of secret values, which only
:func:`serve` can see).

The names are imported lazily: importing a submodule (``pushguard.crossguard.wire``, say) does not
load ``pulumi_policy`` or ``grpc``; only :func:`serve`, :func:`build_policies` and
:class:`PushguardPolicy` do.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pushguard.crossguard.policies import PushguardPolicy, build_policies
    from pushguard.crossguard.server import serve

PACK_DIR = Path(__file__).resolve().parent / "pack"
"""The pack folder installed with the package (``PulumiPolicy.yaml`` and ``__main__.py``): the
default of ``pushguard preview --policy-pack``; the same pack as the repository's ``policies/``."""

_LAZY = {
    "PushguardPolicy": "pushguard.crossguard.policies",
    "build_policies": "pushguard.crossguard.policies",
    "serve": "pushguard.crossguard.server",
}


def __getattr__(name: str) -> Any:
    """Import :func:`serve`, :func:`build_policies` and :class:`PushguardPolicy` on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = ["PACK_DIR", "PushguardPolicy", "build_policies", "serve"]
