"""The boolean ``allow_outside_workspace`` config option: offered only to clients that set
``session.configOptions.boolean`` (never a boolean option to others: the schema's rule and
acp-tck's CONFIG-003), set with ``type: "boolean"``, applied to the session's tools, recorded
and restored. On the wire, every message checked against the stable schema (which defines
boolean options and the capability)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.protocol.errors import INVALID_PARAMS
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from tests.acp_schema import load_schema
from tests.server.wire import WireClient, served

BOOLEANS = {"session": {"configOptions": {"boolean": {}}}}
OPTION = "allow_outside_workspace"


def server(tmp_path: Path, *, outside: bool = False) -> AcpServer:
    return AcpServer(
        tools=ToolsProvider(entry_points=False),
        store=lambda: SessionStore(tmp_path / "store"),
        allow_outside_workspace=outside,
    )


@pytest.fixture
def places(tmp_path: Path) -> tuple[str, Path]:
    """A session directory, and a file beside it (outside the workspace)."""
    (tmp_path / "ws").mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("beside the workspace\n")
    return str(tmp_path / "ws"), secret


def booleans(options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in options if o["type"] == "boolean"]


def set_params(session: str, value: Any, **more: Any) -> dict[str, Any]:
    return {"sessionId": session, "configId": OPTION, "value": value, **more}


async def read_outcome(wire: WireClient, session: str, path: Path) -> str:
    wire.updates.clear()
    await wire.next_response(await wire.start_prompt(session, f"/read {path}"))
    statuses = [m["params"]["update"].get("status") for m in wire.updates]
    final: str = [s for s in statuses if s][-1]
    return final


def test_the_stable_schema_has_the_capability_and_the_option() -> None:
    defs = load_schema()["$defs"]
    assert "boolean" in defs["SessionConfigOptionsCapabilities"]["properties"]
    assert "configOptions" in defs["ClientSessionCapabilities"]["properties"]
    kinds = [b["properties"]["type"]["const"] for b in defs["SessionConfigOption"]["oneOf"]]
    assert kinds == ["select", "boolean"]


@pytest.mark.parametrize(
    "capabilities",
    [
        {},
        {"session": {}},
        {"session": {"configOptions": None}},
        {"session": {"configOptions": {}}},
        {"session": {"configOptions": {"boolean": None}}},
    ],
    ids=["none", "session", "null-options", "no-boolean", "null-boolean"],
)
async def test_clients_that_do_not_opt_in_never_see_a_boolean_option(
    tmp_path: Path, places: tuple[str, Path], capabilities: dict[str, Any]
) -> None:
    cwd, _secret = places
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize(**capabilities)
        new = await wire.result("session/new", {"cwd": cwd, "mcpServers": []})
        session = new["sessionId"]
        assert [o["type"] for o in new["configOptions"]] == [
            "select",
            "select",
        ]  # mode, permission_rules
        for value, more in ((True, {"type": "boolean"}), ("true", {})):
            error = await wire.error(
                "session/set_config_option", set_params(session, value, **more)
            )
            assert error["code"] == INVALID_PARAMS
        # the mode takes a value id, never a boolean
        mode = {"sessionId": session, "configId": "mode", "type": "boolean", "value": True}
        error = await wire.error("session/set_config_option", mode)
        assert error["message"] == (
            "Invalid params: value: config option 'mode' takes a value id (a string), not a boolean"
        )
        loaded = await wire.result(
            "session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []}
        )
        assert booleans(loaded["configOptions"]) == []
        assert all(
            booleans(m["params"]["update"].get("configOptions", [])) == [] for m in wire.updates
        )


async def test_an_opted_in_client_turns_it_on_and_the_tools_follow(
    tmp_path: Path, places: tuple[str, Path]
) -> None:
    cwd, secret = places
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize(**BOOLEANS)
        new = await wire.result("session/new", {"cwd": cwd, "mcpServers": []})
        session = new["sessionId"]
        [option] = booleans(new["configOptions"])
        assert option["id"] == OPTION and option["currentValue"] is False  # the setting's
        assert [o["id"] for o in new["configOptions"]][-1] == OPTION  # after the selects
        await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        assert await read_outcome(wire, session, secret) == "failed"

        changed = await wire.result(
            "session/set_config_option", set_params(session, True, type="boolean")
        )
        [option] = booleans(changed["configOptions"])
        assert option["currentValue"] is True
        assert await read_outcome(wire, session, secret) == "completed"

        # a string for the boolean option is refused, and changes nothing
        error = await wire.error("session/set_config_option", set_params(session, "false"))
        assert error["code"] == INVALID_PARAMS and "is a boolean" in error["message"]
        assert await read_outcome(wire, session, secret) == "completed"

    # recorded: resumed by a client that sees the option, the choice is back
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize(**BOOLEANS)
        params = {"sessionId": session, "cwd": cwd, "mcpServers": []}
        resumed = await wire.result("session/resume", params)
        assert booleans(resumed["configOptions"])[0]["currentValue"] is True
        await wire.result("session/close", {"sessionId": session})
    # a client that cannot see it gets the setting's value, not a hidden choice
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        await wire.result("session/resume", params)
        assert await read_outcome(wire, session, secret) == "failed"


async def test_the_option_starts_at_the_setting_and_can_be_turned_off(
    tmp_path: Path, places: tuple[str, Path]
) -> None:
    cwd, secret = places
    async with served(server(tmp_path, outside=True)) as (wire, _server):
        await wire.initialize(**BOOLEANS)
        new = await wire.result("session/new", {"cwd": cwd, "mcpServers": []})
        session = new["sessionId"]
        assert booleans(new["configOptions"])[0]["currentValue"] is True
        await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        assert await read_outcome(wire, session, secret) == "completed"
        changed = await wire.result(
            "session/set_config_option", set_params(session, False, type="boolean")
        )
        assert booleans(changed["configOptions"])[0]["currentValue"] is False
        assert await read_outcome(wire, session, secret) == "failed"
