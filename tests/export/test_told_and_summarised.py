"""What a session told outside the conversation (notices) and its compactions, in both
exports: a notice where it was told, a compaction as "earlier turns summarised" with the
summary the model was sent, collapsed."""

from __future__ import annotations

import io
from pathlib import Path

from markdown_it import MarkdownIt

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.export.html import write_html
from acp_sidecar.export.markdown import write_markdown
from acp_sidecar.export.source import StoredSession
from acp_sidecar.store import CompactionRecord, SessionStore
from tests.export.fragment_dom import assert_inert, parse
from tests.export.sessions import CREATED, CWD, HOSTILE_TEXT

LOOKUP = ToolsProvider(()).registry.get
SUMMARY = "The user asked for a *greeting*; it was written to `hello.py`."


def told_and_summarised(directory: Path, hostile: bool = False) -> Path:
    extra = f" {HOSTILE_TEXT}" if hostile else ""
    store = SessionStore(directory, fsync="never")
    with store.create("told", CWD, mode="ask", created_at=CREATED) as writer:
        writer.notice(f"MCP server 'gone' did not start{extra}\nno such file", "warning")
        writer.user_message([{"type": "text", "text": "first"}])
        writer.agent_text("first answer")
        writer.end_turn("end_turn")
        writer.user_message([{"type": "text", "text": "second"}])
        writer.append(CompactionRecord(summary=SUMMARY + extra, turns=1))
        writer.agent_text("second answer")
        writer.end_turn("end_turn")
    return store.path_of("told")


def _export(path: Path, write: object, **flags: bool) -> str:
    out = io.StringIO()
    with StoredSession(path, LOOKUP, **flags) as session:
        write(session, out, generator="test")  # type: ignore[operator]
    return out.getvalue()


def test_the_markdown_shows_the_notice_and_the_summarised_turns(tmp_path: Path) -> None:
    markdown = _export(told_and_summarised(tmp_path), write_markdown)
    body = markdown.split("\n---\n", 1)[1]
    notice = body.index("MCP server 'gone' did not start")
    assert notice < body.index("first answer")
    assert "no such file" in body[notice:]
    summarised = body.index("<details><summary>Earlier turns summarised</summary>")
    assert body.index("**User**\n\nsecond") < summarised < body.index("second answer")
    assert SUMMARY in body[summarised:]  # the summary's own Markdown, kept


def test_the_page_shows_the_notice_and_the_summarised_turns(tmp_path: Path) -> None:
    root = parse(_export(told_and_summarised(tmp_path), write_html)).one("main")
    assert_inert(root)
    [notice] = root.all("div.notice")
    assert "notice-warning" in notice.attrs["class"]
    assert notice.text().startswith("MCP server 'gone' did not start")
    assert "no such file" in notice.text()
    [compaction] = root.all("details.compaction")
    assert "open" not in compaction.attrs
    assert compaction.one("summary").text() == "Earlier turns summarised"
    assert compaction.one("em").text() == "greeting"  # the summary is drawn as Markdown
    entries = [e.attrs["class"] for e in root.all("div.entry")]
    assert entries.index("entry entry-notice") < entries.index("entry entry-compaction")


def test_without_the_capabilities_the_export_shows_what_such_a_client_saw(tmp_path: Path) -> None:
    markdown = _export(
        told_and_summarised(tmp_path), write_markdown, notices=False, compaction=False
    )
    assert "Earlier turns summarised" not in markdown
    assert "**Agent**\n\nMCP server 'gone' did not start" in markdown


def test_hostile_notices_and_summaries_stay_inert(tmp_path: Path) -> None:
    path = told_and_summarised(tmp_path, hostile=True)
    assert_inert(parse(_export(path, write_html)).one("main"))
    tokens = MarkdownIt("commonmark", {"html": True}).parse(_export(path, write_markdown))
    inline = [c for t in tokens for c in (t.children or ()) if c.type == "html_inline"]
    blocks = [t.content for t in tokens if t.type == "html_block"]
    assert all(c.content in ("<sub>", "</sub>") for c in inline), inline
    assert all("<script" not in b and "<img" not in b for b in blocks), blocks
