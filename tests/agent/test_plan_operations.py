"""Plan operations (``clientCapabilities.plan``): a client that opted in gets ``plan_update``
with a ``planId`` (the checklist, or a Markdown plan with an optional absolute ``path``) and
``plan_removed``; every other client keeps the legacy ``plan`` update as before.

Driven on the raw wire (``tests.server.wire``) with the sidecar in process (the console, where
``/plan {json}`` calls the tool). Every message is validated: plan operations against the
unstable schema the TS SDK 2.4.0 ships (vendored beside the stable one), everything else
against the stable one. Where the stabilized page and the unstable schema differ
(the page's Markdown ``path``), the test follows the page and pins the difference.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.acp_schema import load_schema, validate_agent_message, validate_instance
from tests.in_process import cli_server, kept_process_state
from tests.protocol.samples import PLAN_OPERATIONS
from tests.sdk import command
from tests.server.wire import WireClient, served

PLAN_OPERATION_TAGS = frozenset({"plan_update", "plan_removed"})
ENTRIES = [
    {"content": "Read the failing test", "priority": "high", "status": "completed"},
    {"content": "Fix the parser", "priority": "high", "status": "in_progress"},
]
DOCUMENT = "# Plan\n\n1. Read the parser.\n2. Fix the off-by-one.\n"


def unstable_schema() -> dict[str, Any]:
    """The vendored unstable schema (``tests/fixtures/acp/v1/schema.unstable.json``)."""
    return load_schema(unstable=True)


def validate_unstable(instance: Any, def_name: str) -> None:
    """Validate ``instance`` against one ``$defs`` type of the unstable schema."""
    validate_instance(instance, def_name, unstable=True)


def check_message(message: Any) -> None:
    """A plan operation against the unstable schema; anything else against the stable one."""
    update = message.get("params", {}).get("update", {}) if isinstance(message, dict) else {}
    if message.get("method") == "session/update" and update.get("sessionUpdate") in (
        PLAN_OPERATION_TAGS
    ):
        assert message["jsonrpc"] == "2.0" and set(message) == {"jsonrpc", "method", "params"}
        validate_unstable(message["params"], "SessionNotification")
        return
    validate_agent_message(message)


def _checked(client: WireClient) -> WireClient:
    def check(message: Any) -> None:
        assert isinstance(message, dict)
        if "id" in message and "method" not in message:
            method = client.sent_methods.get(message["id"])
            validate_agent_message(message, request_method=method)
        else:
            check_message(message)

    client.check = check  # type: ignore[method-assign]
    return client


async def _plan(client: WireClient, session: str, **arguments: Any) -> list[dict[str, Any]]:
    """Run ``/plan {arguments}``; the updates it sent (usage and titles aside)."""
    before = len(client.updates)
    response = await client.next_response(
        await client.start_prompt(session, command("plan", **arguments))
    )
    assert response["result"]["stopReason"] == "end_turn", response
    return [
        u["params"]["update"]
        for u in client.updates[before:]
        if u["params"]["update"]["sessionUpdate"] not in ("usage_update", "session_info_update")
    ]


def _card(updates: list[dict[str, Any]]) -> dict[str, Any]:
    """The last ``tool_call_update``: the card's end."""
    return [u for u in updates if u["sessionUpdate"] == "tool_call_update"][-1]


def _plans(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] in PLAN_OPERATION_TAGS | {"plan"}]


def test_the_unstable_schema_accepts_the_plan_operation_samples() -> None:
    for sample in PLAN_OPERATIONS:
        from acp_sidecar.protocol import to_wire

        validate_unstable(to_wire(sample.value), "SessionNotification")


def test_the_page_s_markdown_path_is_not_in_the_unstable_schema() -> None:
    """The pinned difference: the stabilized v1 page gives a Markdown plan an optional absolute
    ``path``; the unstable schema's ``PlanMarkdown`` is ``{planId, content}`` only (it lets
    other keys through), and it still has the ``file`` plan (``{planId, uri}``) the page
    dropped. The sidecar follows the page: ``path``, never ``file``. When a vendored schema
    gains ``path`` (or loses ``file``), this fails and the pin goes."""
    defs = unstable_schema()["$defs"]
    assert set(defs["PlanMarkdown"]["properties"]) == {"planId", "content", "_meta"}
    assert defs["PlanMarkdown"].get("additionalProperties") is not False
    assert set(defs["PlanFile"]["required"]) == {"planId", "uri"}
    tags = [v["properties"]["type"]["const"] for v in defs["PlanUpdateContent"]["oneOf"]]
    assert tags == ["items", "file", "markdown"]
    with_path = {
        "sessionUpdate": "plan_update",
        "plan": {"type": "markdown", "planId": "markdown", "content": "# P", "path": "/w/P.md"},
    }
    validate_unstable(with_path, "SessionUpdate")


