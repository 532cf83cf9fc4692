"""The keys of the config file, one to one with the command line and the environment.

``api_key`` and ``api_key_env`` have no option, on purpose: a key on a command line is visible
to every user of the machine. Read on every start: no I/O, nothing heavy.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

import attrs

from acp_sidecar.values import Value

MODE_CHOICES: Final = ("ask", "auto", "read-only")
"""The modes (:data:`acp_sidecar.bridge.modes.MODE_IDS`, which imports the protocol types;
a test keeps the two equal)."""

Kind: TypeAlias = Literal["text", "names", "count", "seconds", "amount", "flag", "choice", "path"]
"""What a key's value is: one string, a list of strings, a whole number (``least`` and up), a
positive number of seconds, a positive number, a boolean, one of ``choices``, or a file-system
path (``~`` is expanded)."""


@attrs.frozen(repr=False, eq=False)
class Key(Value):
    """One setting of the config file."""

    name: str
    """The key in the file (top level)."""
    kind: Kind
    """The type of its value."""
    help: str
    """One line on what it sets (``configure`` and ``doctor`` show it)."""
    option: str | None = None
    """The command-line option it stands for; ``None``: none (see the module invariants)."""
    env: str | None = None
    """The environment variable that wins over it; ``None``: none."""
    choices: tuple[str, ...] = ()
    """For ``choice``: the values allowed."""
    least: int = 1
    """For ``count``: the least value allowed."""

    @property
    def dest(self) -> str:
        """The attribute of the parsed command line the key fills in."""
        return self.name


KEYS: Final[tuple[Key, ...]] = (
    Key("model", "text", "the default model", "--model", "ACP_SIDECAR_MODEL"),
    Key("models", "names", "the models offered in the picker", "--models", "ACP_SIDECAR_MODELS"),
    Key("base_url", "text", "the endpoint's base URL", "--base-url", "OPENAI_BASE_URL"),
    Key("api_key_env", "text", "the environment variable holding the endpoint's key"),
    Key("api_key", "text", "the endpoint's key, stored (the file must be private: mode 0600)"),
    Key(
        "max_turn_requests",
        "count",
        "model requests one turn may make",
        "--max-turn-requests",
        "ACP_SIDECAR_MAX_TURN_REQUESTS",
    ),
    Key(
        "max_parallel_tools",
        "count",
        "tool calls of one response run at once",
        "--max-parallel-tools",
        "ACP_SIDECAR_MAX_PARALLEL_TOOLS",
    ),
    Key(
        "max_tokens",
        "count",
        "the cap on one response's tokens (0: no cap)",
        "--max-tokens",
        "ACP_SIDECAR_MAX_TOKENS",
        least=0,
    ),
    Key(
        "first_byte_timeout",
        "seconds",
        "seconds a model's answer may take to begin",
        "--first-byte-timeout",
        "ACP_SIDECAR_FIRST_BYTE_TIMEOUT",
    ),
    Key(
        "budget_cost",
        "amount",
        "each session's cost budget, in its model's currency",
        "--budget-cost",
    ),
    Key("budget_tokens", "count", "each session's token budget", "--budget-tokens"),
    Key("budget_time", "seconds", "each session's budget of model time", "--budget-time"),
    Key(
        "mode",
        "choice",
        "the mode new sessions start in",
        "--mode",
        "ACP_SIDECAR_MODE",
        MODE_CHOICES,
    ),
    Key(
        "allow_outside_workspace",
        "flag",
        "let tools work outside the session's directory",
        "--allow-outside-workspace",
    ),
    Key("acp_v2", "flag", "offer ACP v2 (preview) to clients that ask", "--acp-v2"),
    Key("tools", "names", "extra tool modules (MODULE:ATTR)", "--tools"),
    Key(
        "pass_env",
        "names",
        "secret variables commands may see",
        "--pass-env",
        "ACP_SIDECAR_PASS_ENV",
    ),
    Key(
        "fsync",
        "choice",
        "when session logs are synced",
        "--fsync",
        None,
        ("turn", "record", "never"),
    ),
    Key(
        "mcp_start_timeout",
        "seconds",
        "seconds each MCP server gets to start",
        "--mcp-start-timeout",
    ),
    Key("store", "path", "where session logs are kept", "--store", "ACP_SIDECAR_STORE"),
    Key(
        "log_level",
        "choice",
        "the least severe log level written",
        "--log-level",
        None,
        ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
    ),
    Key("log_file", "path", "where logs go instead of stderr", "--log-file"),
)
"""Every top-level key but the ``model_info`` table, in the order ``configure`` writes them."""

KEYS_BY_NAME: Final = {key.name: key for key in KEYS}

MODEL_INFO: Final = "model_info"
"""The table of per-model settings: ``[model_info."NAME"]``."""
PERMISSIONS: Final = "permissions"
"""The table of permission rules: ``[permissions]`` with ``rules = ["allow edit src/**", …]``
(checked by the server, which reports a bad rule by its line and keeps the others)."""
MODEL_INFO_KEYS: Final = ("context", "images", "reasoning", "input", "output", "currency")
"""The settings of one model, as ``--model-info`` names them."""

DEFAULTS: Final[dict[str, object]] = {
    "allow_outside_workspace": False,
    "acp_v2": False,
    "fsync": "turn",
    "mcp_start_timeout": 10.0,
    "log_level": "WARNING",
}
"""The built-in defaults of the keys whose option has one (the others default to unset)."""
