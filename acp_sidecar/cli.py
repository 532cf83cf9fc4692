"""The ``acp-sidecar`` command line.

Invariant: this module imports nothing heavy at module level; each subcommand imports what it
needs when it runs, so ``--version`` and ``--help`` answer at once.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from acp_sidecar import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(
        prog="acp-sidecar",
        description=(
            "An Agent Client Protocol (ACP v1) agent for editors. Spawn it as a subprocess "
            "and speak ACP (JSON-RPC 2.0, one JSON object per line) on its stdin/stdout."
        ),
    )
    parser.add_argument("--version", action="version", version=f"acp-sidecar {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
    parser = build_parser()
    parser.parse_args(argv)
    return 0