async def test_an_opted_in_client_gets_plan_update_and_plan_removed(tmp_path: Path) -> None:
    with kept_process_state():
        async with served(cli_server("--store", str(tmp_path / ".store"))) as (raw, _server):
            client = _checked(raw)
            await client.initialize(plan={})
            session = await client.new_session(str(tmp_path))

            updates = await _plan(client, session, entries=ENTRIES)
            assert [u["sessionUpdate"] for u in updates][-2:] == ["tool_call_update", "plan_update"]
            assert updates[-2]["content"] == []
            checklist = {"type": "items", "planId": "checklist", "entries": ENTRIES}
            assert updates[-1] == {"sessionUpdate": "plan_update", "plan": checklist}

            path = str(tmp_path / "PLAN.md")
            updates = await _plan(client, session, markdown=DOCUMENT, path=path)
            assert updates[-2]["content"] == [] and updates[-2]["status"] == "completed"
            document = {"type": "markdown", "planId": "markdown", "content": DOCUMENT}
            assert _plans(updates) == [
                {"sessionUpdate": "plan_update", "plan": {**document, "path": path}}
            ]
            # The same id again replaces it (no path now: the plan has no file).
            updates = await _plan(client, session, markdown="# Plan, again\n")
            assert _plans(updates) == [
                {"sessionUpdate": "plan_update", "plan": {**document, "content": "# Plan, again\n"}}
            ]
            assert _plans(await _plan(client, session, entries=[])) == [
                {"sessionUpdate": "plan_removed", "planId": "checklist"}
            ]
            assert _plans(await _plan(client, session, markdown="")) == [
                {"sessionUpdate": "plan_removed", "planId": "markdown"}
            ]
            assert not any(u["params"]["update"]["sessionUpdate"] == "plan" for u in client.updates)


async def test_other_clients_keep_the_legacy_plan_and_see_a_markdown_plan_in_its_card(
    tmp_path: Path,
) -> None:
    with kept_process_state():
        async with served(cli_server("--store", str(tmp_path / ".store"))) as (client, _server):
            await client.initialize()  # stable-schema checks only: no plan operation may come
            session = await client.new_session(str(tmp_path))
            updates = await _plan(client, session, entries=ENTRIES)
            assert _plans(updates) == [{"sessionUpdate": "plan", "entries": ENTRIES}]
            assert updates[-2]["content"] == []

            updates = await _plan(client, session, markdown=DOCUMENT)
            assert _plans(updates) == []
            card = updates[-1]
            assert card["sessionUpdate"] == "tool_call_update" and card["status"] == "completed"
            assert card["content"] == [
                {"type": "content", "content": {"type": "text", "text": DOCUMENT}}
            ]
            assert card["title"] == "Plan: Markdown plan, 4 lines"
            assert _plans(await _plan(client, session, entries=[])) == [
                {"sessionUpdate": "plan", "entries": []}
            ]


@pytest.mark.parametrize("path", ["PLAN.md", "./docs/plan.md"])
async def test_a_markdown_plan_s_path_must_be_absolute(tmp_path: Path, path: str) -> None:
    with kept_process_state():
        async with served(cli_server("--store", str(tmp_path / ".store"))) as (raw, _server):
            client = _checked(raw)
            await client.initialize(plan={})
            session = await client.new_session(str(tmp_path))
            updates = await _plan(client, session, markdown=DOCUMENT, path=path)
            assert _plans(updates) == []
            assert _card(updates)["status"] == "failed"
            assert f"/path: must be absolute, got {path!r}" in json.dumps(_card(updates)["content"])
            both = await _plan(client, session, markdown=DOCUMENT, entries=ENTRIES)
            assert _plans(both) == [] and _card(both)["status"] == "failed"
            assert "give either entries" in json.dumps(_card(both)["content"])


async def test_a_read_only_session_plans_without_being_asked(tmp_path: Path) -> None:
    """No new mode: the plan tool is read-only, so ``read-only`` lets it run, unasked."""
    with kept_process_state():
        async with served(cli_server("--store", str(tmp_path / ".store"))) as (raw, _server):
            client = _checked(raw)
            await client.initialize(plan={})
            session = await client.new_session(str(tmp_path))
            await client.result("session/set_mode", {"sessionId": session, "modeId": "read-only"})
            updates = await _plan(client, session, markdown=DOCUMENT, path=str(tmp_path / "P.md"))
            assert [u["sessionUpdate"] for u in _plans(updates)] == ["plan_update"]
            assert client.agent_requests == []  # no permission dialog


