"""Organisation-wide audit of Pub/Sub push subscriptions on Apache Spark, over Cloud Asset
Inventory exports, with the same rules as the policy pack.

Pipeline: :mod:`~pushguard.audit.read` (files -> lines; BigQuery tables through
:mod:`~pushguard.audit.bigquery`) -> :mod:`~pushguard.audit.parse` (lines -> assets or
quarantine, explicit schemas from :mod:`~pushguard.audit.schemas`, wrong JSON types from
:mod:`~pushguard.audit.json_types`) -> :mod:`~pushguard.audit.scan` (the one pass: what is
kept, the counts) -> :mod:`~pushguard.audit.join` (per-subscription facts:
:mod:`~pushguard.audit.hierarchy`, :mod:`~pushguard.audit.targets`,
:mod:`~pushguard.audit.perimeters`, :mod:`~pushguard.audit.grants`) ->
:mod:`~pushguard.audit.evaluate` (the rules, ``mapInArrow``) -> outputs: findings and
:mod:`~pushguard.audit.quarantine`, then
:mod:`~pushguard.audit.aggregates` (one job) -> :mod:`~pushguard.audit.summarise` ->
``summary.json`` and :mod:`~pushguard.audit.report`. :mod:`~pushguard.audit.job` runs it all
with :mod:`~pushguard.audit.options`; :mod:`~pushguard.audit.command` is the command. Needs the
``audit`` extra (pyspark).
"""
