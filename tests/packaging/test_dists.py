"""The sdist and the wheel ``python -m build`` makes: ``twine check`` passes, and they hold
what they should — the wheel only the package (with ``py.typed``) and its metadata."""

from __future__ import annotations

import email.parser
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from acp_sidecar import __version__
from tests.packaging.conftest import ROOT, Dists, Sandbox

pytestmark = pytest.mark.timeout(300)  # the first test here builds the distributions


def wheel_names(dists: Dists) -> list[str]:
    with zipfile.ZipFile(dists.wheel) as wheel:
        return wheel.namelist()


def wheel_text(dists: Dists, name: str) -> str:
    with zipfile.ZipFile(dists.wheel) as wheel:
        return wheel.read(name).decode("utf-8")


def test_the_distributions_are_named_for_this_version(dists: Dists) -> None:
    assert dists.wheel.name == f"acp_sidecar-{__version__}-py3-none-any.whl"
    assert dists.sdist.name == f"acp_sidecar-{__version__}.tar.gz"


def test_twine_check_passes(sandbox: Sandbox, dists: Dists) -> None:
    done = sandbox.run(
        [sys.executable, "-m", "twine", "check", "--strict", dists.wheel, dists.sdist]
    )
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_the_wheel_holds_only_the_package_and_its_metadata(dists: Dists) -> None:
    names = wheel_names(dists)
    dist_info = f"acp_sidecar-{__version__}.dist-info/"
    assert "acp_sidecar/py.typed" in names
    assert "acp_sidecar/__init__.py" in names
    assert "acp_sidecar/tools/builtin/__init__.py" in names
    strays = [n for n in names if not n.startswith(("acp_sidecar/", dist_info))]
    assert strays == []
    assert not [n for n in names if "/tests/" in n or n.startswith("tests/")]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_every_module_of_the_checkout_is_in_the_wheel(dists: Dists) -> None:
    names = set(wheel_names(dists))
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "acp_sidecar").rglob("*.py")}
    assert modules - names == set()


def test_the_wheel_metadata(dists: Dists) -> None:
    dist_info = f"acp_sidecar-{__version__}.dist-info/"
    metadata = email.parser.Parser().parsestr(wheel_text(dists, dist_info + "METADATA"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert metadata["Name"] == "acp-sidecar"
    assert metadata["Version"] == __version__ == project["version"]
    assert metadata["Requires-Python"] == ">=3.11"
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["Description-Content-Type"] == "text/markdown"
    description = metadata.get_payload()
    assert isinstance(description, str) and description.startswith("# acp-sidecar")
    requires = [Requirement(r) for r in metadata.get_all("Requires-Dist") or []]
    assert {str(r) for r in requires if r.marker is None} == {
        str(Requirement(d)) for d in project["dependencies"]
    }
    assert "License-File" in metadata
    assert f"{dist_info}licenses/{metadata['License-File']}" in wheel_names(dists)
    entry_points = wheel_text(dists, dist_info + "entry_points.txt")
    assert "[console_scripts]\nacp-sidecar = acp_sidecar.cli:main" in entry_points


def test_the_sdist_builds_the_same_package(dists: Dists) -> None:
    with tarfile.open(dists.sdist) as sdist:
        names = {
            Path(n).relative_to(f"acp_sidecar-{__version__}").as_posix() for n in sdist.getnames()
        }
    for needed in ("pyproject.toml", "README.md", "LICENSE", "PKG-INFO", "acp_sidecar/py.typed"):
        assert needed in names
    assert not [n for n in names if n.startswith((".venv", "dist/", "build/"))]
