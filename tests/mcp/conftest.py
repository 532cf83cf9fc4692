"""Fixtures for the MCP tests: our own peers (``peers/``) and the reference servers.

Every MCP server a test starts is stopped by the test (``aclose``) — the fixtures below only
describe how to start them, as an editor would: an absolute command, args and env.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_sidecar.mcp.client_side import ClientSideHooks
from acp_sidecar.mcp.config import StdioServerConfig
from tests.isolation import suite_cache

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


def crowd_peer(name: str, *args: str) -> StdioServerConfig:
    """Our peer with a great many tools (``peers/crowd_peer.py``; ``args`` are its options)."""
    return StdioServerConfig(
        name=name, command=sys.executable, args=(str(PEERS / "crowd_peer.py"), *args)
    )


def asking_peer(name: str, *args: str) -> StdioServerConfig:
    """Our peer that sends elicitations as it likes (``peers/asking_peer.py``)."""
    return StdioServerConfig(
        name=name, command=sys.executable, args=(str(PEERS / "asking_peer.py"), *args)
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


def git_program() -> str:
    """The ``git`` on PATH (``mcp-server-git`` needs it too); skips the test without it."""
    program = shutil.which("git")
    if program is None:
        pytest.skip("git is not installed: the mcp-server-git tests need it")
    return program


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    git = git_program()
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    subprocess.run([git, "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run([git, "-C", str(repo), "add", "a.txt"], check=True)
    subprocess.run(
        [git, "-C", str(repo), "commit", "-q", "-m", "first"],
        check=True,
        env=env | {"PATH": os.path.dirname(git)},
    )
    return repo


@pytest.fixture
def http_peer(tmp_path: Path) -> Iterator[str]:
    """Our HTTP peer on 127.0.0.1; yields its base URL (``http://127.0.0.1:PORT``). A
    cancelled ``slow`` call leaves ``tmp_path/cancelled``."""
    yield from _http_peer("--markdir", str(tmp_path))


# One each for the whole run: the tests only call their stateless tools (``echo``, ``peek``).
@pytest.fixture(scope="session")
def sse_peer() -> Iterator[str]:
    yield from _http_peer("--sse")


@pytest.fixture(scope="session")
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


EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
"""The reference server with every MCP feature, pinned so its tools stay what the tests expect."""


@pytest.fixture(scope="session")
def everything() -> StdioServerConfig:
    """``server-everything`` started through ``npx`` as an editor's user would configure it.

    Its package is fetched once per machine into a cache of ours (npm's own cache directory,
    passed in the server's env), so later runs start it offline in about a second. Skipped,
    with the reason, when ``npx`` is missing or cannot fetch or run it.
    """
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not installed: the server-everything tests need node")
    cache = suite_cache() / "npm"
    cache.mkdir(parents=True, exist_ok=True)
    args = ("-y", "--prefer-offline", EVERYTHING, "stdio")
    try:
        # Closing stdin at once: the server starts, then exits at EOF.
        warm = subprocess.run(
            [npx, *args],
            input="",
            capture_output=True,
            text=True,
            timeout=240,
            env=os.environ | {"npm_config_cache": str(cache)},
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npx could not fetch {EVERYTHING} within 240 s")
    if warm.returncode != 0:
        pytest.skip(f"npx could not run {EVERYTHING}: {warm.stderr.strip()[-300:]}")
    return StdioServerConfig(
        name="everything", command=npx, args=args, env=(("npm_config_cache", str(cache)),)
    )
