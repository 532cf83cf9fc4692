"""A session continues with its whole context: what a turn produced, recorded by the server's
own recorder into a real session log, is what the model is sent on the next turn."""

from __future__ import annotations

from pathlib import Path

from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.protocol import (
    ContentBlock,
    EmbeddedResourceContentBlock,
    ResourceLinkContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from tests.agent.model.fake_openai import ScriptedOpenAI, answer, calling, think, tool_call
from tests.agent.model.harness import RecordedSession, assert_well_formed


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
    assert_well_formed(turn_two)
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
