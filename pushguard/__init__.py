"""pushguard: safe Google Cloud Pub/Sub push subscriptions, by construction and by enforcement.

One rule set (:mod:`pushguard.rules`) and the adapters around it: the ``PushSubscription`` Pulumi
component (:mod:`pushguard.components`), the CrossGuard policy pack, the offline preview, the Spark
audit and the receiver.
"""

from pushguard._about import version as _version

__version__: str = _version()
"""The installed distribution's version: ``[project] version`` in ``pyproject.toml``."""
