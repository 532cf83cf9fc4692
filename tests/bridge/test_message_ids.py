"""Message ids live: the chunks of one message share an id, every new message gets its own."""

from __future__ import annotations

from acp_sidecar.bridge.message_ids import MessageIds, derived_message_id
from acp_sidecar.protocol import (
    AgentMessageChunk,
    AgentThoughtChunk,
    TextContentBlock,
    ToolCallStart,
    UsageUpdate,
)


def text(chunk: str) -> AgentMessageChunk:
    return AgentMessageChunk(content=TextContentBlock(text=chunk))


def thought(chunk: str) -> AgentThoughtChunk:
    return AgentThoughtChunk(content=TextContentBlock(text=chunk))


def ids_of(*updates: object) -> list[str | None]:
    return [getattr(update, "message_id", None) for update in updates]


def test_chunks_of_one_message_share_an_id_and_a_tool_call_starts_a_new_one() -> None:
    ids = MessageIds()
    card = ToolCallStart(tool_call_id="c1", title="Read a.txt", kind="read", status="pending")
    sent = [ids.stamp(u) for u in (thought("a"), thought("b"), text("c"), text("d"), card)]
    after = [ids.stamp(text("e")), ids.stamp(text("f"))]
    t1, t2, a1, a2, none = ids_of(*sent)
    b1, b2 = ids_of(*after)
    assert t1 == t2 and a1 == a2 and b1 == b2 and none is None
    assert len({t1, a1, b1}) == 3  # the thought, the reply, the text after the call
    assert [u.content.text for u in sent[:4]] == ["a", "b", "c", "d"]  # type: ignore[union-attr]
    assert sent[4] is card  # other updates go as they came


def test_any_other_update_ends_the_message_even_for_a_chunk_sent_again() -> None:
    ids = MessageIds()
    same = text("chunk")
    first, again = ids.stamp(same), ids.stamp(same)
    assert first is again and first.message_id is not None  # type: ignore[union-attr]
    ids.stamp(UsageUpdate(used=1, size=10))
    later = ids.stamp(same)
    assert later.message_id not in (None, first.message_id)  # type: ignore[union-attr]


def test_an_id_a_chunk_carries_is_kept_and_names_its_message() -> None:
    ids = MessageIds()
    given = ids.stamp(AgentMessageChunk(content=TextContentBlock(text="x"), message_id="m1"))
    assert given.message_id == "m1"  # type: ignore[union-attr]
    assert ids.stamp(text("y")).message_id == "m1"  # type: ignore[union-attr]


def test_a_prompt_gets_its_own_id_and_the_sidecars_text_joins_the_agent_message() -> None:
    ids = MessageIds()
    prompt = ids.user_message()
    notice = ids.agent_text()  # nothing open: it starts the agent's message
    reply = ids.stamp(text("hi")).message_id  # type: ignore[union-attr]
    assert notice == reply != prompt
    assert ids.agent_text() == reply  # told inside the open message
    assert ids.user_message() not in (prompt, reply)
    ids.stamp(thought("hm"))
    assert ids.agent_text() != reply  # a thought was open: the text is a new message


def test_derived_ids_depend_on_the_session_and_the_position_only() -> None:
    assert derived_message_id("s", 3) == derived_message_id("s", 3)
    assert (
        len({derived_message_id("s", 3), derived_message_id("s", 4), derived_message_id("t", 3)})
        == 3
    )


def test_records_written_before_ids_replay_as_the_messages_they_were_live() -> None:
    from datetime import UTC, datetime

    from acp_sidecar.bridge.context import CardContext
    from acp_sidecar.bridge.replay import replay_updates
    from acp_sidecar.store import (
        AgentMessageRecord,
        AgentThoughtRecord,
        GapRecord,
        HeaderRecord,
        NoticeRecord,
        ToolCallRecord,
        UserMessageRecord,
    )
    from acp_sidecar.tools.json_values import FrozenDict

    header = HeaderRecord(session_id="s", cwd="/w", created_at=datetime.now(UTC))
    records = [
        UserMessageRecord(content=(FrozenDict({"type": "text", "text": "go"}),)),
        AgentThoughtRecord(text="thinking"),
        AgentMessageRecord(text="first"),
        NoticeRecord(text="the request was retried"),  # in the agent's voice: the same message
        GapRecord(reason="lost"),
        ToolCallRecord(call_id="c1", name="unknown", arguments=FrozenDict({})),
        AgentMessageRecord(text="after the call"),
        AgentThoughtRecord(text="again"),
    ]

    def chunk_ids() -> list[str | None]:
        updates = replay_updates(header, records, lambda _name: None, CardContext(cwd="/w"))
        return [
            update.message_id
            for update in updates
            if isinstance(update, AgentMessageChunk | AgentThoughtChunk)
        ]

    thought_id, first, notice, gap, after, again = chunk_ids()
    assert first == notice == gap == derived_message_id("s", 3)
    assert thought_id == derived_message_id("s", 2)
    assert after == derived_message_id("s", 7) and again == derived_message_id("s", 8)
    assert len({thought_id, first, after, again}) == 4
    assert chunk_ids() == [thought_id, first, notice, gap, after, again]  # every load alike
