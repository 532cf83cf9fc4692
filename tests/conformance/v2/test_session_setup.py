"""ACP v2 session set-up, in process: every answer and update a v2 connection writes is judged
by the v2 schema (``WireClient.version = 2``, which also refuses a kind v2 does not name), and
the v1-only methods are not found.

Spec: the vendored ``tests/fixtures/acp/v2/schema.json`` (``@agentclientprotocol/sdk`` 2.4.0),
whose descriptions are the Preview's method rules.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from tests.drivers import ScriptDriver
from tests.server.wire import WireClient, served

CLIENT_INFO = {"name": "v2-test-client", "version": "0"}


@asynccontextmanager
async def v2_client(
    store: Path | None = None, **capabilities: Any
) -> AsyncIterator[tuple[WireClient, AcpServer, dict[str, Any]]]:
    """A sidecar with v2 on, a client that initialized it over v2, and the answer it got."""
    made = None if store is None else (lambda: SessionStore(store))
    server = AcpServer(ScriptDriver, cancel_grace=0.3, acp_v2=True, store=made)
    async with served(server) as (client, _):
        client.version = 2
        params = {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": capabilities}
        answer = await client.result("initialize", params)
        client.initialized = True
        yield client, server, answer


async def new_session(client: WireClient, cwd: Path) -> dict[str, Any]:
    result: dict[str, Any] = await client.result("session/new", {"cwd": str(cwd)})
    return result


async def next_kind(client: WireClient, kind: str) -> dict[str, Any]:
    while True:
        update: dict[str, Any] = (await client.next_update())["params"]["update"]
        if update["sessionUpdate"] == kind:
            return update


async def test_initialize_answers_the_v2_layout(tmp_path: Path) -> None:
    async with v2_client(tmp_path / "store") as (_, _, result):
        pass
    assert result["protocolVersion"] == 2
    assert result["info"]["name"] == "acp-sidecar" and result["info"]["version"]
    session = result["capabilities"]["session"]
    assert session["mcp"] == {"stdio": {}, "http": {}}
    assert session["delete"] == {} and session["additionalDirectories"] == {}
    assert session["prompt"] == {"image": {}, "embeddedContext": {}}  # the driver's
    assert [m["type"] for m in result["authMethods"]] == ["agent"]
    assert result["authMethods"][0]["methodId"] == "configure"
    assert "_meta" not in result  # steering is a prompt extension: not offered over v2 yet


async def test_a_terminal_auth_client_is_offered_the_terminal_method() -> None:
    async with v2_client(auth={"terminal": {}}) as (_, _, result):
        methods = result["authMethods"]
    assert [m["type"] for m in methods] == ["agent", "terminal"]
    assert methods[1]["methodId"] == "configure-terminal"
    assert methods[1]["args"][-1] == "configure"


async def test_without_a_store_delete_is_not_offered_and_the_list_is_empty() -> None:
    async with v2_client() as (client, _, result):
        assert "delete" not in result["capabilities"]["session"]
        assert await client.result("session/list", {}) == {"sessions": []}
        error = await client.error("session/delete", {"sessionId": "nope"})
        assert error["code"] == -32601


async def test_login_and_logout_answer_empty() -> None:
    async with v2_client() as (client, _, _):
        assert await client.result("auth/login", {"methodId": "configure"}) == {}
        assert await client.result("auth/logout", {}) == {}


async def test_session_new_answers_v2_options_then_v2_commands(tmp_path: Path) -> None:
    async with v2_client() as (client, _, _):
        result = await new_session(client, tmp_path)
        assert isinstance(result["sessionId"], str)
        options = {o["configId"]: o for o in result["configOptions"]}
        assert options["mode"]["type"] == "select" and options["mode"]["currentValue"] == "ask"
        assert "id" not in options["mode"]
        # Boolean options are v2's baseline: the outside-workspace switch is offered.
        assert options["allow_outside_workspace"]["type"] == "boolean"
        commands = (await next_kind(client, "available_commands_update"))["availableCommands"]
        assert commands and {c["type"] for c in commands} == {"command"}
        hinted = [c["input"] for c in commands if c.get("input") is not None]
        assert hinted and {i["type"] for i in hinted} == {"text"}


async def test_set_config_option_answers_every_option(tmp_path: Path) -> None:
    async with v2_client() as (client, _, _):
        session_id = (await new_session(client, tmp_path))["sessionId"]
        result = await client.result(
            "session/set_config_option",
            {"sessionId": session_id, "configId": "mode", "type": "id", "value": "auto"},
        )
        mode = next(o for o in result["configOptions"] if o["configId"] == "mode")
        assert mode["currentValue"] == "auto"
        result = await client.result(
            "session/set_config_option",
            {
                "sessionId": session_id,
                "configId": "allow_outside_workspace",
                "type": "boolean",
                "value": True,
            },
        )
        outside = next(
            o for o in result["configOptions"] if o["configId"] == "allow_outside_workspace"
        )
        assert outside["currentValue"] is True
        # No current_mode_update follows (v2 has none): the exit check refuses any v1 kind.
        await client.result("session/close", {"sessionId": session_id})


@pytest.mark.parametrize(
    ("value_type", "value", "message"),
    [
        ("id", True, "Invalid params: value: type 'id' takes a value id (a string)"),
        ("boolean", "auto", "Invalid params: value: type 'boolean' takes true or false"),
        ("number", "3", "Invalid params: type: 'number' is not a value type (id, boolean)"),
    ],
)
async def test_a_value_of_the_wrong_type_is_refused(
    tmp_path: Path, value_type: str, value: Any, message: str
) -> None:
    async with v2_client() as (client, _, _):
        session_id = (await new_session(client, tmp_path))["sessionId"]
        params = {"sessionId": session_id, "configId": "mode", "type": value_type, "value": value}
        error = await client.error("session/set_config_option", params)
        assert error == {"code": -32602, "message": message}


async def test_close_and_delete(tmp_path: Path) -> None:
    async with v2_client(tmp_path / "store") as (client, server, _):
        session_id = (await new_session(client, tmp_path))["sessionId"]
        assert await client.result("session/close", {"sessionId": session_id}) == {}
        assert session_id not in server.sessions
        assert await client.result("session/delete", {"sessionId": session_id}) == {}


async def test_a_session_prompted_over_v1_is_listed_over_v2(tmp_path: Path) -> None:
    store = tmp_path / "store"
    server = AcpServer(ScriptDriver, cancel_grace=0.3, store=lambda: SessionStore(store))
    async with served(server) as (v1, _):
        await v1.initialize()
        session_id = await v1.new_session(str(tmp_path))
        answer = await v1.next_response(await v1.start_prompt(session_id, "echo hi"))
        assert answer["result"]["stopReason"] == "end_turn"
    async with v2_client(store) as (client, _, _):
        listed = await client.result("session/list", {"cwd": str(tmp_path)})
    [info] = listed["sessions"]
    assert info["sessionId"] == session_id and info["cwd"] == str(tmp_path)
    assert info["title"] == "echo hi"


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("authenticate", {"methodId": "configure"}),
        ("logout", {}),
        ("session/load", {"sessionId": "s", "cwd": "/tmp", "mcpServers": []}),
        ("session/set_mode", {"sessionId": "s", "modeId": "auto"}),
        ("_session/steering", {"sessionId": "s", "prompt": []}),
    ],
)
async def test_methods_v2_does_not_serve_are_not_found(method: str, params: Any) -> None:
    async with v2_client() as (client, _, _):
        error = await client.error(method, params)
        unknown = await client.error("no/such_method", {})
    assert error["code"] == -32601
    assert error == {
        **unknown,
        "message": unknown["message"].replace("no/such_method", method),
        **({"data": unknown["data"]} if "data" in unknown else {}),
    }
