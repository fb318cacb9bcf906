"""Organisation-wide audit of Pub/Sub push subscriptions on Apache Spark, over Cloud Asset
Inventory exports, with the same rules as the policy pack.

Pipeline: :mod:`~pushguard.audit.read` (files -> lines) -> :mod:`~pushguard.audit.parse` (lines ->
assets or quarantine, explicit schemas from :mod:`~pushguard.audit.schemas`) ->
:mod:`~pushguard.audit.join` (per-subscription facts, IAM inherited) ->
:mod:`~pushguard.audit.evaluate` (the rules, ``mapInArrow``) -> :mod:`~pushguard.audit.job`
(outputs, summary) and :mod:`~pushguard.audit.report`. Needs the ``audit`` extra (pyspark).
"""
