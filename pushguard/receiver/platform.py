"""Where the receiver runs: whether it can be behind Cloud Run's own IAM check.

A Cloud Run service that requires authentication checks each request's ID token in Google's
front end before the container sees it (https://cloud.google.com/run/docs/authenticating/overview),
and may hand the container the token with its signature replaced by ``SIGNATURE_REMOVED_BY_GOOGLE``
(https://cloud.google.com/run/docs/troubleshooting#signature-removed). Only there is a token
without a signature worth anything, so :class:`~pushguard.receiver.PushVerifier` accepts one only
where this module says it runs on Cloud Run.

What tells: the Cloud Run container runtime contract sets ``K_SERVICE``, ``K_REVISION`` and
``K_CONFIGURATION`` in every service's container, and those names are reserved
(https://cloud.google.com/run/docs/reference/container-contract#env-vars); 2nd-gen Cloud
Functions are Cloud Run services. Knative Serving (and Cloud Run for Anthos, on GKE) sets the same
three variables with no Google front end in front of the pod; a Kubernetes container gets the
control plane's services as environment variables, ``KUBERNETES_SERVICE_HOST`` among them
(https://kubernetes.io/docs/concepts/containers/container-environment/#cluster-information),
which Cloud Run's contract does not list, so its presence rules Cloud Run out. 1st-gen Cloud
Functions are not recognised: which variables they set, and whether their IAM check strips the
signature of a push token, is not settled by any page found (docs/receiver-platforms.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

CLOUD_RUN_VARIABLES = ("K_SERVICE", "K_REVISION", "K_CONFIGURATION")
"""Set by Cloud Run in every service's container (the container runtime contract)."""

KUBERNETES_VARIABLE = "KUBERNETES_SERVICE_HOST"
"""Set in every Kubernetes pod: Knative on GKE, not Cloud Run."""


def cloud_run_service(environ: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """Whether this process is a Cloud Run service's container, and why not.

    Args:
        environ: the process environment (``os.environ`` by default).

    Returns:
        ``(True, "")``, or ``(False, reason)`` with a sentence naming what is missing or present.
    """
    environ = os.environ if environ is None else environ
    missing = [name for name in CLOUD_RUN_VARIABLES if not environ.get(name)]
    if missing:
        return False, (
            f"{', '.join(missing)} not set: Cloud Run sets K_SERVICE, K_REVISION and "
            "K_CONFIGURATION in every service's container"
        )
    if KUBERNETES_VARIABLE in environ:  # set, even empty: a pod
        return False, (
            f"{KUBERNETES_VARIABLE} is set: this is a Kubernetes pod (Knative or Cloud Run for "
            "Anthos), with no Google front end checking tokens"
        )
    return True, ""
