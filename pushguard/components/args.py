"""The ``PushSubscription`` component's inputs, in Pulumi's conventions.

Args are ``TypedDict`` classes with ``pulumi.Input[...]`` values, the form Pulumi's component
provider host infers a package schema from (so the component can be hosted for other languages,
see ``components/`` at the repository root). Fields annotated without ``pulumi.Input`` are *plain*:
they decide which child resources exist, so they must be known when the component is constructed.
Each field's docstring is its schema description.
"""

import ast
import inspect
import re
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Final, NotRequired, TypedDict

import pulumi

from pushguard.rules.facts import TargetKind


class TokenCreatorGrant(StrEnum):
    """Where the Pub/Sub service agent gets ``roles/iam.serviceAccountTokenCreator``."""

    SERVICE_ACCOUNT = "service-account"
    """On the push-auth service account only (least privilege, the default)."""
    PROJECT = "project"
    """On the subscription's project (every service account in it)."""
    NONE = "none"
    """No grant: the team states it exists already."""


class PushTargetArgs(TypedDict):
    """The service behind the push endpoint."""

    kind: TargetKind
    """Cloud Run service, 1st- or 2nd-gen Cloud Function, or external endpoint."""
    name: NotRequired[pulumi.Input[str]]
    """Service or function name (short name). Required unless ``kind`` is ``external``. For a
    2nd-gen function, the function name (letters, digits, ``-`` and ``_``); the invoker grant is
    on its Cloud Run service, named after it in lower case with each ``_`` a ``-``
    (``renderInvoice``: ``renderinvoice``)."""
    location: NotRequired[pulumi.Input[str]]
    """Region of the service or function, e.g. ``europe-west1``. Required unless external."""
    project: NotRequired[pulumi.Input[str]]
    """Project of the service; defaults to the subscription's project."""
    url: NotRequired[pulumi.Input[str]]
    """The service's URL (its ``run.app`` URL, e.g. the Cloud Run service's ``uri`` output; a
    1st-gen function's ``https://REGION-PROJECT.cloudfunctions.net/NAME``): the default
    audience. Omitted: the origin of a ``run.app`` push endpoint, or the 1st-gen function URL
    built from ``location``, ``project`` and ``name``. For Cloud Run, any other URL is refused
    unless listed in ``custom_audiences``."""
    custom_audiences: NotRequired[pulumi.Input[Sequence[pulumi.Input[str]]]]
    """The custom audiences configured on the Cloud Run service (its ``custom_audiences``): an
    ``audience`` other than the service URL is accepted only if listed here."""


class DeadLetterArgs(TypedDict):
    """Dead-lettering: where undeliverable messages go."""

    topic: NotRequired[pulumi.Input[str]]
    """Existing dead-letter topic (``projects/P/topics/T`` or a topic ID in the subscription's
    project). Omitted: the component creates one."""
    max_delivery_attempts: NotRequired[pulumi.Input[int]]
    """Delivery attempts before a message is dead-lettered, 5 to 100 (default 5)."""
    subscription: NotRequired[bool]
    """With a created topic: also create a pull subscription on it, which keeps the dead letters
    (messages published to a topic without a subscription are lost). Default true."""
    message_retention_duration: NotRequired[pulumi.Input[str]]
    """How long that pull subscription keeps dead letters, ``"600s"`` to ``"2678400s"`` (default
    ``"604800s"``, 7 days). Refused with ``topic`` (no subscription is made then)."""


class RetryPolicyArgs(TypedDict):
    """Exponential backoff between redeliveries, as durations in seconds like ``"10s"``."""

    minimum_backoff: NotRequired[pulumi.Input[str]]
    """0s to 600s, at most ``maximum_backoff`` (Pub/Sub's default is 10s)."""
    maximum_backoff: NotRequired[pulumi.Input[str]]
    """0s to 600s (Pub/Sub's default is 600s)."""


