"""``pushguard audit --guardrails DIR``: what Organization Policy custom constraints would deny.

Before a platform team enforces custom constraints on ``pubsub.googleapis.com/Subscription``
(the Pub/Sub page "Use custom organization policies",
https://cloud.google.com/pubsub/docs/custom-constraints), the audit evaluates them over the
export: each constraint's CEL condition over every subscription's REST resource (CAI's
``resource.data``), scoped by the policies of ``DIR/policies`` as Organization Policy scopes
them (attachment point, inheritance, ``reset``, ``spec`` against ``dryRunSpec``, tag
conditions). Existing resources are not touched by a new constraint; their next ``CREATE`` or
``UPDATE`` is what it would refuse.

- :mod:`~pushguard.audit.guardrails.files`: reading and checking ``DIR`` (before Spark starts),
  a constraint file in :mod:`~pushguard.audit.guardrails.constraint_file`, a policy file in
  :mod:`~pushguard.audit.guardrails.policy_file`, the error in
  :mod:`~pushguard.audit.guardrails.errors`;
- :mod:`~pushguard.audit.guardrails.model`: what was read, plain picklable data;
- :mod:`~pushguard.audit.guardrails.scope`: which policy applies to a subscription;
- :mod:`~pushguard.audit.guardrails.condition`: the CEL condition over one subscription;
- :mod:`~pushguard.audit.guardrails.verdict`: one subscription against every constraint;
- :mod:`~pushguard.audit.guardrails.spark`: the pass on the executors, ``guardrails.jsonl``
  and the counts;
- :mod:`~pushguard.audit.guardrails.counts`, :mod:`~pushguard.audit.guardrails.report`: the
  ``guardrails`` part of ``summary.json`` and its section of ``report.html``.
"""
