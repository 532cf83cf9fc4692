"""What ``bash`` runs commands with.

- :mod:`.process`: one shell command in its own session, its output kept bounded.
- :mod:`.reaper`: ending what one command started (its whole process tree) and nothing else.

Invariant: nothing here imports a tool; of the built-ins this package depends only on
:mod:`acp_sidecar.tools.builtin.errors` (and on the pipeline's :mod:`acp_sidecar.tools.cancel`
and :mod:`acp_sidecar.tools.environment`).
"""
