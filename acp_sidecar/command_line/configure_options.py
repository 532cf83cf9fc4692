"""The ``configure`` subcommand and its script flags (read by
:class:`acp_sidecar.configure.flags.ConfigureOptions`)."""

from __future__ import annotations

import argparse

from acp_sidecar.command_line.guidance import CommandParser, Subcommands
from acp_sidecar.command_line.options import CONFIG_HINT, add_key_refusal, add_log_options

PROVIDER_CHOICES = ("openai", "deepseek", "openrouter", "ollama", "llama.cpp", "vllm", "custom")
"""The presets of ``configure`` (:data:`acp_sidecar.configure.presets.PRESETS`, kept here for
a light start: that table imports ``attrs``, some 25 ms; a test keeps the two equal)."""

CONFIGURE_DESCRIPTION = (
    "Choose a model endpoint, check it and write the config file (--config PATH, else "
    "$ACP_SIDECAR_CONFIG, else the user config directory's acp-sidecar/config.toml). In a "
    "terminal it asks, step by step: the provider, the base URL, where the API key comes from, "
    "the models; it checks the endpoint (lists its models, sends one small request with a tool) "
    "and shows the file before writing it. An existing file's values are the defaults; its "
    "other keys and comments are kept. With --yes, or when standard input is not a terminal, "
    "it asks nothing: the flags, the existing file (for the same endpoint) and the provider's "
    "preset give the values, and a missing one is an error."
)
CONFIGURE_EPILOG = (
    "Exit status: 0 the file was written; 1 nothing was written (the check failed, the "
    "existing file is malformed, the answer was no, input ended); 2 bad or missing flags; 130 "
    "interrupted. Without --yes a failed check asks whether to write anyway; with --yes it "
    "writes nothing (pass --no-check to write without checking). The key is never taken from "
    "the command line: name its variable, or pipe it with --api-key-stdin (stored in the file, "
    'mode 0600). Example: printf %s "$KEY" | acp-sidecar configure --provider deepseek '
    "--api-key-stdin --model deepseek-v4-flash --yes"
)
KEY_ADVICE = (
    "name the variable that holds it with --api-key-env NAME, or pipe it in with "
    "--api-key-stdin (stored in the config file, mode 0600): "
    'printf %s "$KEY" | acp-sidecar configure --api-key-stdin …'
)


def add_configure_parser(commands: Subcommands) -> None:
    """The ``configure`` subcommand and its script flags."""
    commands.add_command(
        "configure",
        _fill_configure,
        help="choose a model endpoint, check it and write the config file",
        description=CONFIGURE_DESCRIPTION,
        epilog=CONFIGURE_EPILOG,
    )


def _fill_configure(configure: CommandParser) -> None:
    configure.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help=f"write this file (default: $ACP_SIDECAR_CONFIG, else {CONFIG_HINT})",
    )
    configure.add_argument(
        "--provider",
        choices=PROVIDER_CHOICES,
        help="a provider preset: its base URL, the variable that usually holds its key "
        "(OPENAI_API_KEY, DEEPSEEK_API_KEY, OPENROUTER_API_KEY; the local servers need none) "
        "and a suggested model; custom needs --base-url",
    )
    configure.add_argument(
        "--base-url", metavar="URL", default=argparse.SUPPRESS, help="the endpoint's base URL"
    )
    key = configure.add_mutually_exclusive_group()
    key.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="the sidecar reads the key from the environment variable NAME",
    )
    key.add_argument(
        "--api-key-stdin",
        action="store_true",
        help="read the key from standard input and store it in the file (mode 0600); asks nothing",
    )
    key.add_argument(
        "--no-api-key", action="store_true", help="the endpoint needs no key (a local server)"
    )
    add_key_refusal(configure, KEY_ADVICE)
    configure.add_argument(
        "--model", metavar="NAME", default=argparse.SUPPRESS, help="the default model"
    )
    configure.add_argument(
        "--models",
        metavar="NAME[,NAME...]",
        action="append",
        default=argparse.SUPPRESS,
        help="other models offered in the picker (repeatable)",
    )
    configure.add_argument(
        "--context-window",
        metavar="TOKENS",
        help="the default model's context window (written as its model_info context; "
        "needless where the endpoint lists it, as llama.cpp and vLLM do)",
    )
    configure.add_argument(
        "--no-check",
        dest="check",
        action="store_false",
        help="write without checking the endpoint",
    )
    configure.add_argument(
        "-y",
        "--yes",
        "--non-interactive",
        dest="non_interactive",
        action="store_true",
        help="ask nothing: take the values from the flags, the existing file and the preset",
    )
    add_log_options(configure, suppress=True)
