"""The option groups the subcommands draw from; a new flag goes into its group here.

A group is added to the program and again to each subcommand; the subcommand's copy defaults
to ``SUPPRESS``, so it never overwrites a value given before the subcommand.
"""

from __future__ import annotations

import argparse
import math

from acp_sidecar.command_line.guidance import KeyRefused

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
CONFIG_HINT = "~/.config/acp-sidecar/config.toml on Linux (the user config directory)"

DRIVER_HELP = (
    "load the driver from MODULE:ATTR, a callable that returns a driver: an object with a "
    "`prompt_capabilities` attribute and `async run_turn(turn) -> stop reason` (see "
    "acp_sidecar.agent.driver). MODULE must be importable (on PYTHONPATH). Meant for tests, "
    "benchmarks and experiments; the default driver is the slash-command console for the tools"
)

TOOLS_HELP = (
    "also offer the tools at MODULE:ATTR: a ToolDefinition, a list of them, or a callable "
    "returning either (repeatable). Installed packages can offer tools through the "
    "`acp_sidecar.tools` entry-point group. A module that fails to load is reported on "
    "stderr (with its traceback at --log-level DEBUG) and skipped"
)

KEY_ADVICE = (
    "put it in $OPENAI_API_KEY (or the variable the config file's api_key_env names) where "
    "acp-sidecar starts, or store it in the config file with `acp-sidecar configure`"
)


