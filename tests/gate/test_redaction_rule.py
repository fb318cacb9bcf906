"""Issue 34, item 5: the one redaction rule (:mod:`pushguard.gate.redact`,
:mod:`pushguard.crossguard.secrets`). A value is hidden whole, never in part; in text a secret,
or a part of it a message derives from it, is hidden where it stands as a whole token, never
inside a longer name; a short secret only where it is quoted or is the whole text."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from pushguard.crossguard.secrets import scrub
from pushguard.crossguard.wire import SECRET_SIG, SIG_KEY
from pushguard.gate.redact import Redactor, record_secrets, redact_value


def envelope(value: object) -> dict[str, object]:
    return {SIG_KEY: SECRET_SIG, "value": value}


def test_in_text_a_secret_is_hidden_as_a_token_never_inside_a_longer_name() -> None:
    text = "relay-push: relay, /hooks/relay/x, relay.example, 'relay', RELAY."
    assert scrub(text, ["relay"]) == (
        "relay-push: [secret], /hooks/[secret]/x, [secret].example, '[secret]', [secret]."
    )
    assert scrub("relayed relay_x xrelay relay2", ["relay"]) == "relayed relay_x xrelay relay2"


def test_a_short_secret_is_hidden_where_quoted_or_whole_never_as_a_word_of_prose() -> None:
    assert scrub("a value 'a' and \"a\" and `a`", ["a"]) == (
        "a value [secret] and [secret] and [secret]"
    )
    assert scrub(" 1 ", ["1"]) == " [secret] " and scrub("1 mandatory", ["1"]) == "1 mandatory"
    assert redact_value({"s": envelope("1"), "plain": "1", "other": "10"}) == {
        "s": "[secret]",
        "plain": "[secret]",
        "other": "10",
    }


def test_a_token_a_message_takes_out_of_a_secret_url_is_hidden_but_not_its_words() -> None:
    endpoint = "http://hooks.example/pubsub/s3cr3t-t0ken-5f1d2c/push?sig=AbCdEf12"
    assert scrub("its token is s3cr3t-t0ken-5f1d2c; sig AbCdEf12.", [endpoint]) == (
        "its token is [secret]; sig [secret]."
    )
    assert scrub("gcp:pubsub/subscription:Subscription push", [endpoint]) == (
        "gcp:pubsub/subscription:Subscription push"
    )


def test_values_names_and_urns_are_hidden_whole_never_in_part() -> None:
    r = Redactor.for_values({"k": envelope("relay")})
    assert r.value({"name": "relay-push", "same": " RELAY ", "list": ["relay"]}) == {
        "name": "relay-push",
        "same": "[secret]",
        "list": ["[secret]"],
    }
    assert r.string("relay-push") == "relay-push"
    urn = "urn:pulumi:dev::relay::gcp:pubsub/topic:Topic::{}"
    assert r.urn(urn.format("relay")) == urn.format("[secret]")
    assert r.urn(urn.format("relay-push")) == urn.format("relay-push")
    assert r.text("relay-push: relay") == "relay-push: [secret]"


def test_a_plain_input_inside_a_secret_output_is_not_a_secret() -> None:
    account = "sa@acme.iam.gserviceaccount.com"
    inputs = {
        "pushConfig": {
            "pushEndpoint": envelope("https://h.example/p"),
            "oidcToken": {"audience": "orders-topic"},
        },
        "labels": {"team": envelope("relay")},
    }
    outputs = {
        "pushConfig": envelope(
            {
                "pushEndpoint": "https://h.example/p",
                "oidcToken": {"audience": "orders-topic", "serviceAccountEmail": account},
            }
        ),
        "labels": envelope({"team": "relay"}),
        "id": envelope(["orders-topic"]),
    }
    assert record_secrets(inputs, outputs) == {
        "https://h.example/p",
        "relay",
        account,  # not in the inputs: the output's own
        "orders-topic",  # a secret output the inputs do not hold at that place
    }


WORD = string.ascii_letters + string.digits + "-_"


@settings(max_examples=400)
@given(
    secret=st.text(alphabet=string.ascii_letters + string.digits, min_size=4, max_size=12),
    before=st.text(alphabet=WORD, min_size=1, max_size=4),
    after=st.text(alphabet=WORD, min_size=1, max_size=4),
    glue=st.sampled_from([" ", "/", ".", ": ", "=", "'", "(", "\n"]),
)
def test_a_secret_never_survives_standing_alone_and_a_name_holding_it_stays_whole(
    secret: str, before: str, after: str, glue: str
) -> None:
    name = f"{before}{secret}{after}"
    folded, part = name.casefold(), secret.casefold()
    if sum(folded.startswith(part, i) for i in range(len(folded))) > 1:
        return  # the secret, again or overlapping itself, may cover the whole name
    assert scrub(f"{name}{glue}{secret}{glue}", [secret]) == f"{name}{glue}[secret]{glue}"
