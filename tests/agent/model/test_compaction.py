"""The context never overflows: a session that outgrows the model's window has its oldest turns
summarised by the model (shown as a compaction where the client advertises it), or failing that
left out of the request with a notice; the log keeps every turn.

Turns run against the scripted OpenAI-compatible endpoint, logged by the server's own recorder;
every update the editor is sent is checked against the ACP schema. The SDK client (0.12.1) does
not know compaction updates, so these run in process against the schema directly.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.agent.model.compaction import (
    SUMMARY_INSTRUCTIONS,
    Known,
    estimate_request,
    estimate_tokens,
    past_of,
    request_budget,
)
from acp_sidecar.agent.model.config import ModelProfile
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.replay import replay_updates
from acp_sidecar.protocol import ClientCapabilities, ClientSessionCapabilities
from acp_sidecar.store import (
    AgentMessageRecord,
    CompactionRecord,
    ToolCallRecord,
    ToolResultRecord,
    UserMessageRecord,
)
from acp_sidecar.store.history import interrupted_result
from acp_sidecar.tools.cancel import CancelSignal
from tests.agent.model.fake_openai import (
    Pause,
    Reply,
    ScriptedOpenAI,
    answer,
    calling,
    say,
    stop,
    tool_call,
)
from tests.agent.model.harness import (
    SESSION,
    Clock,
    RecordedSession,
    assert_well_formed,
    make_turn,
    tool_registry,
)
from tests.fakes import Editor, NoClient

WINDOW = 6000
MAX_TOKENS = 500
"""With the test tools and 3000-character prompts, the fifth prompt's request no longer fits
(four earlier turns), while the fourth's does."""


class CompactionClient(NoClient):
    """An editor that advertised ``session.compaction``."""

    capabilities = ClientCapabilities(session=ClientSessionCapabilities(compaction={}))


def long_prompt(n: int) -> str:
    return f"PROMPT-{n} " + "lorem ipsum dolor sit amet " * 110


def driver_for(make_driver: Callable[..., ModelDriver], window: int | None = WINDOW) -> ModelDriver:
    return make_driver(
        max_tokens=MAX_TOKENS, models=(ModelProfile(name="test-model", context_window=window),)
    )


def body_size(request: Any) -> int:
    return len(json.dumps(request.body["messages"]))


def compaction_updates(editor: Editor) -> list[dict[str, Any]]:
    kinds = ("compaction_update", "compaction_summary_chunk")
    return [u for u in editor.updates if u["sessionUpdate"] in kinds]


def is_summary_request(request: Any) -> bool:
    return bool(request.messages[0]["content"] == SUMMARY_INSTRUCTIONS)


def logged_prompts(session: RecordedSession) -> list[str]:
    """The prompts replay shows."""
    with session.store.open_log(SESSION) as log:
        header, records = log.header, list(log)
    updates = replay_updates(header, records, tool_registry().get, CardContext(cwd="/work"))
    return [
        u.content.text.split()[0]  # type: ignore[union-attr]
        for u in updates
        if u.session_update == "user_message_chunk"
    ]