class PushSubscriptionArgs(TypedDict):
    """Inputs of :class:`~pushguard.components.PushSubscription`."""

    topic: pulumi.Input[str]
    """The topic to subscribe to: ``projects/P/topics/T`` or a topic ID in ``project``."""
    push_endpoint: pulumi.Input[str]
    """The HTTPS URL Pub/Sub pushes to (checked by ``push-endpoint-https`` and, in a perimeter,
    ``push-vpcsc-default-url``). For a 2nd-gen function, its Cloud Run URI (pulumi-gcp's
    ``service_config.uri``), not its cloudfunctions.net ``url``, which is refused."""
    target: PushTargetArgs
    """The service behind the endpoint; decides the invoker binding."""
    project: NotRequired[pulumi.Input[str]]
    """Project ID of the subscription; defaults to the ``gcp:project`` config."""
    project_number: NotRequired[pulumi.Input[str]]
    """Project number (names the Pub/Sub service agent); looked up from ``project`` when
    omitted."""
    subscription_name: NotRequired[pulumi.Input[str]]
    """Subscription ID (3 to 255 characters of letters, digits and ``- _ . ~ + %``, starts with a
    letter, not ``goog``). Omitted: generated from the name, unique per project, stack and
    component (see "IDs" in docs/component.md)."""
    push_auth_service_account_email: NotRequired[pulumi.Input[str]]
    """An existing push-auth service account, in ``project``. Omitted: the component creates one."""
    push_auth_account_id: NotRequired[pulumi.Input[str]]
    """Account ID for the created push-auth service account (6 to 30 characters, lower-case
    letters, digits and hyphens, starting with a letter, not ending with a hyphen). Omitted:
    generated from the name, unique per project, stack and component."""
    audience: NotRequired[pulumi.Input[str]]
    """The OIDC token's audience. Default: the service URL for Cloud Run and 2nd-gen functions,
    the function URL for 1st-gen functions, the push endpoint for external targets. For Cloud
    Run another value must be in ``target.custom_audiences``."""
    attributes: NotRequired[pulumi.Input[Mapping[str, pulumi.Input[str]]]]
    """Push endpoint attributes (e.g. ``x-goog-version``)."""
    no_wrapper: NotRequired[bool]
    """Deliver the raw message data as the body instead of the JSON envelope."""
    write_metadata: NotRequired[pulumi.Input[bool]]
    """With ``no_wrapper``: send message metadata as HTTP headers."""
    ack_deadline_seconds: NotRequired[pulumi.Input[int]]
    """Acknowledgement deadline, 10 to 600 seconds."""
    message_retention_duration: NotRequired[pulumi.Input[str]]
    """How long unacknowledged messages are kept, ``"600s"`` to ``"2678400s"`` (10 min to 31
    days)."""
    retain_acked_messages: NotRequired[pulumi.Input[bool]]
    """Keep acknowledged messages for the retention duration (for seek)."""
    expiration_ttl: NotRequired[pulumi.Input[str]]
    """Delete the subscription after this much inactivity: at least ``"86400s"`` and not shorter
    than the message retention duration (7 days unless set); ``""`` never expires. Omitted: never
    expires (Pub/Sub's own default would delete it after 31 days without activity)."""
    filter: NotRequired[pulumi.Input[str]]
    """Message filter on attributes in Pub/Sub's filter syntax (``attributes.type = "paid"``), at
    most 256 bytes. Google cannot change a subscription's filter: a changed filter replaces the
    subscription, and its undelivered messages are not in the new one."""
    enable_message_ordering: NotRequired[pulumi.Input[bool]]
    """Deliver messages with the same ordering key in order."""
    retry_policy: NotRequired[RetryPolicyArgs]
    """Backoff between redeliveries."""
    labels: NotRequired[pulumi.Input[Mapping[str, pulumi.Input[str]]]]
    """Labels on the subscription."""
    paused: NotRequired[bool]
    """Stop push delivery by turning the subscription into a pull subscription (empty push
    config); set back to false to resume. Messages accumulate meanwhile, for the message
    retention duration (default 7 days). In a perimeter, needs ``accept_backlog_loss``."""
    token_creator_grant: NotRequired[TokenCreatorGrant]
    """Where the Pub/Sub service agent gets token creator (default: on the push-auth account)."""
    deployers: NotRequired[Sequence[str]]
    """IAM members (``user:``, ``group:``, ``serviceAccount:``) that may attach the push-auth
    account (``roles/iam.serviceAccountUser``, the ``actAs`` needed to create or change the
    subscription)."""
    dead_letter: NotRequired[DeadLetterArgs]
    """Dead-letter topic and attempts; omitted: no dead-lettering."""
    in_service_perimeter: NotRequired[bool]
    """The project is inside a VPC Service Controls perimeter: only Cloud Run default URLs are
    accepted, and an existing subscription's push config cannot be updated."""
    accept_backlog_loss: NotRequired[bool]
    """In a perimeter: replace the subscription (delete first) when its push config changes,
    pausing and resuming included, losing every undelivered message. Default false: pausing is
    refused and other push config changes fail at ``pulumi up``, losing nothing."""
    grant_invoker: NotRequired[bool]
    """Grant the push-auth account the invoker role on the target (default true); false when
    that grant is managed elsewhere (for example once, in a platform stack)."""


