"""``pushguard analyze``: the policy pack over existing Pulumi state (``pulumi stack export`` files
and self-managed backend checkpoints), as ``pulumi policy analyze`` runs it, for many stacks at
once and without the Pulumi CLI."""