@pytest.mark.parametrize("shown", [True, False], ids=["compaction-client", "plain-client"])
async def test_a_long_session_is_summarised_and_the_summary_reused(
    endpoint: ScriptedOpenAI,
    make_driver: Callable[..., ModelDriver],
    tmp_path: Path,
    shown: bool,
) -> None:
    endpoint.script(
        answer("One."),
        calling(tool_call(0, "call_1", "look", '{"path": "a"}')),  # a call and its result
        answer("Two."),
        answer("Three."),
        answer("Four."),
        Reply([*say("SUMMARY: the user ", "sent prompts 1-3."), stop()]),
        answer("Five."),
        answer("Six."),
    )
    driver = driver_for(make_driver)
    session = RecordedSession(tmp_path)
    client = CompactionClient() if shown else NoClient()
    editors = [Editor() for _ in range(6)]
    for n, editor in enumerate(editors, 1):
        assert await session.run(driver, long_prompt(n), editor=editor, client=client) == "end_turn"

    requests = endpoint.requests
    assert [is_summary_request(r) for r in requests] == [False] * 5 + [True, False, False]
    summary_request = requests[5]
    assert "tools" not in summary_request.body
    assert summary_request.body["max_tokens"] <= MAX_TOKENS
    asked = summary_request.messages[1]["content"]
    assert all(f"PROMPT-{n}" in asked for n in (1, 2, 3)) and "PROMPT-4" not in asked
    assert "Agent called look" in asked  # the tool call is in what was summarised

    fifth = requests[6]
    text = json.dumps(fifth.messages)
    assert "sent prompts 1-3." in text and "PROMPT-4" in text and "PROMPT-5" in text
    assert not any(f"PROMPT-{n} " in text for n in (1, 2, 3))
    assert body_size(fifth) < body_size(requests[4])  # smaller than the fourth prompt's
    for request in requests:
        if not is_summary_request(request):
            assert_well_formed(request.messages)

    # the sixth prompt reuses the summary: no new summary request, the same shortened past
    sixth = json.dumps(requests[7].messages)
    assert "sent prompts 1-3." in sixth and "PROMPT-1 " not in sixth and "PROMPT-4" in sixth

    announced = compaction_updates(editors[4])
    if shown:
        statuses = [u.get("status") for u in announced if u["sessionUpdate"] == "compaction_update"]
        assert statuses == ["in_progress", "completed"]
        chunks = [
            u["content"]["text"]
            for u in announced
            if u["sessionUpdate"] == "compaction_summary_chunk"
        ]
        assert "".join(chunks) == "SUMMARY: the user sent prompts 1-3."
        assert announced[-1]["summary"] == [
            {"type": "text", "text": "SUMMARY: the user sent prompts 1-3."}
        ]
        assert len({u["compactionId"] for u in announced}) == 1
        # it came before the answer
        kinds = [u["sessionUpdate"] for u in editors[4].updates]
        assert kinds.index("compaction_update") < kinds.index("agent_message_chunk")
    else:
        assert announced == []
    assert all(compaction_updates(e) == [] for e in editors if e is not editors[4])

    history = session.recorder.history()
    assert [r for r in history if isinstance(r, CompactionRecord)] == [
        CompactionRecord(summary="SUMMARY: the user sent prompts 1-3.", turns=3)
    ]
    # the log keeps everything: replay shows every prompt
    assert logged_prompts(session) == [f"PROMPT-{n}" for n in range(1, 7)]


