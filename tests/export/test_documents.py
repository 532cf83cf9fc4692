"""The two documents of a recorded session: golden Markdown, the page's frame, atomic writes."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.export.command import default_output, write_export
from acp_sidecar.export.html import CSP, write_html
from acp_sidecar.export.markdown import write_markdown
from acp_sidecar.export.source import StoredSession, Timed

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "export"
RECORDED = FIXTURES / "recorded.jsonl"
GOLDEN = FIXTURES / "recorded.md"
GENERATOR = "acp-sidecar (tests)"
LOOKUP = ToolsProvider(()).registry.get
REGENERATE = os.environ.get("ACP_SIDECAR_REGENERATE_GOLDEN") == "1"


def _export(write: object) -> str:
    out = io.StringIO()
    with StoredSession(RECORDED, LOOKUP) as session:
        write(session, out, generator=GENERATOR)  # type: ignore[operator]
    return out.getvalue()


def test_the_recorded_session_exports_to_its_golden_markdown() -> None:
    """Re-record the fixture or change the format, then regenerate with
    ``ACP_SIDECAR_REGENERATE_GOLDEN=1`` and read the diff before committing it."""
    markdown = _export(write_markdown)
    if REGENERATE:
        GOLDEN.write_text(markdown, encoding="utf-8")
    assert markdown == GOLDEN.read_text(encoding="utf-8")


def test_the_markdown_holds_no_raw_html_but_ours() -> None:
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(_export(write_markdown))
    ours = ("<sub>", "</sub>", "<details>", "<summary>", "</summary>", "</details>")
    html: list[str] = []
    for token in tokens:
        if token.type == "html_block":
            html.append(token.content)
        for child in token.children or ():
            if child.type == "html_inline":
                html.append(child.content)
    leftover = [h for h in html if not all(part in ours for part in _tags(h))]
    assert leftover == []
    opened = sum(h.count("<details>") for h in html)
    assert opened == sum(h.count("</details>") for h in html) > 0


def _tags(html: str) -> Iterator[str]:
    import re

    yield from re.findall(r"<[^>]*>", html)


class _Outline(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cards: list[tuple[str, str]] = []
        self.meta: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = dict(attrs)
        if tag == "section" and found.get("class") == "card":
            self.cards.append((found["data-call-id"] or "", found["data-status"] or ""))
        if tag == "meta" and "http-equiv" in found:
            self.meta[found["http-equiv"] or ""] = found.get("content") or ""


def test_the_page_is_one_document_with_a_card_per_call_and_no_script() -> None:
    page = _export(write_html)
    outline = _Outline()
    outline.feed(page)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "script" not in outline.tags and "link" not in outline.tags
    assert outline.meta["Content-Security-Policy"] == CSP
    statuses = [status for _, status in outline.cards]
    assert len(statuses) == 11 and statuses.count("failed") == 3
    assert GENERATOR in page and "<code>test-model</code>, <code>big-model</code>" in page


class _Broken(StoredSession):
    def entries(self) -> Iterator[Timed]:
        yield from list(super().entries())[:5]
        raise OSError("the disk went away")


@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_a_failed_export_leaves_the_earlier_file_and_nothing_else(tmp_path: Path, fmt: str) -> None:
    target = tmp_path / "shared.out"
    target.write_text("the earlier export")
    with _Broken(RECORDED, LOOKUP) as session, pytest.raises(OSError, match="went away"):
        write_export(session, fmt, str(target))  # type: ignore[arg-type]
    assert target.read_text() == "the earlier export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.out"]


def test_an_export_gets_the_users_usual_permissions_and_a_directory_takes_the_default_name(
    tmp_path: Path,
) -> None:
    old = os.umask(0o022)
    try:
        with StoredSession(RECORDED, LOOKUP) as session:
            written = write_export(session, "markdown", str(tmp_path))
    finally:
        os.umask(old)
    assert written == tmp_path / default_output(session.heading.session_id, "markdown")
    assert written is not None and written.stat().st_mode & 0o777 == 0o644


def test_a_default_name_cannot_leave_the_directory() -> None:
    assert default_output("../../etc/passwd", "html") == Path("_.._etc_passwd.html")
    assert default_output("...", "markdown") == Path("session.md")
