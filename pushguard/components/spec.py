"""Validation of ``PushSubscription`` inputs with pydantic, before anything is registered.

The component validates twice with the same model. At construction, values that are Pulumi Outputs
(or other awaitables) are replaced by :data:`DEFERRED`, which every field accepts as it is, and all
known values are checked: a bad one raises :class:`PushSubscriptionInputError` before any resource
exists. When the deferred values resolve, the whole spec is validated again and the subscription
only receives validated values.

API limits (https://cloud.google.com/pubsub/docs/reference/rest/v1/projects.subscriptions,
https://cloud.google.com/pubsub/docs/handling-failures): ack deadline 10 to 600 s; message retention
10 min to 31 days; expiration TTL at least 1 day and not shorter than the message retention
(:func:`~pushguard.components.limits.expiration_problem`); dead-letter attempts 5 to 100; retry
backoff 0 to 600 s with minimum at most maximum; subscription and topic IDs start with a letter, are
3 to 255 characters of ``[A-Za-z0-9-_.~+%]`` and do not start with ``goog``
(https://cloud.google.com/pubsub/docs/pubsub-basics#resource_names). Service account IDs are 6 to 30
characters (https://cloud.google.com/iam/docs/service-accounts-create). Labels follow
https://cloud.google.com/resource-manager/docs/labels-overview. A filter is at most 256 bytes and in
the filter syntax (:mod:`pushguard.components.filters`). A Cloud Run service name is RFC 1035: 1 to
63 lower-case letters, digits and hyphens, starting with a letter, not ending with a hyphen
(https://cloud.google.com/run/docs/reference/rest/v2/projects.locations.services/create); a
function's name (1st or 2nd gen) may also hold capitals and ``_``, and a 2nd-gen function's Cloud
Run service is named after it (:func:`~pushguard.components.limits.function_service_name`).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from typing import Annotated, Any, Final

import pulumi
from pulumi.runtime import rpc
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)

from pushguard.components.args import INPUT_DOCS, TokenCreatorGrant
from pushguard.components.filters import filter_problem
from pushguard.components.limits import FUNCTION_NAME, duration_seconds, expiration_problem
from pushguard.rules.facts import PROJECT_ID_PATTERN, PROJECT_NUMBER_PATTERN, TargetKind
from pushguard.rules.unknown_text import UnknownText


class _Deferred:
    """A value that is a Pulumi Output or awaitable, not known at construction."""

    def __repr__(self) -> str:
        return "<deferred>"


DEFERRED: Final = _Deferred()
"""Stands for an input value that is not known yet."""

PLAIN_FIELDS: Final = frozenset(
    {
        "target",
        "target.kind",
        "retry_policy",
        "token_creator_grant",
        "deployers",
        "in_service_perimeter",
        "dead_letter",
        "paused",
        "no_wrapper",
        "grant_invoker",
        "accept_backlog_loss",
        "dead_letter.subscription",
    }
)
"""Inputs that decide which resources exist, so they cannot be Outputs. For the nested objects
(``target``, ``dead_letter``, ``retry_policy``) the object itself must be plain; its fields may be
Outputs unless listed here too."""

SENSITIVE_FIELDS: Final = frozenset({"push_endpoint", "audience", "attributes", "labels", "filter"})
"""Inputs whose values are never repeated in an error message (they may carry secrets)."""


UNKNOWN_SENTINEL: Final = rpc.UNKNOWN
"""Pulumi's wire sentinel for a value not known until deployment. An offline preview gives a
``secure:`` stack config value as this string (it cannot be decrypted without the stack's secrets
provider), so a plain ``pulumi.Config.get`` can return it, alone or inside a string built from it;
such a value is deferred like an Output and reaches the resources as an unknown. It is the one
sentinel the Python SDK has (``UNKNOWN`` in ``sdk/python/lib/pulumi/runtime/rpc.py``,
github.com/pulumi/pulumi), and the string one of the engine's
(:data:`pushguard.crossguard.wire.UNKNOWN_SENTINELS`)."""

UNKNOWN_PARTS: Final = UnknownText([UNKNOWN_SENTINEL])
"""Finds :data:`UNKNOWN_SENTINEL` and fragments of it in a string
(:mod:`pushguard.rules.unknown_text`): a program that cuts an unknown string (``s[:12]``) leaves
a part of the sentinel, which is not known text either."""


def holds_unknown(value: object) -> bool:
    """True when ``value`` is, or holds, :data:`UNKNOWN_SENTINEL` or a fragment of it
    (:data:`UNKNOWN_PARTS`; in a string, a mapping's values or a list): a value that is not
    known yet, never one to validate."""
    if isinstance(value, str):
        return UNKNOWN_PARTS.holds(value)
    if isinstance(value, Mapping):
        return any(holds_unknown(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(holds_unknown(v) for v in value)
    return False


def is_deferred(value: object) -> bool:
    """True for a Pulumi Output or any awaitable (a value known only later), and for a string
    that holds :data:`UNKNOWN_SENTINEL` or a fragment of it (built from a ``secure:`` config
    value, offline)."""
    return (
        isinstance(value, pulumi.Output)
        or inspect.isawaitable(value)
        or (isinstance(value, str) and UNKNOWN_PARTS.holds(value))
    )


def _allow_deferred(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    return value if value is DEFERRED else handler(value)


AllowDeferred = WrapValidator(_allow_deferred)


def _wire_integer(value: Any) -> Any:
    """An integral float (``30.0``) as the ``int`` it stands for; anything else unchanged, for the
    strict ``int`` check (``30.5``, ``True`` and ``"30"`` still fail).

    Pulumi's wire format has one number type, a double, so integer inputs sent by a program in
    another language arrive as floats when the component is hosted (``components/``; Pulumi's
    component provider in pulumi 3.272 does not convert them back)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


WireInteger = BeforeValidator(_wire_integer)


class PushSubscriptionInputError(ValueError):
    """Bad ``PushSubscription`` inputs: one error listing every problem, each with its field.

    ``problems`` is a tuple of ``(field, message)`` pairs; field paths are dotted snake_case input
    names (``retry_policy.minimum_backoff``).
    """

    def __init__(self, component: str, problems: list[tuple[str, str]]) -> None:
        self.component = component
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {field}: {message}" for field, message in problems)
        super().__init__(f"PushSubscription {component!r} has invalid inputs:\n{lines}")


def _duration_between(low: int, high: int | None) -> AfterValidator:
    def check(text: str) -> str:
        seconds = duration_seconds(text)
        if seconds < low or (high is not None and seconds > high):
            allowed = f"between {low}s and {high}s" if high is not None else f"at least {low}s"
            raise ValueError(f"must be {allowed}, not {text}")
        return text

    return AfterValidator(check)


def _int_between(low: int, high: int, unit: str) -> AfterValidator:
    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}{unit}, not {value}")
        return value

    return AfterValidator(check)


