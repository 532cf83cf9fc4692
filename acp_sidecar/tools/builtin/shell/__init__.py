"""What ``bash`` runs commands with: one command in its own session (:mod:`.process`), ending
what it started (:mod:`.reaper`), and a session's kept jobs (:mod:`.jobs`; their records for
the next start in :mod:`.job_records`, the user's commands on them in :mod:`.job_commands`).
Nothing here imports a tool.
"""

RECORDS_DIR = ".jobs"
"""The directory of :mod:`.job_records`, inside the session store's (no session id starts with
a dot): named here, so a start that finds no records there imports nothing of theirs."""
