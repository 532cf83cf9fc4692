"""``acp-sidecar configure`` checks the endpoint before it writes: against the scripted
OpenAI-compatible server, from a script and in a pseudo-terminal.

The command is a subprocess run from a thread, so that the server keeps answering on the
test's event loop meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from acp_sidecar.agent.model.probe import TOOL_NAME
from acp_sidecar.settings import ConfigLocation, read_settings
from tests.agent.model.fake_openai import ScriptedOpenAI, answer, calling, listed, tool_call
from tests.cli.test_configure_terminal import finish, spawn

pytestmark = pytest.mark.process  # every test here starts an interpreter

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-configure-check-5c2e81d0"
TIME_CALL = calling(tool_call(0, "call_1", TOOL_NAME, '{"timezone": "UTC"}'))


def configure(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acp_sidecar", "configure", *args],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", **env},
    )


async def scripted(endpoint_url: str, path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(
        configure,
        "--config",
        str(path),
        "--base-url",
        endpoint_url,
        "--api-key-env",
        "CHECK_KEY",
        *flags,
        "--yes",
        env={"CHECK_KEY": SECRET},
    )


async def test_a_working_endpoint_is_checked_then_written(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    async with ScriptedOpenAI() as endpoint:
        endpoint.models = listed("m-one", "m-two")
        endpoint.script(TIME_CALL)
        done = await scripted(endpoint.base_url, path, "--model", "m-one")
    assert done.returncode == 0, done.stderr
    for line in ("✓ reachable:", "✓ key:", "✓ models listed: 2 listed", "✓ tool calls:"):
        assert line in done.stdout
    assert f"Wrote {path}." in done.stdout
    (request,) = endpoint.requests
    assert request.body["model"] == "m-one"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in done.stdout + done.stderr
    read = read_settings(ConfigLocation(path, explicit=True))
    assert read.values["api_key_env"] == "CHECK_KEY" and read.values["model"] == "m-one"


async def test_a_refused_key_fails_with_a_fix_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    async with ScriptedOpenAI() as endpoint:
        endpoint.key = "sk-the-right-one"  # the server's 401 quotes the key it was sent
        endpoint.models = listed("m-one")
        done = await scripted(endpoint.base_url, path, "--model", "m-one")
    assert done.returncode == 1
    assert "✗ key:" in done.stdout and "Check CHECK_KEY." in done.stdout
    assert "fix: Check the value of $CHECK_KEY: the endpoint refused it." in done.stdout
    assert "the endpoint check failed, so nothing was written" in done.stderr
    assert "--no-check" in done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert not path.exists()


async def test_a_model_that_does_not_call_the_tool_fails_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    async with ScriptedOpenAI() as endpoint:
        endpoint.models = listed("m-one")
        endpoint.script(answer("It is noon in UTC."))
        done = await scripted(endpoint.base_url, path, "--model", "m-one")
    assert done.returncode == 1
    assert "✗ tool calls: The model answered in text instead of calling the tool" in done.stdout
    assert "tool_choice" in done.stdout  # the fix names what such servers need
    assert not path.exists()


def test_an_unreachable_endpoint_fails_with_a_fix(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    done = configure(
        "--config",
        str(path),
        "--base-url",
        refused_url(),
        "--no-api-key",
        "--model",
        "m",
        "--yes",
        env={},
    )
    assert done.returncode == 1
    assert "✗ reachable:" in done.stdout and "fix: Start the server" in done.stdout
    assert not path.exists()


def refused_url() -> str:
    """A local URL nothing listens on (its port bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def interact_success(child: pexpect.spawn, base_url: str) -> None:
    child.expect_exact("Provider (number or name)")
    child.sendline("custom")
    # A wrong URL first: the first look says so, and the URL and key are asked again.
    child.expect_exact("Base URL")
    child.sendline(refused_url())
    child.expect_exact("API key [env/file/none]")
    child.sendline("env")
    child.expect_exact("Environment variable")
    child.sendline("CHECK_KEY")
    child.expect_exact("$CHECK_KEY is set now.")
    child.expect_exact("✗ reachable:")
    child.expect_exact("Change the base URL or the key? [y/n] (y)")
    child.sendline("")
    child.expect_exact("Base URL (http://127.0.0.1:")
    child.sendline(base_url)
    child.expect_exact("API key [env/file/none] (env)")
    child.sendline("")
    child.expect_exact("Environment variable (CHECK_KEY)")
    child.sendline("")
    child.expect_exact("✓ models listed: 2 listed")
    child.expect_exact("2. m-two")
    child.expect_exact("Default model (number or name) (m-one)")
    child.sendline("2")
    child.expect_exact("Other models for the picker")
    child.sendline("1")
    child.expect_exact("Checking m-two")
    child.expect_exact("✓ tool calls: The model called get_time")
    child.expect_exact("Set the models' context window and reasoning?")
    child.sendline("n")
    child.expect_exact('model = "m-two"')
    child.expect_exact("Write")
    child.sendline("y")
    child.expect_exact("Wrote")


async def test_in_a_terminal_the_check_is_shown_and_models_come_from_the_listing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.toml"
    async with ScriptedOpenAI() as endpoint:
        endpoint.models = listed("m-one", "m-two")
        endpoint.script(TIME_CALL)
        child, shown = spawn("--config", str(path), env={"CHECK_KEY": SECRET})
        await asyncio.to_thread(interact_success, child, endpoint.base_url)
        assert await asyncio.to_thread(finish, child) == 0
    assert SECRET not in shown.getvalue()
    assert endpoint.listings == 2  # the first look, then the check
    assert [r.body["model"] for r in endpoint.requests] == ["m-two"]
    read = read_settings(ConfigLocation(path, explicit=True))
    assert read.values["model"] == "m-two"
    assert read.values["models"] == ("m-two", "m-one")


def interact_failure(child: pexpect.spawn, base_url: str) -> None:
    child.expect_exact("Provider (number or name)")
    child.sendline("custom")
    child.expect_exact("Base URL")
    child.sendline(base_url)
    child.expect_exact("API key [env/file/none]")
    child.sendline("none")
    child.expect_exact("Default model (number or name)")
    child.sendline("m-one")
    child.expect_exact("Other models for the picker")
    child.sendline("")
    child.expect_exact("✗ tool calls:")
    child.expect_exact("fix:")
    child.expect_exact("The check failed. Write the file anyway? [y/n] (n)")
    child.sendline("")
    child.expect_exact("Nothing was written.")


async def test_in_a_terminal_a_failed_check_asks_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    async with ScriptedOpenAI() as endpoint:
        endpoint.models = listed("m-one")
        endpoint.script(answer("It is noon."))
        child, _shown = spawn("--config", str(path))
        await asyncio.to_thread(interact_failure, child, endpoint.base_url)
        assert await asyncio.to_thread(finish, child) == 1
    assert not path.exists()