_PUBSUB_ID = re.compile(r"^[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$")
_TOPIC_PATH = re.compile(r"^projects/(?P<project>[^/]+)/topics/(?P<topic>[^/]+)$")


def check_pubsub_id(kind: str, value: str) -> str:
    """``value`` if it is a valid topic or subscription ID.

    Raises:
        ValueError: saying what an ID may contain.
    """
    if not _PUBSUB_ID.match(value):
        raise ValueError(
            f"must be a {kind} ID of 3 to 255 characters that starts with a letter and "
            f"contains only letters, digits and - _ . ~ + %, not {value!r}"
        )
    if value.startswith("goog"):
        raise ValueError(f"a {kind} ID must not start with 'goog'")
    return value


def _topic_ref(value: str) -> str:
    match = _TOPIC_PATH.match(value)
    check_pubsub_id("topic", match["topic"] if match else value)
    return value


def _regex(pattern: str, what: str) -> AfterValidator:
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.match(value):
            raise ValueError(f"must be {what}, not {value!r}")
        return value

    return AfterValidator(check)


_PROJECT_ID = _regex(
    PROJECT_ID_PATTERN,
    "a project ID (6 to 30 lower-case letters, digits and hyphens, starting with a letter)",
)
_PROJECT_NUMBER = _regex(PROJECT_NUMBER_PATTERN, "a project number (digits only)")
_REGION = _regex(r"^[a-z]+-[a-z]+[0-9]+$", "a region such as europe-west1")
_RUN_SERVICE_NAME = re.compile(r"^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$")
"""A Cloud Run service name: RFC 1035, 1 to 63 lower-case letters, digits
and hyphens, starting with a letter and not ending with a hyphen
(https://cloud.google.com/run/docs/reference/rest/v2/projects.locations.services/create)."""
_SERVICE_NAME = _regex(
    r"^[A-Za-z][A-Za-z0-9_-]{0,62}$",
    "a service or function name (letters, digits, - and _, up to 63, starting with a letter)",
)
_HTTPS_URL = _regex(r"^https://[^\s/?#]+(?:/[^\s?#]*)?$", "an https:// URL without query")
FILTER_MAX_BYTES: Final = 256
"""The filter's limit in bytes of UTF-8, as pulumi-gcp's ``Subscription.filter`` documents
(https://www.pulumi.com/registry/packages/gcp/api-docs/pubsub/subscription/#filter_python)."""


