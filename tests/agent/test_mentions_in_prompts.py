"""``@``-mentions as real clients send them, through the console over the wire (in process).

Found with real clients: prompt blocks were joined with nothing between them, so Toad's
``/read @a.py`` (its text keeps the typed ``@a.py`` and an embedded resource follows) read
``@a.py/…/a.py``, ``/read`` followed by a resource link was ``Unknown command `/read/…```, and
``/grep print `` followed by a link searched for ``print /…/a.py``. A text client (acpx) has
only the typed ``@path``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from tests.server.wire import WireClient, served


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "a.py").write_text("print('a')\nvalue = 1\n")
    (root / "src" / "b.py").write_text("print('b')\n")
    (root / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (root / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    (tmp_path / "outside.txt").write_text("secret\n")
    return root


@pytest.fixture
async def wire(workspace: Path) -> AsyncIterator[tuple[WireClient, str]]:
    async with served(AcpServer(tools=ToolsProvider(entry_points=False))) as (client, _server):
        await client.initialize()
        yield client, await client.new_session(str(workspace))


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def link(path: Path, name: str | None = None, suffix: str = "") -> dict[str, Any]:
    return {"type": "resource_link", "name": name or path.name, "uri": path.as_uri() + suffix}


def embedded(path: Path) -> dict[str, Any]:
    """What Toad sends for a typed ``@path`` it found: the file's text, by its resolved URI."""
    return {
        "type": "resource",
        "resource": {
            "uri": path.resolve().as_uri(),
            "text": path.read_text(),
            "mimeType": "text/plain",
        },
    }


async def run(wire: tuple[WireClient, str], *blocks: Any) -> tuple[list[dict[str, Any]], str]:
    """One prompt: the calls it made (each as its first update merged with the last one) and
    what the console said."""
    client, session = wire
    client.updates.clear()
    msg_id = await client.send_request(
        "session/prompt", {"sessionId": session, "prompt": list(blocks)}
    )
    response = await client.next_response(msg_id)
    assert response["result"]["stopReason"] == "end_turn"
    updates = [u["params"]["update"] for u in client.updates]
    calls: dict[str, dict[str, Any]] = {}
    for update in updates:
        if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
            calls.setdefault(update["toolCallId"], {}).update(update)
    said = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    return list(calls.values()), said


def shown(call: dict[str, Any]) -> str:
    return "".join(
        c["content"].get("text", "") for c in call.get("content") or () if c["type"] == "content"
    )


async def test_toad_read_with_a_typed_mention_and_its_embedded_resource(
    wire: tuple[WireClient, str], workspace: Path
) -> None:
    [call], said = await run(wire, text("/read @a.py"), embedded(workspace / "a.py"))
    assert said == ""
    assert call["rawInput"] == {"path": str((workspace / "a.py").resolve())}
    assert call["status"] == "completed" and "value = 1" in shown(call)


async def test_a_command_then_a_resource_link_takes_it_as_its_path(
    wire: tuple[WireClient, str], workspace: Path
) -> None:
    [call], said = await run(wire, text("/read"), link(workspace / "a.py"))
    assert said == "" and call["status"] == "completed"
    assert call["rawInput"] == {"path": str(workspace / "a.py")}

    [call], _said = await run(wire, text("/read "), link(workspace / "a.py", suffix="#L2"))
    assert call["rawInput"] == {"path": str(workspace / "a.py"), "offset": 2, "limit": 1}

    [call], said = await run(wire, text("/grep print "), link(workspace / "a.py"))
    assert said == "" and call["status"] == "completed"
    assert call["rawInput"]["pattern"] == "print"
    assert call["rawInput"]["path"] == str(workspace / "a.py")
    assert "print('a')" in shown(call) and "print('b')" not in shown(call)

    [call], _said = await run(wire, text("/grep print"), link(workspace / "src", suffix="/"))
    assert call["rawInput"]["path"] == str(workspace / "src")
    assert "print('b')" in shown(call) and "print('a')" not in shown(call)


