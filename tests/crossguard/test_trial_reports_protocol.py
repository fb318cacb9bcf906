"""Issue 34, item 5, over the pack's Analyzer protocol as the Pulumi CLI speaks it: the pack
hides a secret where it stands as a whole token of a message, never a word inside a resource
name, and a finding both halves see is reported once even when the outputs (``AnalyzeStack``:
the engine makes a whole output secret) hide more of it than the inputs (``Analyze``) do."""

from __future__ import annotations

import re

from pushguard.gate.analyzer import PolicyPackProcess
from tests.crossguard.wire import PUSH_SA, push_config, run_service, secret, subscription

TOKEN = "s3cr3t-t0ken-5f1d2c"


def test_a_secret_is_hidden_in_messages_but_never_inside_a_name(pack: PolicyPackProcess) -> None:
    pack.configure({})
    sub = subscription(
        "relay-push",
        labels={"team": secret("relay")},
        pushConfig=push_config(
            secret(f"http://relay.acme.example/hooks/{TOKEN}/push"),
            account=secret("push@relay.iam.gserviceaccount.com"),
        ),
    )
    found = [*pack.analyze(sub), *pack.analyze_stack([sub])]
    about = [d for d in found if d.policy in ("push-endpoint-https", "push-sa-same-project")]
    assert {d.policy for d in about} == {"push-endpoint-https", "push-sa-same-project"}, found
    for d in found:
        assert "[secret]-push" not in d.message, d.message
        assert TOKEN not in d.message and "relay.acme.example" not in d.message
        # the secret "relay" (a label, and the account's project) never stands alone
        assert not re.search(r"(?<![\w-])relay(?![\w-])", d.message), d.message
    assert all("relay-push: " in d.message for d in about), [d.message for d in about]


def test_a_finding_is_reported_once_when_the_outputs_hide_more_than_the_inputs(
    pack: PolicyPackProcess,
) -> None:
    pack.configure({})
    foreign = "push@other-proj.iam.gserviceaccount.com"
    declared = push_config(secret("https://orders-3kq2x7ab9c-ew.a.run.app/push"), account=foreign)
    inputs = subscription(pushConfig=declared)
    # the engine keeps the whole pushConfig output secret, its plain account included
    outputs = subscription(
        pushConfig=secret({**declared, "pushEndpoint": declared["pushEndpoint"]["value"]})
    )
    found = [*pack.analyze(inputs), *pack.analyze_stack([outputs])]
    same_project = [d for d in found if d.policy == "push-sa-same-project"]
    assert len(same_project) == 1, [d.message for d in same_project]
    assert "other-proj" in same_project[0].message, "the plain input's wording is kept"


def test_a_plain_input_inside_a_secret_output_is_shown_in_the_stack_halfs_messages(
    pack: PolicyPackProcess,
) -> None:
    """``AnalyzeStack`` gets outputs only, where the engine keeps the whole ``pushConfig`` secret
    because its endpoint was; the account the program declared plain (``Analyze`` got the
    inputs) is not a secret there, and one declared secret still is."""
    service = run_service(uri="https://orders-3kq2x7ab9c-ew.a.run.app")
    for declared_account, shown in ((PUSH_SA, True), (secret(PUSH_SA), False)):
        pack.configure({})
        declared = push_config(
            secret("https://orders-3kq2x7ab9c-ew.a.run.app/push"), account=declared_account
        )
        inputs = subscription(pushConfig=declared)
        plain = {**declared, "pushEndpoint": declared["pushEndpoint"]["value"]}
        if not shown:
            plain["oidcToken"] = {**plain["oidcToken"], "serviceAccountEmail": PUSH_SA}
        outputs = subscription(pushConfig=secret(plain))
        pack.analyze(service)
        pack.analyze(inputs)
        found = pack.analyze_stack([service, outputs])
        [invoker] = [d for d in found if d.policy == "push-invoker-binding"]
        assert (PUSH_SA in invoker.message) is shown, invoker.message
