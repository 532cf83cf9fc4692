"""Fixtures for the MCP tests: our own peers (``peers/``) and the reference servers.

Every MCP server a test starts is stopped by the test (``aclose``) — the fixtures below only
describe how to start them, as an editor would: an absolute command, args and env.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_sidecar.mcp.client_side import ClientSideHooks
from acp_sidecar.mcp.config import StdioServerConfig

PEERS = Path(__file__).parent / "peers"
REPO = Path(__file__).parents[2]
BIN = Path(sys.executable).parent


def peer(
    name: str, mode: str, *args: str, env: tuple[tuple[str, str], ...] = ()
) -> StdioServerConfig:
    """Our stdio peer in ``mode``, named ``name``."""
    return StdioServerConfig(
        name=name, command=sys.executable, args=(str(PEERS / "stdio_peer.py"), mode, *args), env=env
    )


def listing_peer(name: str, mode: str) -> StdioServerConfig:
    return StdioServerConfig(
        name=name, command=sys.executable, args=(str(PEERS / "listing_peer.py"), mode)
    )


def reference_server(script: str, *args: str) -> StdioServerConfig:
    """A reference server from PyPI by its console script in the venv, as a user would run it."""
    command = BIN / script
    if not command.exists():
        pytest.skip(f"{script} is not installed in this environment (pip install -e '.[test]')")
    return StdioServerConfig(
        name=script.removeprefix("mcp-server-"), command=str(command), args=args
    )


def no_roots() -> list[str]:
    return []


HOOKS = ClientSideHooks(roots=no_roots)


class Problems(list[str]):
    """Collects on_problem lines."""

    def __call__(self, message: str) -> None:
        self.append(message)


@pytest.fixture
def problems() -> Problems:
    return Problems()


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "-m", "first"],
        check=True,
        env=env | {"PATH": "/usr/bin:/bin"},
    )
    return repo


@pytest.fixture
def http_peer() -> Iterator[str]:
    """Our HTTP peer on 127.0.0.1; yields its base URL (``http://127.0.0.1:PORT``)."""
    yield from _http_peer()


@pytest.fixture
def sse_peer() -> Iterator[str]:
    yield from _http_peer("--sse")


@pytest.fixture
def guarded_http_peer() -> Iterator[str]:
    yield from _http_peer("--require-header", "X-Token=s3cret-value")


def _http_peer(*args: str) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp.peers.http_peer", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        process.terminate()
        process.wait(timeout=10)