def _positive(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def seconds(text: str) -> float:
    """A positive, finite number of seconds (an ``argparse`` type)."""
    return _positive(text, "a positive number of seconds")


def amount(text: str) -> float:
    """A positive, finite number (an ``argparse`` type)."""
    return _positive(text, "a positive number")


def whole(text: str) -> int:
    """A whole number of at least 1 (an ``argparse`` type)."""
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def duration(text: str) -> float:
    """Seconds in ``600``, ``90s``, ``10m`` or ``1.5h`` (an ``argparse`` type)."""
    from acp_sidecar.agent.model.budget import parse_duration  # off --version's path

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _default(value: object, suppress: bool) -> object:
    return argparse.SUPPRESS if suppress else value


def _help(text: str, hidden: bool) -> str:
    return argparse.SUPPRESS if hidden else text


def add_config_options(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """``--config``: the file every command but ``configure`` reads."""
    parser.add_argument(
        "--config",
        metavar="PATH",
        default=_default(None, suppress),
        help="read settings from the TOML file PATH (default: $ACP_SIDECAR_CONFIG, else "
        f"{CONFIG_HINT}); options and environment variables win over it",
    )


def add_key_refusal(parser: argparse.ArgumentParser, advice: str) -> None:
    """A hidden ``--api-key`` that refuses, saying ``advice`` (where a key goes instead)."""
    parser.add_argument("--api-key", action=KeyRefused, advice=advice)


def add_log_options(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """Where logs go and how much of them."""
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        default=_default(None, suppress),
        help="write logs to PATH instead of stderr",
    )
    parser.add_argument(
        "--log-level",
        default=_default(None, suppress),
        type=str.upper,
        choices=LOG_LEVELS,
        help="the least severe log level written (default: WARNING)",
    )


def add_store_options(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """Where session logs are kept."""
    parser.add_argument(
        "--store",
        metavar="DIR",
        default=_default(None, suppress),
        help="keep session logs in DIR (default: $ACP_SIDECAR_STORE, else the user data "
        "directory's acp-sidecar/sessions)",
    )


def add_tool_options(
    parser: argparse.ArgumentParser, *, suppress: bool = False, hidden: bool = False
) -> None:
    """Which tools are offered besides the built-in ones."""
    parser.add_argument(
        "--tools",
        metavar="MODULE:ATTR",
        action="append",
        default=_default(None, suppress),
        help=_help(TOOLS_HELP, hidden),
    )


def add_model_options(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """The model, its endpoint and the limits of its turns (``serve`` and ``doctor``)."""
    parser.add_argument(
        "--model",
        metavar="NAME",
        default=_default(None, suppress),
        help="answer prompts with this model on an OpenAI-compatible endpoint (default: "
        "$ACP_SIDECAR_MODEL; without a model, prompts are slash commands for the tools)",
    )
    parser.add_argument(
        "--no-model",
        action="store_true",
        default=_default(False, suppress),
        help="answer prompts with the console for the tools in this run, whatever the "
        "model options, variables and config file say (an empty --model '' says the same)",
    )
    parser.add_argument(
        "--models",
        metavar="NAME[,NAME...]",
        action="append",
        default=_default(None, suppress),
        help="offer these models in the editor's model picker (repeatable; default: "
        "$ACP_SIDECAR_MODELS, names separated by commas). The default model is --model, else "
        "the first named; the endpoint's GET /models, when it has one, adds its models",
    )
    parser.add_argument(
        "--model-info",
        metavar="NAME:SETTING[,SETTING...]",
        action="append",
        default=_default(None, suppress),
        help="what is known of the model NAME (repeatable; a model described is offered too; "
        "default: $ACP_SIDECAR_MODEL_INFO, entries separated by ';'). Settings: "
        "context=TOKENS (its context window), images (it takes image input), reasoning (it "
        "takes reasoning_effort: the picker offers an effort), and its prices per million "
        "tokens with their currency, all three or none: input=PRICE,output=PRICE,currency=CODE. "
        "Example: --model-info gpt-4.1:context=1047576,images,input=2,output=8,currency=USD",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        default=_default(None, suppress),
        help="the endpoint's base URL, e.g. http://localhost:11434/v1 for Ollama (default: "
        "$OPENAI_BASE_URL, else OpenAI's); the key comes from $OPENAI_API_KEY",
    )
    parser.add_argument(
        "--max-turn-requests",
        metavar="N",
        type=int,
        default=_default(None, suppress),
        help="with a model: end a turn with max_turn_requests after N model requests "
        "(default: $ACP_SIDECAR_MAX_TURN_REQUESTS, else 25)",
    )
    parser.add_argument(
        "--max-parallel-tools",
        metavar="N",
        type=int,
        default=_default(None, suppress),
        help="with a model: run at most N of its tool calls at once (default: "
        "$ACP_SIDECAR_MAX_PARALLEL_TOOLS, else 4)",
    )
    parser.add_argument(
        "--max-tokens",
        metavar="N",
        type=int,
        default=_default(None, suppress),
        help="with a model: cap each response at N tokens, ending the turn with max_tokens "
        "when it is reached; 0 sends no cap (default: $ACP_SIDECAR_MAX_TOKENS, else 8192)",
    )
    parser.add_argument(
        "--first-byte-timeout",
        metavar="SECONDS",
        type=seconds,
        default=_default(None, suppress),
        help="with a model: give up on a request whose answer has not begun after SECONDS, "
        "and retry it; a local server that loads the model on first use may need more "
        "(default: $ACP_SIDECAR_FIRST_BYTE_TIMEOUT, else 30)",
    )
    parser.add_argument(
        "--budget-cost",
        metavar="AMOUNT",
        type=amount,
        default=_default(None, suppress),
        help="with a model: give each session a cost budget of AMOUNT in its model's "
        "currency (its prices must be known: --model-info); a turn that reaches it ends, "
        "and /budget or the session's budget options change it (default: none)",
    )
    parser.add_argument(
        "--budget-tokens",
        metavar="N",
        type=whole,
        default=_default(None, suppress),
        help="with a model: give each session a budget of N tokens (default: none)",
    )
    parser.add_argument(
        "--budget-time",
        metavar="DURATION",
        type=duration,
        default=_default(None, suppress),
        help="with a model: give each session a budget of model time, e.g. 600, 90s, 10m "
        "or 1.5h: the time its requests take, not the time between prompts (default: none)",
    )


def add_serve_options(
    parser: argparse.ArgumentParser, *, suppress: bool = False, hidden: bool = False
) -> None:
    """The options only a serving sidecar uses: its driver, its sessions, its children."""
    parser.add_argument(
        "--driver",
        metavar="MODULE:ATTR",
        default=_default(None, suppress),
        help=_help(DRIVER_HELP, hidden),
    )
    parser.add_argument(
        "--pass-env",
        metavar="NAME",
        action="append",
        default=_default(None, suppress),
        help=_help(
            "let commands the tools run see the secret variable NAME (repeatable; also "
            "$ACP_SIDECAR_PASS_ENV, names separated by commas). By default the sidecar's own "
            "secrets (OPENAI_API_KEY, and any variable holding its value) are removed from the "
            "environment of every process it starts",
            hidden,
        ),
    )
    parser.add_argument(
        "--mode",
        choices=("ask", "auto", "read-only"),  # settings.keys.MODE_CHOICES, kept light
        default=_default(None, suppress),
        help=_help(
            "the mode new sessions start in: ask (the default: ask before changing "
            "anything), auto (run without asking) or read-only (default: $ACP_SIDECAR_MODE)",
            hidden,
        ),
    )
    parser.add_argument(
        "--fsync",
        choices=("turn", "record", "never"),
        default=_default(None, suppress),
        help=_help(
            "when session logs are synced to disk: at the end of each turn (default; a turn "
            "with nothing but its prompt is synced later, with the next turn that does "
            "something or on close), after every record, or never (the OS decides)",
            hidden,
        ),
    )
    parser.add_argument(
        "--allow-outside-workspace",
        action="store_true",
        default=_default(None, suppress),
        help=_help("let tools read, write and run outside the session's working directory", hidden),
    )
    parser.add_argument(
        "--acp-v2",
        action="store_true",
        default=_default(None, suppress),
        help=_help(
            "offer ACP v2 (preview) to clients that ask for it; session set-up only so far",
            hidden,
        ),
    )
    parser.add_argument(
        "--mcp-start-timeout",
        metavar="SECONDS",
        type=seconds,
        default=_default(None, suppress),
        help=_help(
            "give each MCP server a session names this long to start; one that takes longer "
            "is left out and the user is told (default: 10)",
            hidden,
        ),
    )


def add_serving_options(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """Every option of ``serve`` (the program's own, before any subcommand)."""
    add_config_options(parser, suppress=suppress)
    add_store_options(parser, suppress=suppress)
    add_tool_options(parser, suppress=suppress)
    add_log_options(parser, suppress=suppress)
    add_model_options(parser, suppress=suppress)
    add_serve_options(parser, suppress=suppress)
    add_key_refusal(parser, KEY_ADVICE)


def add_command_options(
    parser: argparse.ArgumentParser, *, store: bool = False, tools: bool = False
) -> None:
    """What a subcommand other than ``serve`` takes after its name: the config file, logging,
    and the store and the tools when it reads them."""
    add_config_options(parser, suppress=True)
    if store:
        add_store_options(parser, suppress=True)
    if tools:
        add_tool_options(parser, suppress=True)
    add_log_options(parser, suppress=True)
    add_key_refusal(parser, KEY_ADVICE)
