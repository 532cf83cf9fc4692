"""Prompt content for the model: images advertised and sent as image parts only where a model
takes them, refused with a notice where the session's model does not, embedded context and
resource links as context in the user message — the same after the session is reloaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.agent.model.config import ModelProfile
from acp_sidecar.agent.model.messages import add_user_message, user_message
from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.protocol import (
    BlobResourceContents,
    ContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceLinkContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from acp_sidecar.tools.registry import ToolRegistry
from tests.agent.model.fake_openai import ScriptedOpenAI, answer
from tests.agent.model.harness import RecordedSession, assert_well_formed, make_turn
from tests.fakes import Editor
from tests.server.wire import served

PIXEL = "iVBORw0KGgo="
IMAGE = {"type": "image", "data": PIXEL, "mimeType": "image/png"}
SEEING = (ModelProfile("seeing", images=True), ModelProfile("blind"))

PROMPT: tuple[ContentBlock, ...] = (
    TextContentBlock(text="What is wrong in "),
    ResourceLinkContentBlock(name="app.py", uri="file:///w/app.py", mime_type="text/x-python"),
    TextContentBlock(text=" given this screenshot?"),
    ImageContentBlock(data=PIXEL, mime_type="image/png"),
    ImageContentBlock(data="", mime_type="image/jpeg", uri="https://example.com/shot.jpg"),
    EmbeddedResourceContentBlock(
        resource=TextResourceContents(uri="file:///w/log.txt", text="Traceback: boom")
    ),
    EmbeddedResourceContentBlock(
        resource=BlobResourceContents(uri="file:///w/core", blob="AAAA", mime_type="x/core")
    ),
)

PARTS = [
    {
        "type": "text",
        "text": "What is wrong in [@app.py](file:///w/app.py) given this screenshot?",
    },
    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
    {"type": "image_url", "image_url": {"url": "https://example.com/shot.jpg"}},
    {
        "type": "text",
        "text": '\n<context uri="file:///w/log.txt">\nTraceback: boom\n</context>\n'
        "\n[file:///w/core: x/core content, not included]\n",
    },
]


async def test_images_are_advertised_only_when_a_configured_model_takes_them() -> None:
    def advertised(*models: ModelProfile) -> Any:
        config = ModelConfig(model="blind", models=models)
        return ModelDriver(config, ToolRegistry).prompt_capabilities

    assert advertised(*SEEING).image is True
    assert advertised(ModelProfile("blind")).image is False
    assert advertised().image is False
    assert advertised(*SEEING).embedded_context is True

    for models, image in ((SEEING, True), ((ModelProfile("blind"),), False)):
        config = ModelConfig(model="blind", models=models)
        server = AcpServer(
            lambda config=config: ModelDriver(config, ToolRegistry),
            tools=ToolsProvider(builtins=False, entry_points=False),
        )
        async with served(server) as (wire, _server):
            result = await wire.initialize()
            assert result["agentCapabilities"]["promptCapabilities"]["image"] is image


async def test_an_image_for_a_model_that_does_not_take_images_is_not_sent(
    make_driver: Any, endpoint: ScriptedOpenAI
) -> None:
    driver: ModelDriver = make_driver(model="seeing", models=SEEING)
    editor = Editor()
    turn = attrs.evolve(make_turn(editor, PROMPT), model="blind")

    assert await driver.run_turn(turn) == "end_turn"

    assert endpoint.requests == []
    [said] = [u["content"]["text"] for u in editor.updates]
    assert said == (
        "The model `blind` does not accept images, so this prompt was not sent. Choose a model "
        "that does (`seeing`) and send it again, or send it without the image."
    )
    # The default model (no choice made in the session) is judged the same way.
    blind: ModelDriver = make_driver(model="blind", models=(ModelProfile("blind"),))
    editor = Editor()
    assert await blind.run_turn(make_turn(editor, PROMPT)) == "end_turn"
    assert endpoint.requests == []
    assert editor.updates[-1]["content"]["text"].endswith("Send it without the image.")


async def test_images_and_context_reach_the_endpoint_and_again_from_the_log(
    make_driver: Any, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    driver: ModelDriver = make_driver(model="seeing", models=SEEING)
    session = RecordedSession(tmp_path)
    endpoint.script(answer("A null pointer."), answer("Yes."))

    assert await session.run(driver, PROMPT) == "end_turn"
    first = endpoint.requests[-1].messages
    assert first[-1] == {"role": "user", "content": PARTS}
    assert_well_formed(first)

    # The next turn reads the stored prompt back from the log: the same parts.
    assert await session.run(driver, "And now?") == "end_turn"
    second = endpoint.requests[-1].messages
    assert second[1] == {"role": "user", "content": PARTS}
    assert second[2:] == [
        {"role": "assistant", "content": "A null pointer."},
        {"role": "user", "content": "And now?"},
    ]
    assert_well_formed(second)


async def test_a_stored_image_is_a_note_for_a_model_without_images(
    make_driver: Any, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    seeing: ModelDriver = make_driver(model="seeing", models=SEEING)
    session = RecordedSession(tmp_path)
    endpoint.script(answer("A null pointer."), answer("Yes."))
    assert await session.run(seeing, PROMPT) == "end_turn"

    blind: ModelDriver = make_driver(model="blind", models=SEEING)
    assert await session.run(blind, "And now?") == "end_turn"
    stored = endpoint.requests[-1].messages[1]
    assert stored["content"] == (
        "What is wrong in [@app.py](file:///w/app.py) given this screenshot?"
        " [image/png image, not sent: the model does not take images]"  # blocks are words
        " [image/jpeg image, not sent: the model does not take images]"
        '\n<context uri="file:///w/log.txt">\nTraceback: boom\n</context>\n'
        "\n[file:///w/core: x/core content, not included]\n"
    )


async def test_the_prompt_and_image_survive_a_reload_over_the_wire(
    make_driver: Any, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    """``session/prompt`` with an image, then ``session/load`` in a new server and a second
    prompt: the endpoint gets the image both times (every message checked by the wire)."""
    store = tmp_path / "store"
    config = make_driver(model="seeing", models=SEEING).config
    endpoint.script(answer("A cat."), answer("Still a cat."))
    image = {"type": "image", "data": PIXEL, "mimeType": "image/png"}

    def server() -> AcpServer:
        return AcpServer(
            lambda: ModelDriver(config, ToolRegistry),
            tools=ToolsProvider(builtins=False, entry_points=False),
            store=lambda: SessionStore(store),
        )

    async with served(server()) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        prompt = [{"type": "text", "text": "What is this?"}, image]
        done = await wire.result("session/prompt", {"sessionId": session, "prompt": prompt})
        assert done["stopReason"] == "end_turn"
    async with served(server()) as (wire, _server):
        await wire.initialize()
        params = {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        await wire.result("session/load", params)
        again = [{"type": "text", "text": "Sure?"}]
        await wire.result("session/prompt", {"sessionId": session, "prompt": again})
    parts = [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
    ]
    first, second = endpoint.requests
    assert first.messages[-1] == {"role": "user", "content": parts}
    assert second.messages[1] == {"role": "user", "content": parts}


def test_a_user_message_with_parts_joins_an_unanswered_one() -> None:
    messages = [{"role": "system", "content": "s"}, user_message([{"type": "text", "text": "a"}])]
    add_user_message(messages, user_message([*map(dict, [{"type": "text", "text": "b"}])]))
    assert messages[-1] == {"role": "user", "content": "a\n\nb"}
    image = {"type": "image", "data": PIXEL, "mimeType": "image/png"}
    add_user_message(messages, user_message([image], images=True))
    assert messages[-1]["content"] == [
        {"type": "text", "text": "a\n\nb"},
        {"type": "text", "text": "\n\n"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
    ]
    assert len(messages) == 2


def test_an_image_the_endpoint_cannot_reach_is_a_note() -> None:
    local = {"type": "image", "data": "", "mimeType": "image/png", "uri": "file:///w/a.png"}
    message = user_message([{"type": "text", "text": "see "}, local, dict(IMAGE)], images=True)
    assert message["content"] == [
        {"type": "text", "text": "see [image/png image, not sent: no data or web address]"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
    ]
