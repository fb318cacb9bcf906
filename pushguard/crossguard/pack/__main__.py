"""pushguard's own policy pack, as installed with the package: the default of
``pushguard preview --policy-pack``. The repository's ``policies/`` folder is the same pack for
``pulumi preview --policy-pack``; ``pushguard pack build`` writes it in the form
``pulumi policy publish`` takes.
"""

from pushguard.crossguard import serve

serve()
