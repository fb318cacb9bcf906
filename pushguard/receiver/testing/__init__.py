"""The signed-push test kit: Google's side of a push, played on your own machine.

Nothing here is trusted by default. A receiver trusts the kit's issuer only where its keys are
passed explicitly (``PushVerifier(..., keys=issuer.key_source())``); a default ``PushVerifier``
fetches Google's keys and refuses the kit's tokens (``unknown_key``).

- :class:`LocalIssuer` (:mod:`~pushguard.receiver.testing.issuer`): an RSA key of its own that
  signs tokens with the claims Pub/Sub sets, and :meth:`LocalIssuer.key_source` that trusts it.
- :func:`load_or_create_issuer`, :func:`local_key_source`
  (:mod:`~pushguard.receiver.testing.key_dir`): the same issuer kept in a folder, shared by
  ``pushguard push`` and a development server.
- :func:`push_request` (:mod:`~pushguard.receiver.testing.push`): a complete push request as
  Pub/Sub sends it, wrapped or unwrapped.
- :func:`resolve_target`, :func:`push_until_ack` (:mod:`~pushguard.receiver.testing.send`):
  what ``pushguard push`` does: loopback only, ack or nack, redelivery with backoff.
- :class:`CloudRunFrontEnd`, :func:`cloud_run_environ`
  (:mod:`~pushguard.receiver.testing.front_end`): Cloud Run's front end and environment.
- :mod:`pushguard.receiver.testing.pytest_plugin`: fixtures, opt-in
  (``pytest_plugins = ["pushguard.receiver.testing.pytest_plugin"]``).
"""

from pushguard.receiver.testing.front_end import (
    HOP_BY_HOP,
    CloudRunFrontEnd,
    cloud_run_environ,
    strip_signature,
)
from pushguard.receiver.testing.issuer import GOOGLE_ISSUER, LocalIssuer, self_signed_certificate
from pushguard.receiver.testing.key_dir import (
    default_key_dir,
    load_or_create_issuer,
    local_key_source,
)
from pushguard.receiver.testing.push import (
    DEFAULT_SUBSCRIPTION,
    MAX_DATA_BYTES,
    PushRequest,
    new_message_id,
    push_request,
)
from pushguard.receiver.testing.send import (
    Attempt,
    DeliveryFailedError,
    RemoteRefusedError,
    Target,
    push_until_ack,
    resolve_target,
    retry_delays,
)

__all__ = [
    "DEFAULT_SUBSCRIPTION",
    "GOOGLE_ISSUER",
    "HOP_BY_HOP",
    "MAX_DATA_BYTES",
    "Attempt",
    "CloudRunFrontEnd",
    "DeliveryFailedError",
    "LocalIssuer",
    "PushRequest",
    "RemoteRefusedError",
    "Target",
    "cloud_run_environ",
    "default_key_dir",
    "load_or_create_issuer",
    "local_key_source",
    "new_message_id",
    "push_request",
    "push_until_ack",
    "resolve_target",
    "retry_delays",
    "self_signed_certificate",
    "strip_signature",
]