def _filter(value: str) -> str:
    """A filter within :data:`FILTER_MAX_BYTES` and in the filter syntax
    (:func:`~pushguard.components.filters.filter_problem`)."""
    size = len(value.encode())
    if size > FILTER_MAX_BYTES:
        raise ValueError(f"must be at most {FILTER_MAX_BYTES} bytes of UTF-8, not {size} bytes")
    problem = filter_problem(value)
    if problem:
        raise ValueError(problem)
    return value


_ACCOUNT_ID = _regex(
    r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$",
    "a service account ID of 6 to 30 lower-case letters, digits and hyphens, starting with a "
    "letter and not ending with a hyphen",
)
_SA_EMAIL = _regex(r"^[^@\s]+@[^@\s]+\.gserviceaccount\.com$", "a service account email")
_DEPLOYER = _regex(
    r"^(?:(?:user|group|serviceAccount):[^@\s:]+@[^@\s]+|principal://\S+)$",
    "an IAM member naming one principal (user:, group:, serviceAccount: or principal://); "
    "allUsers, allAuthenticatedUsers, domain: and principalSet:// are too broad",
)
_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
_LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")


def _labels(labels: dict[str, Any] | _Deferred) -> dict[str, Any] | _Deferred:
    if isinstance(labels, _Deferred):  # a map that holds an Output is deferred as a whole
        return labels
    if len(labels) > 64:
        raise ValueError(f"at most 64 labels are allowed, not {len(labels)}")
    for key, value in labels.items():
        if not _LABEL_KEY.match(key):
            raise ValueError(
                f"label key {key!r} must start with a lower-case letter and have at most 63 "
                "lower-case letters, digits, _ and -"
            )
        if value is not DEFERRED and not _LABEL_VALUE.match(value):
            raise ValueError(
                f"the value of label {key!r} must have at most 63 lower-case letters, digits, "
                "_ and -"
            )
    return labels


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def known(self, field: str) -> Any:
        """The field's value, or ``None`` if it is deferred."""
        value = getattr(self, field)
        return None if value is DEFERRED else value

    def is_deferred(self, field: str) -> bool:
        """True if the field's value is not known yet."""
        return getattr(self, field) is DEFERRED


class TargetSpec(_Strict):
    """Validated :class:`~pushguard.components.args.PushTargetArgs`."""

    kind: TargetKind
    name: Annotated[str, _SERVICE_NAME, AllowDeferred] | None = None
    location: Annotated[str, _REGION, AllowDeferred] | None = None
    project: Annotated[str, _PROJECT_ID, AllowDeferred] | None = None
    url: Annotated[str, _HTTPS_URL, AllowDeferred] | None = None
    custom_audiences: (
        Annotated[tuple[Annotated[str, Field(min_length=1), AllowDeferred], ...], AllowDeferred]
        | None
    ) = None

    @model_validator(mode="after")
    def _service_named(self) -> TargetSpec:
        if self.kind is not TargetKind.EXTERNAL:
            missing = [f for f in ("name", "location") if getattr(self, f) is None]
            if missing:
                raise ValueError(
                    f"{missing[0]}: required for a {self.kind.value} target (use kind 'external' "
                    "for endpoints outside Google Cloud)"
                )
        name = self.name
        if not isinstance(name, str):
            return self
        if self.kind is TargetKind.CLOUD_RUN and not _RUN_SERVICE_NAME.match(name):
            raise ValueError(
                "name: must be a Cloud Run service name for a cloud-run target: 1 to 63 "
                "lower-case letters, digits and hyphens, starting with a letter and not ending "
                f"with a hyphen, not {name!r}"
            )
        if self.kind is TargetKind.CLOUD_FUNCTION_V2 and not FUNCTION_NAME.match(name):
            raise ValueError(
                "name: must be a function name for a cloud-function-v2 target: 1 to 63 letters, "
                "digits, hyphens and underscores, starting with a letter and ending with a "
                f"letter or digit, not {name!r}"
            )
        return self