async def test_a_failed_summary_leaves_the_oldest_turns_out_and_says_so(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], tmp_path: Path
) -> None:
    failure = Reply(
        status=500, body={"error": {"message": "overloaded"}}, headers={"x-should-retry": "false"}
    )
    endpoint.script(
        answer("One."), answer("Two."), answer("Three."), answer("Four."), failure, answer("Five.")
    )
    driver = driver_for(make_driver)
    session = RecordedSession(tmp_path)
    editor = Editor()
    for n in range(1, 6):
        editor = Editor()
        await session.run(driver, long_prompt(n), editor=editor, client=CompactionClient())
    fifth = endpoint.requests[-1]
    text = json.dumps(fifth.messages)
    assert not any(f"PROMPT-{n} " in text for n in (1, 2, 3)) and "PROMPT-4" in text
    assert_well_formed(fifth.messages)
    statuses = [u.get("status") for u in compaction_updates(editor)]
    assert statuses == ["in_progress", "failed"]
    said = "".join(
        u["content"]["text"] for u in editor.updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "too long for the model's context window" in said
    assert "overloaded" in said and "oldest 3 turns were left out" in said
    assert said.endswith("Five.")
    # nothing was summarised: no record, so a later prompt tries again
    assert not [r for r in session.recorder.history() if isinstance(r, CompactionRecord)]
    assert logged_prompts(session) == [f"PROMPT-{n}" for n in range(1, 6)]


async def test_a_request_refused_for_its_length_is_compacted_and_sent_again(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], tmp_path: Path
) -> None:
    too_long = Reply(
        status=400,
        body={
            "error": {
                "message": "This model's maximum context length is 4096 tokens. However, "
                "your messages resulted in 5210 tokens.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    )
    endpoint.script(
        answer("One."),
        answer("Two."),
        too_long,
        Reply([*say("Earlier: prompts 1 and 2."), stop()]),
        answer("Three."),
    )
    driver = driver_for(make_driver, window=None)  # the window is not known
    session = RecordedSession(tmp_path)
    editor = Editor()
    for n in range(1, 4):
        editor = Editor()
        assert await session.run(driver, long_prompt(n), editor=editor) == "end_turn"
    refused, summary, retried = endpoint.requests[2:]
    assert is_summary_request(summary) and not is_summary_request(retried)
    assert body_size(retried) < body_size(refused)
    assert "Earlier: prompts 1 and 2." in json.dumps(retried.messages)
    said = "".join(
        u["content"]["text"] for u in editor.updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert said == "Three."  # the refusal was handled, not explained
    assert [r.turns for r in session.recorder.history() if isinstance(r, CompactionRecord)] == [2]


async def test_a_length_refusal_with_nothing_to_summarise_is_explained(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], editor: Editor
) -> None:
    too_long = Reply(status=400, body={"error": {"message": "maximum context length exceeded"}})
    endpoint.script(too_long)
    driver = driver_for(make_driver, window=None)
    assert await driver.run_turn(make_turn(editor)) == "end_turn"
    # nothing to summarise (no past turns): the refusal is explained
    said = "".join(
        u["content"]["text"] for u in editor.updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "rejected the request (HTTP 400)" in said and len(endpoint.requests) == 1


async def test_cancel_during_the_summary_cancels_the_compaction_and_the_turn(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], tmp_path: Path
) -> None:
    pause = Pause()
    endpoint.script(
        answer("One."),
        answer("Two."),
        answer("Three."),
        answer("Four."),
        Reply([*say("SUMMARY "), pause, *say("never"), stop()]),
    )
    driver = driver_for(make_driver)
    session = RecordedSession(tmp_path)
    for n in range(1, 5):
        await session.run(driver, long_prompt(n), client=CompactionClient())
    editor, signal = Editor(), CancelSignal()
    running = asyncio.ensure_future(
        session.run(driver, long_prompt(5), editor=editor, signal=signal, client=CompactionClient())
    )
    await asyncio.wait_for(pause.reached.wait(), 10)
    signal.cancel("user")
    assert await asyncio.wait_for(running, 10) == "cancelled"
    statuses = [u.get("status") for u in compaction_updates(editor) if "status" in u]
    assert statuses == ["in_progress", "cancelled"]
    assert not [r for r in session.recorder.history() if isinstance(r, CompactionRecord)]


# -- the estimate and the past --------------------------------------------------------------


def test_the_budget_leaves_room_for_the_response_and_a_margin() -> None:
    assert request_budget(10000, 1000) == 10000 - 1000 - 500
    assert request_budget(10000, 8192) == 10000 - 5000 - 500  # at most half for the answer
    assert request_budget(10000, None) == 10000 - 2500 - 500


def test_the_estimate_errs_high_for_english_and_uses_reported_counts() -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 100  # about 1000 real tokens
    messages = [{"role": "user", "content": text}]
    assert estimate_tokens(messages) > 1000
    more = [*messages, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "x"}]
    # what the endpoint reported for the first message and its answer stands for them
    assert estimate_request(more, (), Known(messages=1, tokens=1010)) == 1010 + estimate_tokens(
        more[2:]
    )


def test_the_past_starts_after_the_latest_summary() -> None:
    def prompt(n: int) -> UserMessageRecord:
        return UserMessageRecord(content=({"type": "text", "text": f"p{n}"},))  # type: ignore[arg-type]

    call = ToolCallRecord(call_id="c1", name="look", arguments=None)
    history = [
        prompt(1),
        AgentMessageRecord(text="a1"),
        prompt(2),
        call,
        ToolResultRecord(result=interrupted_result("c1")),
        prompt(3),
        CompactionRecord(summary="old", turns=1),
        AgentMessageRecord(text="a3"),
        prompt(4),
        CompactionRecord(summary="new", turns=2),
    ]
    past = past_of(history)
    assert past.summary == "new" and past.covered == 2
    assert [turn[0] for turn in past.turns] == [prompt(3), prompt(4)]
    messages = past.messages(None)
    assert messages[0]["role"] == "user" and "new" in messages[0]["content"]
    assert "p3" in messages[0]["content"]  # the first kept prompt joins the summary


async def test_the_wait_for_a_summary_is_told_as_the_wait_for_an_answer_is(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], tmp_path: Path
) -> None:
    """§2: a client is told the wait for the model while a summary request hangs too."""
    held = Pause()
    endpoint.script(
        answer("One."),
        answer("Two."),
        answer("Three."),
        answer("Four."),
        Reply([*say("SUMMARY: prompts 1-3."), stop()], before=held),
        answer("Five."),
    )
    driver = driver_for(make_driver)
    clock = Clock()
    driver.wait_sleep = clock.sleep
    session = RecordedSession(tmp_path)
    for n in range(1, 5):
        await session.run(driver, long_prompt(n))
    told: list[str] = []
    running = asyncio.ensure_future(
        session.run(driver, long_prompt(5), waiting=lambda text, _first: told.append(text))
    )
    await asyncio.wait_for(held.reached.wait(), 10)
    for _ in range(2):
        assert await asyncio.wait_for(clock.asleep.get(), 10) == 10.0
        clock.tick()
    assert await asyncio.wait_for(clock.asleep.get(), 10) == 10.0
    held.release.set()
    assert await asyncio.wait_for(running, 10) == "end_turn"
    assert told[:2] == ["Waiting for the model… 10 s", "Waiting for the model… 20 s"]
    assert is_summary_request(endpoint.requests[4])