async def test_two_mentions_for_one_path_say_so(
    wire: tuple[WireClient, str], workspace: Path
) -> None:
    calls, said = await run(
        wire, text("/read "), link(workspace / "a.py"), link(workspace / "big.txt")
    )
    assert calls == []
    assert said == "`/read` takes one path, and this prompt mentions 2: a.py, big.txt."


async def test_a_typed_mention_alone_opens_the_file_in_a_text_client(
    wire: tuple[WireClient, str], workspace: Path
) -> None:
    [call], said = await run(wire, text("@a.py"))
    assert said == "" and call["status"] == "completed"
    assert call["rawInput"] == {"path": str(workspace / "a.py")}

    read, listed = (await run(wire, text(" @src/b.py  @src ")))[0]
    assert read["rawInput"] == {"path": str(workspace / "src" / "b.py")}
    assert listed["rawInput"] == {"pattern": "*", "path": str(workspace / "src")}
    assert "b.py" in shown(listed)

    [call], _said = await run(wire, text('@"src/b.py"'))  # Toad's quoted form
    assert call["rawInput"] == {"path": str(workspace / "src" / "b.py")}

    [call], _said = await run(wire, text("/read @src/b.py"))
    assert call["rawInput"] == {"path": str(workspace / "src" / "b.py")}

    [call], _said = await run(wire, text("/grep value @a.py"))
    assert call["rawInput"]["pattern"] == "value"
    assert call["rawInput"]["path"] == str(workspace / "a.py")


async def test_text_that_only_looks_like_a_mention_is_text(wire: tuple[WireClient, str]) -> None:
    for words in ("mail user@example.com", "`@a.py`", "see `x @a.py`", "```\n@a.py\n```"):
        calls, said = await run(wire, text(words))
        assert calls == [] and said.startswith("No model is configured"), words
    [call], _said = await run(wire, text("/grep user@example.com"))
    assert call["rawInput"]["pattern"] == "user@example.com" and "path" not in call["rawInput"]
    # A typed `@word` naming nothing in the workspace is the pattern, not a path.
    [call], _said = await run(wire, text("/grep @property"))
    assert call["rawInput"]["pattern"] == "@property" and "path" not in call["rawInput"]


async def test_mentions_that_cannot_be_read_each_say_why(
    wire: tuple[WireClient, str], workspace: Path
) -> None:
    async def failed(*blocks: Any) -> str:
        [call], _said = await run(wire, *blocks)
        assert call["status"] == "failed", call
        return shown(call)

    outside = workspace.parent / "outside.txt"
    assert "is outside the workspace" in await failed(link(outside))
    assert "is outside the workspace" in await failed(text("@../outside.txt"))
    assert await failed(text("@nope.py")) == "nope.py does not exist."
    assert await failed(text("/read @nope.py")) == "nope.py does not exist."
    assert "src is a directory, not a file" in await failed(text("/read @src"))
    assert "blob.bin is a binary file" in await failed(link(workspace / "blob.bin"))
    # An oversized file is read as `read` reads it: the first window, and how to go on.
    [call], _said = await run(wire, text("@big.txt"))
    assert call["status"] == "completed"
    assert "Lines 1–2000 of 5000" in shown(call) and "Continue with offset=2001" in shown(call)


async def test_a_shell_command_keeps_typed_text_and_quotes_a_linked_path(
    wire: tuple[WireClient, str], workspace: Path
) -> None:
    client, session = wire
    await client.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
    await client.next_update()  # the mode's config option update
    [call], _said = await run(wire, text("!echo hi @a.py"), embedded(workspace / "a.py"))
    assert call["rawInput"]["command"] == f"echo hi {(workspace / 'a.py').resolve()}"
    [call], _said = await run(wire, text("!echo @team"))
    assert call["rawInput"]["command"] == "echo @team"
    [call], _said = await run(wire, text("!wc -l"), link(workspace / "a.py"))
    assert call["rawInput"]["command"] == f"wc -l {workspace / 'a.py'}"