class GuardrailMethods(StrEnum):
    """The API calls a custom constraint is checked on (its ``methodTypes``). Google accepts
    ``CREATE`` or ``CREATE, UPDATE`` for a custom constraint: an UPDATE-only constraint is not
    supported (the Pub/Sub page "Use custom organization policies",
    https://cloud.google.com/pubsub/docs/custom-constraints)."""

    CREATE = "create"
    """New subscriptions only."""
    CREATE_UPDATE = "create-update"
    """New subscriptions and every update of one (the default)."""


class OrgGuardrailsArgs(TypedDict):
    """The inputs of ``OrgGuardrails``: those of ``pushguard guardrails``. All are plain: they
    decide which constraints, policies and modules exist."""

    organization_id: str
    """The organization's numeric ID (``123456789012``), where the custom constraints and the
    Security Health Analytics custom modules are made."""
    policy_config: NotRequired[str]
    """Path of the policy config file, the file the pack's ``--policy-pack-config`` and
    ``pushguard guardrails --policy-config`` take, relative to the program's working directory
    (the project directory). Omitted: every rule at its default level and settings."""
    enforce: NotRequired[bool]
    """Enforce the constraints of the mandatory rules (a policy ``spec``) instead of a dry run
    (``dryRunSpec``, which only logs what it would deny). Advisory rules always stay in dry run.
    Default ``false``: roll out in dry run first."""
    method_types: NotRequired[GuardrailMethods]
    """``create`` or ``create-update`` (the default): the calls the constraints check."""
    perimeter_tag: NotRequired[str]
    """``KEY=VALUE``: the perimeter rule's policy applies, at the organization, to the resources
    with this tag (the tag key's and value's short names). Omitted: one policy on each perimeter
    project of the policy config."""
    security_health_analytics: NotRequired[bool]
    """Register the Security Health Analytics custom modules (default ``true``), which report
    existing subscriptions in Security Command Center."""


def field_docstrings(cls: type) -> dict[str, str]:
    """The docstring under each annotated field of ``cls`` (read from its source), one line each.

    A ``TypedDict`` keeps no per-field documentation at run time, so the class body is parsed:
    a string literal right after ``name: annotation`` is that field's docstring (the convention
    Pulumi's component analyzer reads for schema descriptions too).
    """
    tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(cls)))
    [node] = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    docs: dict[str, str] = {}
    for statement, following in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = " ".join(inspect.cleandoc(following.value.value).split())
    return docs


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=\.) ", text, maxsplit=1)[0].replace("``", "'")


def _input_docs() -> dict[str, str]:
    nested = {
        "target": PushTargetArgs,
        "dead_letter": DeadLetterArgs,
        "retry_policy": RetryPolicyArgs,
    }
    docs = {k: _first_sentence(v) for k, v in field_docstrings(PushSubscriptionArgs).items()}
    for prefix, cls in nested.items():
        docs |= {f"{prefix}.{k}": _first_sentence(v) for k, v in field_docstrings(cls).items()}
    return docs


INPUT_DOCS: Final[Mapping[str, str]] = _input_docs()
"""Each input's dotted path (``dead_letter.max_delivery_attempts``) -> the first sentence of its
documentation, without reST markup: what error messages cite as what is allowed. Read once, at
import (parsing source while a program runs deep in Pulumi's event loop tripped a CPython 3.11.7
AST bug, "AST constructor recursion depth mismatch")."""
