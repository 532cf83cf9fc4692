"""``packaging/registry/acp-sidecar/``: the entry for the ACP registry, ready for the day the
package is on PyPI, passes the registry's rules (:mod:`tests.packaging.registry_rules`) and
names the version this checkout builds.

Each rule is also shown to catch a broken entry or icon, so a rule that stopped checking
anything would fail here."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

import acp_sidecar
from tests.packaging.registry_rules import entry_problems, icon_problems

ROOT = Path(__file__).resolve().parents[2]
ENTRY_DIR = ROOT / "packaging" / "registry" / "acp-sidecar"


def entry() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ENTRY_DIR / "agent.json").read_text(encoding="utf-8"))
    return loaded


def project() -> dict[str, Any]:
    table: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return table


def icon() -> str:
    return (ENTRY_DIR / "icon.svg").read_text(encoding="utf-8")


def test_the_entry_passes_the_registry_rules() -> None:
    assert entry_problems(entry(), ENTRY_DIR.name) == ()


def test_the_entry_names_the_version_this_checkout_builds() -> None:
    version = project()["version"]
    assert acp_sidecar.__version__ == version
    assert entry()["version"] == version
    assert entry()["distribution"]["uvx"]["package"] == f"{project()['name']}=={version}"


def test_the_entry_says_what_the_package_says() -> None:
    assert entry()["id"] == project()["name"]
    assert entry()["license"] == project()["license"]
    assert "args" not in entry()["distribution"]["uvx"], "the agent serves with no arguments"


def test_the_icon_passes_the_registry_rules() -> None:
    assert icon_problems(icon()) == ()


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda e: e.update(version="0.2.0"), "distribution.uvx: pins 0.1.0"),
        (lambda e: e["distribution"]["uvx"].update(package="acp-sidecar"), "is not pinned"),
        (lambda e: e["distribution"]["uvx"].update(package="acp-sidecar@latest"), "@latest"),
        (lambda e: e.update(version="1.0"), "schema: version"),
        (lambda e: e.update(id="ACP_Sidecar"), "schema: id"),
        (lambda e: e.update(id="sidecar"), "must match its directory"),
        (lambda e: e.pop("description"), "'description' is a required property"),
        (lambda e: e.update(distribution={}), "schema: distribution"),
        (lambda e: e["distribution"].update(pip={"package": "x"}), "schema: distribution"),
        (
            lambda e: e["distribution"].update(
                binary={"linux-x86_64": {"archive": "https://x/v0.1.0/a.tgz", "cmd": "./a"}}
            ),
            "no build for darwin, windows",
        ),
    ],
)
def test_a_broken_entry_is_refused(change: Any, problem: str) -> None:
    broken = copy.deepcopy(entry())
    change(broken)
    problems = entry_problems(broken, ENTRY_DIR.name)
    assert any(problem in p for p in problems), problems


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ('width="16"', 'width="24"', "is 24×16"),
        ('viewBox="0 0 16 16"', 'viewBox="0 0 24 24"', "viewBox '0 0 24 24'"),
        ('fill="currentColor"', 'fill="#FF0000"', "fill='#FF0000'"),
        ('stroke="currentColor"', 'stroke="red"', "stroke='red'"),
        ('fill="currentColor"', 'style="fill: rgb(1, 2, 3)"', "style fill='rgb(1, 2, 3)'"),
        ("</svg>", "<script>alert(1)</script></svg>", "<script> is not allowed"),
        ("</svg>", '<image href="https://example.com/a.png"/></svg>', "refers outside"),
        ("</svg>", "<style>path { fill: red }</style></svg>", "<style> sheet"),
        ("</svg>", "<path", "not well-formed XML"),
    ],
)
def test_a_broken_icon_is_refused(old: str, new: str, problem: str) -> None:
    svg = icon()
    assert old in svg
    problems = icon_problems(svg.replace(old, new, 1))
    assert any(problem in p for p in problems), problems


def test_an_icon_that_never_uses_current_color_is_refused() -> None:
    svg = icon().replace('"currentColor"', '"none"')
    assert "the icon never paints with currentColor" in icon_problems(svg)
