"""The session's own slash commands (``/export``, …): served by the server before any driver
sees a prompt, the same in console and model mode.

:mod:`.base` has what a command is and how its turn runs, :mod:`.table` the one table of
them (adding a command is one entry there), each command its own module beside them.
"""
