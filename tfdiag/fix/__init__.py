"""``tfdiag fix``: a finding's fix as an edit of the user's own line, measured on both
versions of the program before it is offered.

:mod:`~tfdiag.fix.edits` writes the edits (one module per kind, keyed by the finding's
remedy), :mod:`~tfdiag.fix.propose` turns findings into proposals, :mod:`~tfdiag.fix.patch`
holds a proposal and its unified diff, :mod:`~tfdiag.fix.verify_patch` runs the original
and the patched program and judges, :mod:`~tfdiag.fix.apply` writes a verified patch.
Nothing here imports TensorFlow: the programs run in their own processes.
"""
