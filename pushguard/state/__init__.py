"""Pulumi state as plain data: URNs (:mod:`.urn`), state files found and read
(:mod:`.files`), what a state document says (:mod:`.document`) and which of its resources
make a Pub/Sub subscription (:mod:`.subscriptions`).

A layer below the pack and the gate and beside :mod:`pushguard.policy`: plain Python (no
Pulumi SDK, no Spark, no gRPC), so ``pushguard analyze``, the pack and the audit's Spark
executors (``--stacks``) share one reading of state.
"""
