"""Where the version is decided: ``initialize`` negotiates it once per connection, v2 only
with the flag on; a v1 connection is served as before whatever the flag says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.negotiation import negotiate
from tests.drivers import ScriptDriver
from tests.server.wire import WireClient, cli_served, served

V2_INIT = {"protocolVersion": 2, "info": {"name": "test-client", "version": "0"}}


def server(*, acp_v2: bool) -> AcpServer:
    return AcpServer(ScriptDriver, cancel_grace=0.3, acp_v2=acp_v2)


@pytest.mark.parametrize(
    ("requested", "enabled", "chosen"),
    [
        (2, True, 2),
        (3, True, 2),
        (65535, True, 2),
        (1, True, 1),
        (0, True, 1),
        (2, False, 1),
        (True, True, 1),  # a boolean is no version
        ("2", True, 1),
        (None, True, 1),
    ],
)
def test_negotiate(requested: object, enabled: bool, chosen: int) -> None:
    assert negotiate(requested, enabled) == chosen


async def test_a_client_asking_2_with_the_flag_off_gets_1() -> None:
    async with served(server(acp_v2=False)) as (client, _):
        result = await client.result("initialize", V2_INIT)  # judged by the v1 schema
        assert result["protocolVersion"] == 1
        assert "agentCapabilities" in result and "info" not in result


@pytest.mark.parametrize("asked", [2, 3])
async def test_with_the_flag_on_a_client_asking_2_or_later_gets_2(asked: int) -> None:
    async with served(server(acp_v2=True)) as (client, _):
        client.version = 2
        result = await client.result("initialize", {**V2_INIT, "protocolVersion": asked})
        assert result["protocolVersion"] == 2
        assert result["info"]["name"] == "acp-sidecar"
        assert "agentCapabilities" not in result


async def test_with_the_flag_on_a_client_asking_1_gets_v1() -> None:
    async with served(server(acp_v2=True)) as (client, _):
        result = await client.initialize()
        assert result["protocolVersion"] == 1
        error = await client.error("auth/login", {"methodId": "configure"})
        assert error["code"] == -32601


async def test_a_second_initialize_is_refused_and_the_version_stays() -> None:
    async with served(server(acp_v2=True)) as (client, _):
        client.version = 2
        await client.result("initialize", V2_INIT)
        error = await client.error("initialize", V2_INIT)
        assert error["code"] == -32600
        assert "already called" in error["message"]
        # Still v2: its methods answer, v1's do not.
        assert await client.result("auth/login", {"methodId": "configure"}) == {}
        assert (await client.error("authenticate", {"methodId": "configure"}))["code"] == -32601


async def test_a_v2_method_before_initialize_is_not_found_as_before() -> None:
    """Before ``initialize`` the v1 mapping serves: a v2-only name is unknown (pygls's own
    answer), as on a sidecar without v2."""
    answers = []
    for enabled in (False, True):
        async with served(server(acp_v2=enabled)) as (client, _):
            answers.append(await client.error("auth/login", {"methodId": "configure"}))
    assert answers[0] == answers[1]
    assert answers[0]["code"] == -32601


def _without_ids(messages: list[dict[str, Any]], session_ids: list[str]) -> list[str]:
    """Each message as text, the session ids replaced, sorted: what the server wrote, not
    how its after-answer work interleaved with the client's next request."""
    texts = []
    for message in messages:
        text = json.dumps(message, sort_keys=True)
        for number, session_id in enumerate(session_ids):
            text = text.replace(session_id, f"<session {number}>")
        texts.append(text)
    return sorted(texts)


async def _v1_exchange(client: WireClient, cwd: Path) -> list[str]:
    await client.initialize()
    first = await client.new_session(str(cwd))
    await client.result(
        "session/set_config_option", {"sessionId": first, "configId": "mode", "value": "auto"}
    )
    await client.error("session/set_mode", {"sessionId": first, "modeId": "nope"})
    await client.error("auth/logout", {})
    await client.result("session/close", {"sessionId": first})
    return [first]


async def test_v1_is_served_byte_for_byte_the_same_with_the_flag_on(tmp_path: Path) -> None:
    seen = []
    for enabled in (False, True):
        async with served(server(acp_v2=enabled)) as (client, _):
            ids = await _v1_exchange(client, tmp_path)
            seen.append(_without_ids(client.received, ids))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("where", ["option", "config file"])
async def test_serve_takes_the_flag_from_the_option_or_the_config_file(
    tmp_path: Path, where: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("acp_v2 = true\n" if where == "config file" else "")
    args = ["--config", str(config), "--store", str(tmp_path / "store")]
    async with cli_served(*args, *(["--acp-v2"] if where == "option" else [])) as (client, _):
        client.version = 2
        assert (await client.result("initialize", V2_INIT))["protocolVersion"] == 2


async def test_serve_leaves_v2_off_by_default(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("")
    async with cli_served("--config", str(config), "--store", str(tmp_path / "s")) as (client, _):
        assert (await client.result("initialize", V2_INIT))["protocolVersion"] == 1