async def test_plans_replay_on_load_as_they_were_sent(tmp_path: Path) -> None:
    store = str(tmp_path / ".store")
    live: dict[bool, list[dict[str, Any]]] = {}
    with kept_process_state():
        async with served(cli_server("--store", store)) as (raw, _server):
            client = _checked(raw)
            await client.initialize(plan={})
            session = await client.new_session(str(tmp_path))
            sent = await _plan(client, session, entries=ENTRIES)
            sent += await _plan(client, session, markdown=DOCUMENT, path=str(tmp_path / "P.md"))
            sent += await _plan(client, session, markdown="")
            live[True] = [u for u in sent if u.get("status") != "in_progress"]
        for opted_in in (True, False):
            async with served(cli_server("--store", store)) as (raw, _server):
                client = _checked(raw)
                await client.initialize(**({"plan": {}} if opted_in else {}))
                load = {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
                await client.result("session/load", load)
                replayed = [
                    u["params"]["update"]
                    for u in client.updates
                    if u["params"]["update"]["sessionUpdate"]
                    in ("tool_call_update", "plan", *PLAN_OPERATION_TAGS)
                ]
            if opted_in:
                kept = [
                    u
                    for u in live[True]
                    if u["sessionUpdate"] in ("tool_call_update", *PLAN_OPERATION_TAGS)
                ]
                assert replayed == kept
            else:
                assert [u["sessionUpdate"] for u in _plans(replayed)] == ["plan"]
                shown = [u["content"] for u in replayed if u["sessionUpdate"] == "tool_call_update"]
                assert shown[1] == [
                    {"type": "content", "content": {"type": "text", "text": DOCUMENT}}
                ]


async def test_the_export_shows_the_checklist_and_the_markdown_plan(tmp_path: Path) -> None:
    """The log keeps the tool's values whatever the client was, so a session a legacy client
    drove exports both plans as plans (HTML and Markdown), the Markdown one with its file."""
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.export.html import write_html
    from acp_sidecar.export.markdown import write_markdown
    from acp_sidecar.export.source import StoredSession
    from acp_sidecar.store import SessionStore

    store = tmp_path / ".store"
    path = str(tmp_path / "PLAN.md")
    with kept_process_state():
        async with served(cli_server("--store", str(store))) as (client, _server):
            await client.initialize()
            session = await client.new_session(str(tmp_path))
            await _plan(client, session, entries=ENTRIES)
            await _plan(client, session, markdown=DOCUMENT, path=path)
    log = SessionStore(store, fsync="never").path_of(session)
    lookup = ToolsProvider(()).registry.get
    pages = {}
    for name, write in (("html", write_html), ("md", write_markdown)):
        out = io.StringIO()
        with StoredSession(log, lookup) as stored:
            write(stored, out, generator="test")
        pages[name] = out.getvalue()
    html = pages["html"]
    assert '<section class="plan"><h2>Plan</h2><ol><li class="plan-completed">' in html
    start = html.index('<section class="plan plan-markdown">')
    section = html[start : html.index("</section>", start)]
    assert f'<p class="plan-path"><code>{path}</code></p>' in section
    assert "<h1>Plan</h1>" in section and "<li>Fix the off-by-one.</li>" in section
    markdown = pages["md"]
    assert "- [x] Read the failing test\n- [ ] Fix the parser *(in progress)*\n" in markdown
    assert f"**Plan** (`{path}`)\n\n# Plan\n\n1. Read the parser.\n" in markdown
    # Once in the prompt that sent it (the console's ``/plan``), once as the plan; not in its card.
    assert markdown.count("Fix the off-by-one.") == 2


def test_the_plan_operation_types_carry_meta_as_the_unstable_schema_does() -> None:
    """What ``tests/protocol/test_schema.py`` checks for stable types, for these four."""
    import attrs

    from acp_sidecar import protocol as p

    defs = unstable_schema()["$defs"]
    for cls in (p.PlanItems, p.PlanMarkdown, p.PlanUpdate, p.PlanRemoved):
        has_meta = any(a.name == "meta" for a in attrs.fields(cls))
        assert has_meta and "_meta" in defs[cls.__name__]["properties"], cls
