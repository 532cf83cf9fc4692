"""What ``bash`` runs commands with: one command in its own session (:mod:`.process`), and ending
what it started (:mod:`.reaper`). Nothing here imports a tool.
"""
