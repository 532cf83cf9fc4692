"""The wheel installed the ways the README gives: into a clean virtual environment with pip,
and run by ``uvx`` — from the wheel file (works today), and as the ACP registry entry will run
it once the package is on PyPI (the entry's own ``package`` and ``args``, with the built wheel
standing in for the index's copy). The venv install answers ``--version`` and holds a short
console session over stdio (:mod:`tests.packaging.console_session`); ``uvx --from`` the wheel
answers ``--version``, and the registry's command holds the session (one session through
``uvx`` is enough: both commands install the same wheel into an environment of uv's)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from acp_sidecar import __version__
from tests.packaging.conftest import ROOT, Dists, Sandbox
from tests.packaging.console_session import FILE_TEXT, ConsoleRun, console_session

pytestmark = pytest.mark.timeout(300)  # building and installing come first

REGISTRY_ENTRY = ROOT / "packaging" / "registry" / "acp-sidecar" / "agent.json"


def uvx(*args: str | Path) -> list[str | Path]:
    """``uvx`` from the ``uv`` package of the test extra, on this Python."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    assert uv is not None, "uv is not installed: pip install -e '.[test]'"
    return [uv, "tool", "run", "--python", sys.executable, *args]


def workspace(sandbox: Sandbox, name: str) -> Path:
    path = sandbox.root / "workspaces" / name
    path.mkdir(parents=True)
    return path


def assert_a_working_session(run: ConsoleRun) -> None:
    assert run.returncode == 0, run.stderr
    assert run.initialize["agentInfo"] == {
        "name": "acp-sidecar",
        "title": "ACP Sidecar",
        "version": __version__,
    }
    assert run.stop_reason == "end_turn"
    kinds = [u["sessionUpdate"] for u in run.updates]
    assert "tool_call" in kinds, kinds
    assert FILE_TEXT.strip() in run.read_output(), run.updates


def test_uvx_from_the_wheel_answers_version(sandbox: Sandbox, dists: Dists) -> None:
    done = sandbox.run(uvx("--from", dists.wheel, "acp-sidecar", "--version"))
    assert done.stdout.strip() == f"acp-sidecar {__version__}"


async def test_a_session_as_the_registry_entry_runs_it(sandbox: Sandbox, dists: Dists) -> None:
    """What a registry client runs — ``uvx <package> <args>``, the registry's own check adds
    nothing else — with ``--find-links`` to the built wheel in place of PyPI's copy."""
    uvx_entry = json.loads(REGISTRY_ENTRY.read_text())["distribution"]["uvx"]
    command = uvx(
        "--find-links", dists.wheel.parent, uvx_entry["package"], *uvx_entry.get("args", [])
    )
    run = await console_session(
        command, workspace=workspace(sandbox, "uvx-registry"), env=sandbox.env
    )
    assert_a_working_session(run)


# The clean venv's install runs in the background from the build on; these come last.


def test_the_venv_install_runs_the_wheel_not_the_checkout(sandbox: Sandbox, venv_bin: Path) -> None:
    done = sandbox.run(
        [venv_bin / "python", "-c", "import acp_sidecar; print(acp_sidecar.__file__)"]
    )
    module = Path(done.stdout.strip())
    assert module.is_relative_to(venv_bin.parent), module
    assert (module.parent / "py.typed").is_file()


def test_the_venv_install_answers_version(sandbox: Sandbox, venv_bin: Path) -> None:
    done = sandbox.run([venv_bin / "acp-sidecar", "--version"])
    assert done.stdout.strip() == f"acp-sidecar {__version__}"


async def test_a_session_with_the_venv_install(sandbox: Sandbox, venv_bin: Path) -> None:
    run = await console_session(
        [venv_bin / "acp-sidecar"], workspace=workspace(sandbox, "venv"), env=sandbox.env
    )
    assert_a_working_session(run)
