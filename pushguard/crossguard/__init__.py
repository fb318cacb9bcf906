"""The CrossGuard policy pack: the rule set on any ``gcp:pubsub/subscription:Subscription``.

``policies/__main__.py`` calls :func:`serve`; teams composing their own pack can take
:func:`build_policies` instead (messages are then not scrubbed of secret values, which only
:func:`serve` can see).
"""

from pathlib import Path

from pushguard.crossguard.policies import PushguardPolicy, build_policies
from pushguard.crossguard.server import serve

PACK_DIR = Path(__file__).resolve().parent / "pack"
"""The pack folder installed with the package (``PulumiPolicy.yaml`` and ``__main__.py``): the
default of ``pushguard preview --policy-pack``; the same pack as the repository's ``policies/``."""

__all__ = ["PACK_DIR", "PushguardPolicy", "build_policies", "serve"]