class DeadLetterSpec(_Strict):
    """Validated :class:`~pushguard.components.args.DeadLetterArgs`."""

    topic: Annotated[str, AfterValidator(_topic_ref), AllowDeferred] | None = None
    max_delivery_attempts: Annotated[
        int, Field(strict=True), WireInteger, _int_between(5, 100, ""), AllowDeferred
    ] = 5
    subscription: Annotated[bool, Field(strict=True)] = True
    message_retention_duration: Annotated[str, _duration_between(600, 2678400), AllowDeferred] = (
        "604800s"
    )

    @model_validator(mode="after")
    def _retention_needs_own_topic(self) -> DeadLetterSpec:
        if self.topic is not None and "message_retention_duration" in self.model_fields_set:
            raise ValueError(
                "message_retention_duration: applies only to the pull subscription the "
                "component makes on a topic it creates; with dead_letter.topic named, set the "
                "retention on that topic's own subscriptions and remove this input"
            )
        return self


class RetryPolicySpec(_Strict):
    """Validated :class:`~pushguard.components.args.RetryPolicyArgs`."""

    minimum_backoff: Annotated[str, _duration_between(0, 600), AllowDeferred] | None = None
    maximum_backoff: Annotated[str, _duration_between(0, 600), AllowDeferred] | None = None

    @model_validator(mode="after")
    def _ordered(self) -> RetryPolicySpec:
        low, high = self.minimum_backoff, self.maximum_backoff
        both_known = isinstance(low, str) and isinstance(high, str)
        if both_known and duration_seconds(str(low)) > duration_seconds(str(high)):
            raise ValueError(f"minimum_backoff: {low} must not exceed maximum_backoff ({high})")
        return self


StrMap = Annotated[dict[str, Annotated[str, AllowDeferred]], AllowDeferred]


class PushSubscriptionSpec(_Strict):
    """Validated :class:`~pushguard.components.args.PushSubscriptionArgs`, ``project`` filled in."""

    topic: Annotated[str, AfterValidator(_topic_ref), AllowDeferred]
    push_endpoint: Annotated[str, Field(min_length=1), AllowDeferred]
    target: TargetSpec
    project: Annotated[str, _PROJECT_ID, AllowDeferred]
    project_number: Annotated[str, _PROJECT_NUMBER, AllowDeferred] | None = None
    subscription_name: (
        Annotated[str, AfterValidator(lambda v: check_pubsub_id("subscription", v)), AllowDeferred]
        | None
    ) = None
    push_auth_service_account_email: Annotated[str, _SA_EMAIL, AllowDeferred] | None = None
    push_auth_account_id: Annotated[str, _ACCOUNT_ID, AllowDeferred] | None = None
    audience: Annotated[str, Field(min_length=1), AllowDeferred] | None = None
    attributes: StrMap | None = None
    no_wrapper: Annotated[bool, Field(strict=True)] = False
    write_metadata: Annotated[bool, Field(strict=True), AllowDeferred] = False
    ack_deadline_seconds: (
        Annotated[
            int, Field(strict=True), WireInteger, _int_between(10, 600, " seconds"), AllowDeferred
        ]
        | None
    ) = None
    message_retention_duration: (
        Annotated[str, _duration_between(600, 2678400), AllowDeferred] | None
    ) = None
    retain_acked_messages: Annotated[bool, Field(strict=True), AllowDeferred] | None = None
    expiration_ttl: Annotated[str, AllowDeferred] | None = None
    filter: Annotated[str, AfterValidator(_filter), AllowDeferred] | None = None
    enable_message_ordering: Annotated[bool, Field(strict=True), AllowDeferred] | None = None
    retry_policy: RetryPolicySpec | None = None
    labels: Annotated[StrMap, AfterValidator(_labels)] | None = None
    paused: Annotated[bool, Field(strict=True)] = False
    token_creator_grant: TokenCreatorGrant = TokenCreatorGrant.SERVICE_ACCOUNT
    deployers: tuple[Annotated[str, _DEPLOYER], ...] = ()
    dead_letter: DeadLetterSpec | None = None
    in_service_perimeter: Annotated[bool, Field(strict=True)] = False
    accept_backlog_loss: Annotated[bool, Field(strict=True)] = False
    grant_invoker: Annotated[bool, Field(strict=True)] = True

    @model_validator(mode="after")
    def _consistent(self) -> PushSubscriptionSpec:
        # Model-level messages start with the field they are about (see _problem).
        if self.write_metadata is True and self.no_wrapper is False:
            raise ValueError("write_metadata: requires no_wrapper (unwrapped delivery)")
        if self.push_auth_service_account_email is not None and self.push_auth_account_id:
            raise ValueError(
                "push_auth_account_id: give either push_auth_service_account_email (an existing "
                "account) or push_auth_account_id (an account to create), not both"
            )
        expiration = expiration_problem(self.expiration_ttl, self.message_retention_duration)
        if expiration:
            raise ValueError(f"expiration_ttl: {expiration}")
        if self.paused and self.in_service_perimeter and not self.accept_backlog_loss:
            raise ValueError(
                "paused: inside a service perimeter an existing push subscription's push config "
                "cannot be updated, so pausing (or resuming) replaces the subscription and "
                "deletes every undelivered message; set accept_backlog_loss: true to accept that"
            )
        if _same_topic(self.project, self.topic, self.dead_letter):
            raise ValueError(
                "dead_letter.topic: must not be the subscription's own topic (dead letters "
                "would be redelivered to it); name another topic or omit it to have one created"
            )
        return self


