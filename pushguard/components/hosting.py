"""The SDK's component provider of ``PushSubscription``, on every Pulumi SDK pushguard supports.

Pulumi's component provider (:class:`pulumi.provider.experimental.component.ComponentProvider`,
what ``component_provider_host`` serves) infers the package schema from the annotations of
``PushSubscription`` and of its args ``TypedDict`` classes (:mod:`pushguard.components.args`),
whose optional fields are ``NotRequired[...]`` (PEP 655). The SDK's analyzer reads
``NotRequired`` from pulumi 3.237.0 on (#22858, commit de319319029d of pulumi/pulumi: "Support
`NotRequired`, `Required` and `total=False` in TypedDicts for component resource arg types"). At
v3.204.0, pushguard's oldest supported SDK, ``Analyzer.analyze_type``
(``sdk/python/lib/pulumi/provider/experimental/analyzer.py``) reads each class's raw annotations
(``inspect.get_annotations``) and knows an optional property only as ``Optional[...]``
(``is_optional``); a ``NotRequired[...]`` falls through to ``is_enum`` and the provider cannot be
made ("issubclass() arg 1 must be a class"), so neither the ``components/`` plugin nor the
preview's construction of pushguard's own remote component worked.

With such an SDK, :func:`analysable` lets the analyzer see each ``NotRequired[T]`` of the
args classes as ``Optional[T]``: an optional property of type ``T``, which is what the newer
analyzer infers from ``NotRequired[T]`` (``optional=True``, then ``T`` analysed), so the schema
and the input mapping are the same on both. The classes' own annotations are put back as soon as
the provider is made (the analysis happens only then: ``ComponentProvider.__init__``), under a
lock; type checkers read the source, and ``__required_keys__`` is fixed when a class is created.
"""

from __future__ import annotations

import inspect
import threading
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NotRequired, Optional

if TYPE_CHECKING:
    from pulumi.provider.experimental.component import ComponentProvider

_ANALYSING = threading.Lock()
"""Held while the analyzer may see the args classes' annotations rewritten."""


def analyzer_reads_not_required() -> bool:
    """Whether the installed SDK's component analyzer reads ``NotRequired`` (pulumi 3.237.0 on:
    its ``is_not_required``)."""
    from pulumi.provider.experimental import analyzer  # noqa: PLC0415

    return hasattr(analyzer, "is_not_required")


def _args_classes() -> list[type]:
    """The ``TypedDict`` classes of :mod:`pushguard.components.args`."""
    from pushguard.components import args  # noqa: PLC0415

    return [
        value
        for value in vars(args).values()
        if typing.is_typeddict(value) and value.__module__ == args.__name__
    ]


def _as_optional(hint: Any) -> Any:
    """``Optional[T]`` for ``NotRequired[T]``, else ``hint``."""
    if typing.get_origin(hint) is NotRequired:
        return Optional[typing.get_args(hint)[0]]  # noqa: UP045 - what the SDK's analyzer reads
    return hint


@contextmanager
def analysable() -> Iterator[None]:
    """While in the block, the SDK's component analyzer can read ``PushSubscription``'s args:
    with an analyzer that does not read ``NotRequired``, each ``NotRequired[T]`` of the args
    classes reads ``Optional[T]`` (under a lock; put back on leaving). Nothing changes with a
    newer analyzer."""
    if analyzer_reads_not_required():
        yield
        return
    with _ANALYSING:
        saved = {cls: inspect.get_annotations(cls) for cls in _args_classes()}
        try:
            for cls, annotations in saved.items():
                cls.__annotations__ = {k: _as_optional(v) for k, v in annotations.items()}
            yield
        finally:
            for cls, annotations in saved.items():
                cls.__annotations__ = annotations


def component_provider(package: str, version: str = "0.0.0") -> ComponentProvider:
    """The SDK's ``ComponentProvider`` of ``PushSubscription`` and ``OrgGuardrails`` for
    ``package`` at ``version`` (the SDK's default ``0.0.0``), made :func:`analysable` on any
    supported SDK.

    Raises:
        Exception: whatever the SDK's analyzer raises for a type it cannot read.
    """
    from pulumi.provider.experimental.component import ComponentProvider  # noqa: PLC0415

    from pushguard.components.org_guardrails import OrgGuardrails  # noqa: PLC0415
    from pushguard.components.push_subscription import PushSubscription  # noqa: PLC0415

    with analysable():
        return ComponentProvider([PushSubscription, OrgGuardrails], package, version=version)
