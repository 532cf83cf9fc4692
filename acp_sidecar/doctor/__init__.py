"""``acp-sidecar doctor``: what the sidecar would use, checked, each failure with a fix.

Doctor sees what ``serve`` sees (the same options, environment and file) and changes nothing.
No key is ever printed. Exit 1 when a check failed (warnings pass).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Final

import attrs

from acp_sidecar.checks import Check
from acp_sidecar.doctor.findings import Finding
from acp_sidecar.doctor.findings import Section as Section
from acp_sidecar.doctor.local import (
    acp_v2_check,
    config_checks,
    key_check,
    model_config,
    ripgrep_check,
    store_check,
)
from acp_sidecar.doctor.waiting import first_byte_check

if TYPE_CHECKING:
    from rich.console import Console

ENDPOINT: Final = "endpoint"


@attrs.frozen
class Step:
    """The checks of one section, run together and shown as soon as they are done."""

    run: Callable[[], Awaitable[list[Finding]]]
    waiting: str | None = None
    """What a spinner says while a slow step runs; ``None``: it is instant."""


def steps(
    args: argparse.Namespace, env: Mapping[str, str], *, offline: bool, timeout: float
) -> list[Step]:
    """The sections' checks, in the order they are shown (see the module invariants)."""
    model, config = model_config(args, env)

    async def config_file() -> list[Finding]:
        checks = [*config_checks(args.config_file, args.config_problems), acp_v2_check(args, env)]
        return [Finding("config", check) for check in checks]

    async def model_and_key() -> list[Finding]:
        found = [Finding("model", model)]
        if config is not None:
            found.append(Finding("model", key_check(args, config)))
        return found

    async def endpoint() -> list[Finding]:
        assert config is not None
        if offline:
            return [Finding("endpoint", Check(ENDPOINT, "skipped", "Not asked (--offline)."))]
        from acp_sidecar.agent.model.probe import probe_endpoint

        report = await probe_endpoint(
            config.base_url,
            config.api_key,
            config.model,
            timeout=timeout,
            key_variable=config.key_variable,
        )
        found = [Finding("endpoint", check) for check in report.checks]
        began = first_byte_check(config, report.began_s)
        return found if began is None else [*found, Finding("endpoint", began)]

    async def machine() -> list[Finding]:
        ripgrep = await asyncio.to_thread(ripgrep_check)  # runs `rg --version`
        return [Finding("machine", ripgrep), Finding("machine", store_check(args, env))]

    found = [Step(config_file), Step(model_and_key)]
    if config is not None:
        asking = None if offline else f"Asking {config.shown_url} (up to {timeout:g} s a request)"
        found.append(Step(endpoint, asking))
    found.append(Step(machine, "Checking ripgrep and the session store"))
    return found


async def diagnose(
    args: argparse.Namespace, env: Mapping[str, str], *, offline: bool, timeout: float
) -> list[Finding]:
    """Every finding, in the order they are shown."""
    findings: list[Finding] = []
    for step in steps(args, env, offline=offline, timeout=timeout):
        findings += await step.run()
    return findings


async def report(
    args: argparse.Namespace,
    env: Mapping[str, str],
    console: Console,
    *,
    offline: bool,
    timeout: float,
) -> list[Finding]:
    """Run the checks, showing each section on ``console`` as soon as it is done (a spinner
    while a slow one runs, in a terminal), then the summary; every finding."""
    from rich.live import Live
    from rich.spinner import Spinner

    from acp_sidecar.doctor.output import print_section, print_summary

    findings: list[Finding] = []
    for index, step in enumerate(steps(args, env, offline=offline, timeout=timeout)):
        if step.waiting is None:
            found = await step.run()
        else:
            # Transient: nothing is left, nor piped. Live (not console.status) draws its
            # first frame on entry, before the step can block, not on the next tick.
            spinner = Spinner("dots", f"{step.waiting}…")
            with Live(spinner, console=console, transient=True, refresh_per_second=12.5):
                found = await step.run()
        print_section(found, console, first=index == 0)
        findings += found
    print_summary(findings, console)
    return findings


def failed(findings: list[Finding]) -> bool:
    """Whether a check failed."""
    return any(finding.check.status == "failed" for finding in findings)


def run_doctor(args: argparse.Namespace) -> int:
    """``acp-sidecar doctor``: print the findings (rich, or ``--json``); the exit status."""
    options = {"offline": args.offline, "timeout": args.timeout}
    if args.json:
        from acp_sidecar.doctor.output import findings_json

        findings = asyncio.run(diagnose(args, os.environ, **options))
        sys.stdout.write(findings_json(findings) + "\n")
    else:
        from acp_sidecar.console import output_console

        console = output_console(frames=True, highlight=False)
        findings = asyncio.run(report(args, os.environ, console, **options))
    return 1 if failed(findings) else 0
