"""What ``bash`` runs commands with: one command in its own session (:mod:`.process`), ending
what it started (:mod:`.reaper`), and a session's kept jobs (:mod:`.jobs`; their records for
the next start in :mod:`.job_records`, the user's commands on them in :mod:`.job_commands`).
Nothing here imports a tool.
"""
