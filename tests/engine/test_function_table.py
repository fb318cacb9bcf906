"""Issue 37, item 3: provider function tokens resolved through pulumi-gcp's own definitions (the
function modules of the installed ``pulumi_gcp``), never by mangling the token into a module
name. Thirteen functions of pulumi-gcp 10.2.0 have a token that mangling misses: their answer at
preview had no outputs at all, so a ``plaintext`` used as a push endpoint was absent."""

from __future__ import annotations

import importlib
import importlib.metadata
import typing
from pathlib import Path

import pulumi_gcp
import pytest

from pushguard.preview.mocks import UNKNOWN_TEXT, data_source_at_preview

MISMATCHED = {
    "gcp:compute/getLBIPRanges:getLBIPRanges": "compute.get_lbip_ranges",
    "gcp:compute/getNetblockIPRanges:getNetblockIPRanges": "compute.get_netblock_ip_ranges",
    "gcp:compute/getRegionSSLPolicy:getRegionSSLPolicy": "compute.get_region_ssl_policy",
    "gcp:compute/getSSLPolicy:getSSLPolicy": "compute.get_ssl_policy",
    "gcp:compute/getVPNGateway:getVPNGateway": "compute.get_vpn_gateway",
    "gcp:compute/routerStatus:RouterStatus": "compute.router_status",
    "gcp:kms/getKMSCryptoKey:getKMSCryptoKey": "kms.get_kms_crypto_key",
    "gcp:kms/getKMSCryptoKeyVersion:getKMSCryptoKeyVersion": "kms.get_kms_crypto_key_version",
    "gcp:kms/getKMSKeyRing:getKMSKeyRing": "kms.get_kms_key_ring",
    "gcp:kms/getKMSSecret:getKMSSecret": "kms.get_kms_secret",
    "gcp:kms/getKMSSecretAsymmetric:getKMSSecretAsymmetric": "kms.get_kms_secret_asymmetric",
    "gcp:kms/getKMSSecretCiphertext:getKMSSecretCiphertext": "kms.get_kms_secret_ciphertext",
    "gcp:organizations/getIAMPolicy:getIAMPolicy": "organizations.get_iam_policy",
}
"""The pulumi-gcp functions whose module is not the mangled token, as pulumi-gcp 10.2.0 ships
them (``pulumi_gcp/<module>/<file>.py``)."""


def _mangled(token: str) -> str:
    """The module name the old mapping derived: ``getKMSSecret`` -> ``get_k_m_s_secret``
    (``index`` functions at the package's root)."""
    path, _, function = token.split(":", 1)[1].partition(":")
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in function)
    module = path.split("/")[0]
    return snake if module == "index" else f"{module}.{snake}"


def _string_outputs(module: str, token: str) -> set[str]:
    """The wire names of the string outputs of ``token``'s result class, read from its module
    here (not through the table)."""
    found = importlib.import_module(f"pulumi_gcp.{module}")
    name = token.rsplit(":", 1)[1]
    result = getattr(found, name[0].upper() + name[1:] + "Result")
    names = set()
    for attribute in vars(result).values():
        if isinstance(attribute, property):
            hint = typing.get_type_hints(attribute.fget, vars(found)).get("return")
            if hint in (str, typing.Optional[str]):  # noqa: UP045 - the annotation as written
                names.add(attribute.fget._pulumi_name)  # type: ignore[union-attr]
    return names


def test_the_list_is_every_token_mangling_misses_in_the_installed_pulumi_gcp() -> None:
    from pushguard.preview.functions import functions_of

    root = Path(pulumi_gcp.__file__).parent
    table = functions_of("gcp")
    assert len(table) > 400, len(table)  # every function, not one folder's
    missed = {
        token
        for token in table
        if not (root / (_mangled(token).replace(".", "/") + ".py")).is_file()
    }
    assert missed == set(MISMATCHED)


@pytest.mark.parametrize("token", sorted(MISMATCHED))
def test_a_token_mangling_misses_is_found_and_its_outputs_are_unknown(token: str) -> None:
    module = MISMATCHED[token]
    assert _mangled(token) != module
    strings = _string_outputs(module, token)
    assert strings, token
    answer = data_source_at_preview(token, {"project": "acme-orders"})
    assert answer["project"] == "acme-orders"  # an argument stays as the program gave it
    assert {name: answer.get(name) for name in strings - {"project"}} == dict.fromkeys(
        strings - {"project"}, UNKNOWN_TEXT
    )
    from pushguard.preview.functions import find_function

    function = find_function(token)
    assert function is not None
    assert function.module == f"pulumi_gcp.{module}"


def test_booleans_and_numbers_are_listed_as_not_carried() -> None:
    from pushguard.preview.functions import answer_at_preview

    answer = answer_at_preview("gcp:pubsub/getSubscription:getSubscription", {"name": "t"})
    assert answer is not None
    assert {"enableExactlyOnceDelivery", "ackDeadlineSeconds"} <= set(answer.uncarried)
    assert "enableExactlyOnceDelivery" not in answer.values
    assert answer.values["topic"] == UNKNOWN_TEXT


def test_a_token_no_installed_sdk_defines_has_no_answer() -> None:
    from pushguard.preview.functions import answer_at_preview

    assert answer_at_preview("gcp:pubsub/getNothing:getNothing", {}) is None
    assert answer_at_preview("acme:index:getEndpoint", {}) is None


@pytest.mark.skipif(
    not hasattr(pulumi_gcp, "project_from_id"),
    reason="gcp.project_from_id is not in the installed pulumi-gcp "
    f"{importlib.metadata.version('pulumi-gcp')} (pip's choice with the oldest Pulumi SDK): "
    "no program can call it",
)
def test_a_function_returning_one_value_answers_it_unknown_not_its_argument() -> None:
    """``gcp.project_from_id(id)`` (``invoke_single``): the program gets the one value of the
    answer, which was the ``id`` it passed, a known and wrong project."""
    answer = data_source_at_preview(
        "gcp:index/projectFromId:projectFromId", {"id": "projects/acme-orders/topics/orders"}
    )
    assert list(answer.values()) == [UNKNOWN_TEXT]
