"""A session continues with its whole context: what a turn produced, recorded by the server's
own recorder into a real session log, is what the model is sent on the next turn."""

from __future__ import annotations

from pathlib import Path

import attrs

from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.protocol import (
    ContentBlock,
    EmbeddedResourceContentBlock,
    ResourceLinkContentBlock,
    SessionUpdate,
    TextContentBlock,
    TextResourceContents,
)
from acp_sidecar.server.recording import SessionRecorder
from acp_sidecar.store import SessionStore
from tests.agent.model.conftest import SESSION, Editor, make_turn
from tests.agent.model.fake_openai import ScriptedOpenAI, answer, calling, think, tool_call


class RecordedSession:
    """A session whose turns are logged the way the server logs them."""

    def __init__(self, directory: Path) -> None:
        store = SessionStore(directory)
        self.recorder = SessionRecorder(lambda: store, SESSION, "/work", "auto")

    async def run(self, driver: ModelDriver, prompt: str | list[ContentBlock]) -> str:
        """One turn: the prompt, every update and call recorded, then the turn's end."""
        editor = Editor()
        turn = make_turn(editor, prompt, send=self.send, record=self.recorder.record_call_event)
        turn = attrs.evolve(turn, history=self.recorder.history())  # before this prompt
        self.recorder.prompt(turn.prompt)
        stop = await driver.run_turn(turn)
        self.recorder.end_turn(stop)
        return stop

    async def send(self, update: SessionUpdate) -> None:
        self.recorder.update(update)


async def test_the_next_turn_sends_what_the_last_one_produced(
    driver: ModelDriver, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    session = RecordedSession(tmp_path)
    endpoint.script(
        calling(
            tool_call(0, "call_n", "note", '{"path": "a.txt", "old": "x", "new": "y"}'),
            tool_call(1, "call_l", "look", '{"path": "b.txt"}'),
            text="Let me do both.",
        ),
        answer("Both done."),
        answer("You're welcome."),
    )

    first: list[ContentBlock] = [
        TextContentBlock(text="Change "),
        ResourceLinkContentBlock(name="a.txt", uri="file:///work/a.txt"),
        EmbeddedResourceContentBlock(
            resource=TextResourceContents(uri="file:///work/b.txt", text="bee")
        ),
    ]
    assert await session.run(driver, first) == "end_turn"
    assert await session.run(driver, "thanks") == "end_turn"

    turn_one = endpoint.requests[1].messages
    turn_two = endpoint.requests[2].messages
    assert turn_one[1] == {
        "role": "user",
        "content": (
            'Change [@a.txt](file:///work/a.txt)\n<context uri="file:///work/b.txt">\nbee\n'
            "</context>\n"
        ),
    }
    # Everything turn one sent, its final answer, then the new prompt.
    assert turn_two == [
        *turn_one,
        {"role": "assistant", "content": "Both done."},
        {"role": "user", "content": "thanks"},
    ]


async def test_reasoning_before_tool_calls_is_sent_back_on_later_turns(
    driver: ModelDriver, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    # The log keeps thoughts, so an assistant message that made tool calls carries its
    # reasoning on later turns too (DeepSeek's thinking mode refuses the request without it).
    session = RecordedSession(tmp_path)
    endpoint.script(
        calling(*think("Look first."), tool_call(0, "call_1", "look", '{"path": "x"}')),
        answer("Seen."),
        answer("Again."),
    )

    await session.run(driver, "look")
    await session.run(driver, "again")

    assert "reasoning_content" in endpoint.requests[1].messages[2]
    assert endpoint.requests[2].messages[2]["reasoning_content"] == "Look first."
    assert endpoint.requests[2].messages[2]["tool_calls"][0]["id"] == "call_1"
