"""The session's own commands as the editor's menu lists them, after a console's tools: the
one place the tests pin that list (adding a command changes it here)."""

from typing import Final

SESSION_COMMANDS: Final = [
    "export",
    "jobs",
    "kill",
    "keep",
    "undo",
    "redo",
    "rewind",
    "permissions",
    "budget",
]
CONSOLE_TOOLS: Final = ["read", "write", "edit", "bash", "grep", "glob", "plan"]
