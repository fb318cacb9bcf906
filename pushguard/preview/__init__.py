"""``pushguard preview``: a team's program under Pulumi's mock runtime, its registrations sent to a
policy pack as ``pulumi preview --policy-pack`` sends them.

This package runs the program: the project and stack config (:mod:`~pushguard.preview.project`,
:mod:`~pushguard.preview.stacks`), provider-faithful mocks (:mod:`~pushguard.preview.mocks`), the
recording engine (:mod:`~pushguard.preview.engine`), the isolated child process
(:mod:`~pushguard.preview.isolation`, :mod:`~pushguard.preview.child`), and the streaming analysis
(:mod:`~pushguard.preview.streaming`). Starting the pack, the result model and the reports are
the gate's (:mod:`pushguard.gate`), shared with ``pushguard analyze``.
"""
