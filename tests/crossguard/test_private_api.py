"""pushguard's pack subclasses pulumi-policy's internal Analyzer servicer. An upgrade that changes
what pushguard relies on fails here, in CI, not at a customer's `pulumi preview`."""

from __future__ import annotations

import inspect

import pulumi_policy.policy as policy_module
from pulumi_policy import deserialize, proxy
from pulumi_policy.policy import _PolicyAnalyzerServicer

from pushguard.crossguard import wire

EXPECTED_INIT = [
    "self",
    "name",
    "version",
    "policies",
    "enforcement_level",
    "initial_config",
    "description",
    "display_name",
    "readme",
    "provider",
    "tags",
    "repository",
]


def test_the_servicer_constructor_takes_what_the_pack_passes() -> None:
    assert list(inspect.signature(_PolicyAnalyzerServicer.__init__).parameters) == EXPECTED_INIT


def test_the_servicer_methods_the_pack_overrides_or_calls_exist() -> None:
    for name in ("Analyze", "AnalyzeStack", "Configure", "ConfigureStack", "GetAnalyzerInfo"):
        parameters = inspect.signature(getattr(_PolicyAnalyzerServicer, name)).parameters
        assert len(parameters) == 3, name  # self, request, context: called positionally
    # the servicer's helpers pushguard's AnalyzeStack loop calls (crossguard/stack_call.py)
    for name in (
        "_get_enforcement_level",
        "_map_enforcement_level",
        "_configure_runtime_settings",
        "_create_report_violation",
        "_get_resource_options",
        "_get_provider_resource",
        "_get_policy_config",
    ):
        assert callable(getattr(_PolicyAnalyzerServicer, name)), name


def test_the_grpc_options_are_a_list_of_pairs() -> None:
    options = policy_module._GRPC_CHANNEL_OPTIONS
    assert isinstance(options, list) and all(len(pair) == 2 for pair in options)


def test_the_secret_signature_comes_from_pulumi_policy_with_the_wire_values() -> None:
    """``crossguard/wire.py`` takes ``SIG_KEY``/``SECRET_SIG`` from ``pulumi_policy.deserialize``
    (the preview, the analysis and the pack read secret envelopes with them)."""
    assert wire.SIG_KEY == deserialize.SPECIAL_SIG_KEY == "4dabf18193072939515e22adb298388d"
    assert wire.SECRET_SIG == deserialize.SPECIAL_SECRET_SIG == "1b47061264138c4ac30d75fd1eb44270"


def test_the_wire_helpers_the_pack_imports_exist() -> None:
    assert deserialize.serialize_properties({"a": [1, {"b": "c"}]}) == {"a": [1, {"b": "c"}]}
    for name in ("STRING", "BOOLEAN", "NUMBER", "ARRAY", "OBJECT", "ASSET", "ARCHIVE"):
        assert isinstance(getattr(proxy, f"UNKNOWN_{name}_VALUE"), str), name
    assert isinstance(proxy.UnknownValueError(proxy.UNKNOWN_STRING_VALUE, []), Exception)
