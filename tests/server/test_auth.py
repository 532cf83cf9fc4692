"""Auth methods in ``initialize`` and ``authenticate``: what is offered to which client (valid
against the official schema), that the command offered starts this very sidecar, and that
authenticating succeeds whenever it is asked and gates nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AuthCapabilities, AuthMethodAgent, ClientCapabilities, TerminalAuthMethod

from acp_sidecar import __version__
from acp_sidecar.protocol import ClientCapabilities as SidecarCapabilities
from acp_sidecar.protocol import (
    InitializeResponse,
    from_wire,
    to_wire,
)
from acp_sidecar.server import auth, handlers
from acp_sidecar.server.app import AcpServer
from tests.acp_schema import validate_agent_message
from tests.fakes import AllowingEditor
from tests.sdk import sdk_sidecar
from tests.server.wire import WireClient, cli_served, spawned

PYTHON = "/usr/bin/python3.11"
PROGRAM = auth.LaunchCommand(PYTHON, ("-m", "acp_sidecar"))
LEGACY = {
    "terminal-auth": {
        "command": PYTHON,
        "args": ["-m", "acp_sidecar", "configure"],
        "label": "acp-sidecar configure",
    }
}
UNKNOWN = (
    "Invalid params: methodId: unknown auth method 'oauth' (methods: configure, configure-terminal)"
)

# ---- the command that starts this sidecar again


def test_the_console_script_is_offered_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "bin" / "acp-sidecar"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)  # a relative PATH entry gives a relative argv[0]
    assert auth.launch_command("bin/acp-sidecar", PYTHON) == auth.LaunchCommand(str(script))


def test_a_linked_script_keeps_its_link(tmp_path: Path) -> None:
    """pipx links ``~/.local/bin/acp-sidecar`` to a venv it may rebuild: offer the link."""
    target = tmp_path / "venv" / "acp-sidecar"
    target.parent.mkdir()
    target.write_text("#!/bin/sh\n")
    link = tmp_path / "bin" / "acp-sidecar"
    link.parent.mkdir()
    link.symlink_to(target)
    assert auth.launch_command(str(link), PYTHON).command == str(link)


def test_a_windows_script_is_recognised(tmp_path: Path) -> None:
    script = tmp_path / "acp-sidecar.exe"
    script.write_bytes(b"MZ")
    assert auth.launch_command(str(script), PYTHON) == auth.LaunchCommand(str(script))


@pytest.mark.parametrize(
    "argv0", ["/src/acp_sidecar/__main__.py", "-c", "", "/nowhere/bin/acp-sidecar", "pytest"]
)
def test_otherwise_this_interpreter_runs_the_module(argv0: str) -> None:
    assert auth.launch_command(argv0, PYTHON) == PROGRAM


def test_with_no_interpreter_known_the_script_is_found_on_path() -> None:
    assert auth.launch_command("", "") == auth.LaunchCommand("acp-sidecar")


async def _offered_command(argv: list[str]) -> list[str]:
    async with spawned(argv=argv) as (client, _):
        result = await client.initialize()
    legacy = result["authMethods"][0]["_meta"]["terminal-auth"]
    return [legacy["command"], *legacy["args"]]


@pytest.mark.process  # the command line this process was started with
@pytest.mark.parametrize("started_as", ["module", "script"])
async def test_the_offered_command_starts_this_very_sidecar(
    started_as: str, tmp_path: Path
) -> None:
    """The legacy form names this program as it was started; run with ``--version`` in
    place of ``configure``, from elsewhere and without this repository on ``PYTHONPATH``
    (an editor's terminal has neither), it is this sidecar."""
    script = Path(sys.executable).with_name("acp-sidecar")
    if started_as == "script" and not script.is_file():
        pytest.skip(f"no console script beside {sys.executable} (not installed with pip -e)")
    argv = [sys.executable, "-m", "acp_sidecar"] if started_as == "module" else [str(script)]
    command = await _offered_command(argv)
    assert command == [*argv, "configure"]
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [*command[:-1], "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=environment,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"acp-sidecar {__version__}"


# ---- the methods offered


def _offered(capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``authMethods`` for a client with these capabilities, checked by the schema."""
    methods = auth.auth_methods(from_wire(capabilities, SidecarCapabilities), PROGRAM)
    wire = to_wire(InitializeResponse(protocol_version=1, auth_methods=methods))
    validate_agent_message({"jsonrpc": "2.0", "id": 1, "result": wire}, request_method="initialize")
    offered: list[dict[str, Any]] = wire["authMethods"]
    return offered


@pytest.mark.parametrize(
    "capabilities",
    [
        {},
        {"auth": {}},
        {"auth": {"terminal": False}},
        {"terminal": True},  # the terminal/* methods: nothing to do with terminal auth
        {"_meta": {"terminal-auth": True}},  # the legacy flag: the agent method serves it
    ],
)
def test_without_terminal_auth_only_the_agent_method_is_offered(
    capabilities: dict[str, Any],
) -> None:
    assert _offered(capabilities) == [
        {
            "id": "configure",
            "name": "Configure a model endpoint",
            "description": auth.AGENT_DESCRIPTION,
            "_meta": LEGACY,
        }
    ]


def test_the_agent_method_says_what_to_run_and_that_the_console_needs_no_model() -> None:
    assert "run `acp-sidecar configure` in a terminal" in auth.AGENT_DESCRIPTION.lower()
    assert "without a model" in auth.AGENT_DESCRIPTION
    assert "without a model" in auth.TERMINAL_DESCRIPTION


def test_with_terminal_auth_the_terminal_method_is_offered_too() -> None:
    agent, terminal = _offered({"auth": {"terminal": True}})
    assert agent["id"] == "configure" and "type" not in agent
    assert terminal == {
        "type": "terminal",
        "id": "configure-terminal",
        "name": "Configure a model endpoint in a terminal",
        "description": auth.TERMINAL_DESCRIPTION,
        "args": ["configure"],
        "_meta": LEGACY,
    }


def test_the_legacy_form_passes_the_chosen_config_file_on() -> None:
    meta = auth.terminal_auth_meta(PROGRAM, config="/etc/acp/config.toml")
    assert meta == {
        "terminal-auth": {
            "command": PYTHON,
            "args": ["-m", "acp_sidecar", "--config", "/etc/acp/config.toml", "configure"],
            "label": "acp-sidecar configure",
        }
    }


def test_our_method_ids_are_known() -> None:
    assert not auth.is_our_method("oauth")
    assert all(auth.is_our_method(method_id) for method_id in auth.METHOD_IDS)


# ---- over the wire


async def test_initialize_offers_configure_and_the_terminal_method_when_asked(
    connection: tuple[WireClient, AcpServer],
) -> None:
    wire, _ = connection
    result = await wire.initialize(auth={"terminal": True})  # the wire checks the schema
    methods = result["authMethods"]
    assert [(m.get("type"), m["id"]) for m in methods] == [
        (None, "configure"),
        ("terminal", "configure-terminal"),
    ]
    assert methods[0]["_meta"] == auth.terminal_auth_meta(auth.this_program())


@pytest.mark.parametrize("method_id", auth.METHOD_IDS)
async def test_authenticate_succeeds_before_and_between_new_sessions(
    connection: tuple[WireClient, AcpServer], method_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire, server = connection
    refreshed: list[str] = []
    monkeypatch.setattr(handlers, "refresh_settings", lambda _server: refreshed.append("read"))
    await wire.initialize()
    assert await wire.result("authenticate", {"methodId": method_id}) == {}
    first = await wire.new_session()
    assert await wire.result("authenticate", {"methodId": method_id}) == {}
    second = await wire.new_session()
    assert first != second
    # configure may just have written the file: authenticate re-reads it, and so does each
    # session/new (for clients that never authenticate)
    assert refreshed == ["read"] * 4


async def test_an_unknown_method_succeeds_too_and_gates_nothing(
    connection: tuple[WireClient, AcpServer], caplog: pytest.LogCaptureFixture
) -> None:
    """The issue: authenticate always succeeds; an id that is none of ours is logged."""
    wire, _ = connection
    await wire.initialize()
    assert await wire.result("authenticate", {"methodId": "oauth"}) == {}
    assert "authenticate with unknown method 'oauth'" in caplog.text
    assert await wire.new_session()  # session/new is never gated


# ---- driven by the official SDK's client


@pytest.mark.process  # the official SDK's client as the sidecar's peer
@pytest.mark.parametrize("terminal", [False, True])
async def test_the_sdk_client_reads_the_methods_and_authenticates(
    terminal: bool, tmp_path: Path
) -> None:
    capabilities = ClientCapabilities(auth=AuthCapabilities(terminal=terminal))
    async with sdk_sidecar(AllowingEditor(), capabilities=capabilities) as (connection, wire):
        methods = wire.initialized.auth_methods
        assert isinstance(methods[0], AuthMethodAgent) and methods[0].id == "configure"
        legacy = methods[0].field_meta["terminal-auth"]
        assert legacy["command"] == sys.executable and legacy["args"][-1] == "configure"
        if terminal:
            assert isinstance(methods[1], TerminalAuthMethod)
            assert (methods[1].id, methods[1].args) == ("configure-terminal", ["configure"])
        assert len(methods) == 1 + terminal
        await connection.authenticate(method_id="configure")
        first = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
        await connection.authenticate(method_id="configure")
        second = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert first.session_id != second.session_id
        await connection.authenticate(method_id="oauth")  # always succeeds


@pytest.mark.parametrize("how", ["option", "variable", "default"])
async def test_the_terminal_command_names_the_config_file_this_server_reads(
    tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``configure`` run from the client's terminal writes the file this server re-reads:
    a file named by ``--config`` or ``ACP_SIDECAR_CONFIG`` is passed on, the default is not."""
    config = tmp_path / "chosen.toml"
    config.write_text('mode = "ask"\n')
    args = ("--config", str(config)) if how == "option" else ()
    if how == "variable":
        monkeypatch.setenv("ACP_SIDECAR_CONFIG", str(config))
    async with cli_served(*args) as (wire, _server):
        result = await wire.initialize()
    (method,) = result["authMethods"]
    command = method["_meta"]["terminal-auth"]["args"]
    if how == "default":
        assert "--config" not in command and command[-1] == "configure"
    else:
        assert command[-3:] == ["--config", str(config), "configure"]
