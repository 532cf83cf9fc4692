"""The endpoint check as ``configure`` runs and shows it: one probe, its checks one a line.
Nothing here writes the file, asks anything, or adds the key to what is shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import TYPE_CHECKING, Final

from rich.console import Console
from rich.markup import escape

from acp_sidecar.configure.answers import KeyFromEnv, KeySource, key_value

if TYPE_CHECKING:
    from acp_sidecar.agent.model.probe import (
        Check,
        EndpointReport,
    )

CHECK_TIMEOUT: Final = 20.0
"""Seconds each of the probe's requests may take."""

MARKS: Final = {
    "ok": "[green]✓[/green]",
    "failed": "[red]✗[/red]",
    "warning": "[yellow]![/yellow]",
    "skipped": "[dim]-[/dim]",
}
"""How each status is marked on its line."""


def check_endpoint(base_url: str, key: KeySource, model: str | None) -> EndpointReport:
    """Probe the endpoint with ``key`` (``model=None``: list its models only)."""
    from acp_sidecar.agent.model.probe import (
        probe_endpoint,
    )

    variable = key.variable if isinstance(key, KeyFromEnv) else None
    report: EndpointReport = asyncio.run(
        probe_endpoint(
            base_url, key_value(key), model, timeout=CHECK_TIMEOUT, key_variable=variable
        )
    )
    return report


def show_checks(
    console: Console, report: EndpointReport, only: Collection[str] | None = None
) -> None:
    """One line per check (those named in ``only``, when given), with its fix indented
    below a failure or a warning."""
    checks: tuple[Check, ...] = report.checks
    for check in checks:
        if only is not None and check.name not in only:
            continue
        mark = MARKS.get(check.status, "?")
        console.print(f"  {mark} {escape(check.name)}: {escape(check.detail)}")
        if check.fix and check.status in ("failed", "warning"):
            console.print(f"      fix: {escape(check.fix)}")