def _topic_path(project: Any, topic: Any) -> str | None:
    """``projects/P/topics/T`` of a topic ID or path, ``None`` when not known yet."""
    if not isinstance(topic, str):
        return None
    if topic.startswith("projects/"):
        return topic
    return f"projects/{project}/topics/{topic}" if isinstance(project, str) else None


def _same_topic(project: Any, topic: Any, dead_letter: DeadLetterSpec | None) -> bool:
    if dead_letter is None or dead_letter.topic is None:
        return False
    ours, theirs = _topic_path(project, topic), _topic_path(project, dead_letter.topic)
    return ours is not None and ours == theirs


UNSUPPORTED_INPUTS: Final = {
    "enable_exactly_once_delivery": (
        "is not supported for push subscriptions: Pub/Sub push does not support exactly-once "
        "delivery (https://cloud.google.com/pubsub/docs/exactly-once-delivery); make the "
        "endpoint idempotent instead"
    ),
}
"""Inputs of ``gcp.pubsub.Subscription`` a team may try that push subscriptions cannot have."""

_TYPE_WORDS: Final = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "dict_type": "an object (a mapping of names to values)",
    "model_type": "an object (a mapping of names to values)",
    "model_attributes_type": "an object (a mapping of names to values)",
    "tuple_type": "a list",
    "list_type": "a list",
}
"""What a pydantic type error's field allows, in the words of the error message."""


def _description(location: tuple[str, ...]) -> str:
    """The first sentence of the input's documentation
    (:data:`~pushguard.components.args.INPUT_DOCS`), which says what values are allowed; ``""``
    when it has none."""
    return INPUT_DOCS.get(".".join(location), "")


def _field_path(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location) or "args"


def _problem(error: Mapping[str, Any]) -> tuple[str, str]:
    location = tuple(error.get("loc", ()))
    path = _field_path(location)
    message = str(error.get("msg", "is invalid"))
    message = message.removeprefix("Value error, ")
    head, sep, rest = message.partition(": ")
    if error.get("type") == "value_error" and sep and re.fullmatch(r"[a-z_.]+", head):
        return _field_path((*location, head)), rest
    if error.get("type") == "extra_forbidden":
        return path, UNSUPPORTED_INPUTS.get(
            path, "is not an input of PushSubscription (check the spelling)"
        )
    if error.get("type") == "missing":
        return path, "is required"
    value = error.get("input")
    sensitive = bool(location) and str(location[0]) in SENSITIVE_FIELDS
    expected = _TYPE_WORDS.get(str(error.get("type")))
    if expected is not None:
        got = type(value).__name__ if sensitive else f"{type(value).__name__} {value!r}"
        description = _description(tuple(str(part) for part in location))
        return path, f"must be {expected}, not {got}" + (f" ({description})" if description else "")
    if (
        error.get("type") != "value_error"
        and isinstance(value, bool | int | float)
        and not sensitive
    ):
        message = f"{message} (got {value!r})"
    return path, message


def validate_spec(component: str, values: Mapping[str, Any]) -> PushSubscriptionSpec:
    """Validate inputs (with :data:`DEFERRED` standing for unknown values) into a spec.

    Raises:
        PushSubscriptionInputError: listing every invalid field with what is allowed.
    """
    try:
        return PushSubscriptionSpec.model_validate(dict(values))
    except ValidationError as error:
        raise PushSubscriptionInputError(
            component, [_problem(e) for e in error.errors(include_url=False)]
        ) from None
