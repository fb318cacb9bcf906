"""Issue 27, items 7 and 8, over the Analyzer gRPC protocol as the Pulumi CLI speaks it: the pack
answers an over-deep request with an error and keeps serving (it died of SIGSEGV inside protobuf's
decoder), and a stack with thousands of secrets is scrubbed with one matcher per request, never a
fragment of a secret in a message."""

from __future__ import annotations

import grpc
import pytest
from pulumi.runtime import proto

from pushguard.crossguard import secrets as secrets_module
from pushguard.crossguard.scope import request_scope
from pushguard.crossguard.secrets import scrub
from pushguard.gate.analyzer import PolicyPackProcess
from tests.crossguard.wire import push_config, secret, subscription

SUB_TYPE = b"gcp:pubsub/subscription:Subscription"


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _deep_struct(depth: int) -> bytes:
    """``{"a": {"a": ... "leaf"}}`` nested ``depth`` times, as ``google.protobuf.Struct`` bytes
    (built as bytes, headers outside in: the protobuf API itself recurses to build it)."""
    leaf = _field(3, b"leaf")  # Value.string_value
    key = _field(1, b"a")  # a Struct.fields entry's key
    headers: list[bytes] = []
    size = len(leaf)
    for _ in range(depth + 1):
        entry = key + _varint(2 << 3 | 2) + _varint(size)  # the entry's value follows
        size += len(entry)
        struct = _varint(1 << 3 | 2) + _varint(size)  # Struct.fields
        size += len(struct)
        headers += [entry, struct]
        value = _varint(5 << 3 | 2) + _varint(size)  # Value.struct_value
        size += len(value)
        headers.append(value)
    # The outermost Value header is dropped: the request's properties field is the Struct.
    return b"".join(reversed(headers[:-1])) + leaf


def _raw_analyze(pack: PolicyPackProcess, depth: int) -> proto.AnalyzeResponse:
    request = (
        _field(1, SUB_TYPE)
        + _field(2, _deep_struct(depth))
        + _field(3, b"urn:pulumi:dev::team::gcp:pubsub/subscription:Subscription::deep")
        + _field(4, b"deep")
    )
    call = pack._channel.unary_unary(
        "/pulumirpc.Analyzer/Analyze",
        request_serializer=None,
        response_deserializer=proto.AnalyzeResponse.FromString,
    )
    return call(request, timeout=120)


@pytest.mark.parametrize("depth", [5_000, 40_000])
def test_an_over_deep_struct_is_an_error_and_the_pack_keeps_serving(
    pack: PolicyPackProcess, depth: int
) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        _raw_analyze(pack, depth)
    assert raised.value.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.INTERNAL)
    assert pack.info().name == "pushguard", "the pack is still serving"


def test_a_value_a_hundred_deep_is_decoded_not_a_finding(pack: PolicyPackProcess) -> None:
    pack.configure({})
    assert not _raw_analyze(pack, 100).diagnostics


def test_thousands_of_secrets_are_scrubbed_from_every_message(pack: PolicyPackProcess) -> None:
    pack.configure({})
    count = 1_000
    tokens = [f"tok{n:05d}xq" for n in range(count)]
    resources = [
        subscription(
            f"s{n}",
            pushConfig=push_config(
                secret(f"http://h{n}.acme.example/push?token={tokens[n]}"),
                secret(f"push{n}@acme-secret-proj.iam.gserviceaccount.com"),
            ),
        )
        for n in range(count)
    ]
    diagnostics = pack.analyze_stack(resources)
    https = [d for d in diagnostics if d.policy == "push-endpoint-https"]
    assert len(https) == count, "every http:// endpoint is reported"
    text = "\n".join(d.message for d in diagnostics)
    assert "acme-secret-proj" not in text and "acme.example" not in text
    assert not any(token in text for token in tokens)


def test_the_scrubber_is_built_once_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    real = secrets_module.scrubber

    def counting(values: object) -> object:
        built.append(1)
        return real(values)  # type: ignore[arg-type]

    monkeypatch.setattr(secrets_module, "scrubber", counting)
    with request_scope({f"secret-{n:04d}" for n in range(1_000)}):
        for n in range(1_000):
            assert scrub(f"message {n} names secret-{n:04d}") == f"message {n} names [secret]"
    assert len(built) == 1
