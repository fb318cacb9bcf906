"""The CrossGuard policy pack: the rule set on any ``gcp:pubsub/subscription:Subscription``.

``policies/__main__.py`` calls :func:`serve`; teams composing their own pack can take
:func:`build_policies` instead (messages are then not scrubbed of secret values, which only
:func:`serve` can see).
"""

from pushguard.crossguard.policies import PushguardPolicy, build_policies
from pushguard.crossguard.server import serve

__all__ = ["PushguardPolicy", "build_policies", "serve"]
