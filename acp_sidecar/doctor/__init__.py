"""``acp-sidecar doctor``: what the sidecar would use, checked, each failure with a fix.

Invariants:
- Doctor sees what ``serve`` sees: the same options, environment and config file (a file
  that cannot be used is reported, never a traceback); nothing is changed by looking.
- The endpoint is checked by :func:`~acp_sidecar.agent.model.probe.probe_endpoint` (its two
  small requests), unless ``--offline``; without a model nothing is asked, and that is not
  a failure (the console still works).
- No key is ever printed, in either output.
- The exit status is 1 when a check failed, else 0 (warnings and skipped checks pass).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Mapping
from typing import Final, Literal

import attrs

from acp_sidecar.checks import Check
from acp_sidecar.doctor.local import (
    config_checks,
    key_check,
    model_config,
    ripgrep_check,
    store_check,
)
from acp_sidecar.doctor.waiting import first_byte_check

Section = Literal["config", "model", "endpoint", "machine"]
"""Where a finding belongs: the config file, the model settings and key, the endpoint's
answers, this machine (ripgrep, the store)."""

ENDPOINT: Final = "endpoint"


@attrs.frozen
class Finding:
    """One check and the section it is shown in."""

    section: Section
    check: Check


async def diagnose(
    args: argparse.Namespace, env: Mapping[str, str], *, offline: bool, timeout: float
) -> list[Finding]:
    """Every finding, in the order they are shown (see the module invariants)."""
    findings = [
        Finding("config", check) for check in config_checks(args.config_file, args.config_problems)
    ]
    model, config = model_config(args, env)
    findings.append(Finding("model", model))
    if config is not None:
        findings.append(Finding("model", key_check(args, config)))
        if offline:
            skipped = Check(ENDPOINT, "skipped", "Not asked (--offline).")
            findings.append(Finding("endpoint", skipped))
        else:
            from acp_sidecar.agent.model.probe import probe_endpoint

            report = await probe_endpoint(
                config.base_url,
                config.api_key,
                config.model,
                timeout=timeout,
                key_variable=config.key_variable,
            )
            findings += [Finding("endpoint", check) for check in report.checks]
            began = first_byte_check(config, report.began_s)
            if began is not None:
                findings.append(Finding("endpoint", began))
    findings.append(Finding("machine", ripgrep_check()))
    findings.append(Finding("machine", store_check(args, env)))
    return findings


def failed(findings: list[Finding]) -> bool:
    """Whether a check failed."""
    return any(finding.check.status == "failed" for finding in findings)


def run_doctor(args: argparse.Namespace) -> int:
    """``acp-sidecar doctor``: print the findings (rich, or ``--json``); the exit status."""
    from acp_sidecar.doctor.output import findings_json, print_findings

    # The endpoint module logs a failed request's whole answer as a warning: the report
    # already says it, once, redacted.
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr, format="%(message)s")
    findings = asyncio.run(diagnose(args, os.environ, offline=args.offline, timeout=args.timeout))
    if args.json:
        sys.stdout.write(findings_json(findings) + "\n")
    else:
        from rich.console import Console

        print_findings(findings, Console(highlight=False))
    return 1 if failed(findings) else 0
