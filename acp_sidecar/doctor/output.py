"""How ``doctor`` shows its findings: for people (rich) and for scripts (JSON). A check's text is
printed as plain text, never read as rich markup (a detail may hold ``[API key]``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, assert_never

import attrs
from rich.table import Table
from rich.text import Text

from acp_sidecar.checks import Check, Status

if TYPE_CHECKING:
    from rich.console import Console

    from acp_sidecar.doctor.findings import Finding, Section


def mark(status: Status) -> tuple[str, str]:
    """The mark of a status and its style."""
    match status:
        case "ok":
            return "✓", "green"
        case "warning":
            return "!", "yellow"
        case "failed":
            return "✗", "bold red"
        case "skipped":
            return "–", "dim"
        case _:
            assert_never(status)


def title(section: Section) -> str:
    """A section's heading."""
    match section:
        case "config":
            return "Config file"
        case "model":
            return "Model"
        case "endpoint":
            return "Endpoint"
        case "machine":
            return "This machine"
        case _:
            assert_never(section)


def merged(findings: list[Finding]) -> list[tuple[Section, list[Check]]]:
    """The findings by section, in order; skipped checks in a row that say the same thing
    are one line (named together), as when the endpoint cannot be reached."""
    groups: list[tuple[Section, list[Check]]] = []
    for finding in findings:
        if not groups or groups[-1][0] != finding.section:
            groups.append((finding.section, []))
        checks = groups[-1][1]
        check = finding.check
        last = checks[-1] if checks else None
        if (
            last is not None
            and check.status == last.status == "skipped"
            and (check.detail, check.fix) == (last.detail, last.fix)
        ):
            checks[-1] = attrs.evolve(last, name=f"{last.name}, {check.name}")
        else:
            checks.append(check)
    return groups


def print_section(findings: list[Finding], console: Console, *, first: bool = False) -> None:
    """The findings of one section (with its heading) with their marks; a fix under each
    that has one and did not pass."""
    for index, (section, checks) in enumerate(merged(findings)):
        if index or not first:
            console.print()
        console.print(Text(title(section), style="bold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=3, justify="right")
        grid.add_column()
        for check in checks:
            sign, style = mark(check.status)
            said = Text.assemble((check.name, "bold"), ": ", check.detail)
            if check.fix is not None and check.status != "ok":
                said.append_text(Text.assemble("\n", ("fix: ", "bold"), check.fix))
            grid.add_row(Text(sign, style=style), said)
        console.print(grid)


def print_summary(findings: list[Finding], console: Console) -> None:
    """The last line, counting failures and warnings."""
    statuses = [finding.check.status for finding in findings]
    console.print()
    console.print(summary(statuses.count("failed"), statuses.count("warning")))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' * (number != 1)}"


def summary(failures: int, warnings: int) -> Text:
    """The last line: how many checks failed, how many warn."""
    if failures:
        noted = f", {_count(warnings, 'warning')}" if warnings else ""
        return Text(f"{_count(failures, 'check')} failed{noted}.", style="bold red")
    if warnings:
        return Text(f"Nothing failed; {_count(warnings, 'warning')}.", style="yellow")
    return Text("Everything checked works.", style="green")


def findings_json(findings: list[Finding]) -> str:
    """The findings as a JSON list (see the module invariants)."""
    return json.dumps(
        [
            {
                "section": finding.section,
                "name": finding.check.name,
                "status": finding.check.status,
                "detail": finding.check.detail,
                "fix": finding.check.fix,
            }
            for finding in findings
        ],
        indent=2,
        ensure_ascii=False,
    )
