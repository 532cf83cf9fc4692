"""Cases a review found: each was a real defect of the export, kept here so it stays fixed."""

from __future__ import annotations

import io
import os
import stat
import threading
from html.parser import HTMLParser
from pathlib import Path

from acp_sidecar.export.cards import card_html, message_html
from acp_sidecar.export.clip import MESSAGE_HEAD_LINES, MESSAGE_TAIL_LINES, clip_message
from acp_sidecar.export.command import write_export
from acp_sidecar.export.gfm_cards import card_markdown
from acp_sidecar.export.highlight import diff_html
from acp_sidecar.export.markdown import write_markdown
from acp_sidecar.export.markup import markdown_html
from acp_sidecar.render.fold import CardState, apply_tool_update
from tests.export.test_documents import GENERATOR, LOOKUP, RECORDED

from acp_sidecar.export.source import StoredSession  # isort: skip


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Tags:
    parser = _Tags()
    parser.feed(html)
    return parser


def test_control_characters_inside_attributes_do_not_end_them() -> None:
    for source in ('[x](http://a "t\x01 y")', "```py\x01\nprint(1)\n```"):
        parsed = _parse(markdown_html(source))
        assert "span" not in [tag for tag, _ in parsed.tags]
        assert "nofollow" not in "".join(parsed.text) and "class=" not in "".join(parsed.text)
    parsed = _parse(markdown_html('[x](http://a "t\x01 y")'))
    (link,) = [attrs for tag, attrs in parsed.tags if tag == "a"]
    assert link["title"] == "t^A y" and link["rel"] == "nofollow noopener noreferrer"


def test_a_prompt_image_of_whitespace_is_refused_at_once() -> None:
    # The old pattern backtracked quadratically on this (hours for a megabyte); the suite's
    # timeout catches a return of it.
    block = {"type": "image", "mimeType": "image/png", "data": "\n" * 200_000 + "!"}
    assert "<img" not in message_html("user", [block])
    good = {"type": "image", "mimeType": "image/png", "data": "iVBO\nRw0K\n"}
    assert 'src="data:image/png;base64,iVBORw0K"' in message_html("user", [good])


def test_a_card_title_is_the_title_the_editor_showed() -> None:
    card = apply_tool_update(
        CardState("c1"), {"title": "cp /srv/app/config.yml /app/config.yml", "status": "completed"}
    )
    assert "cp /srv/app/config.yml /app/config.yml" in card_html(card, "/app")


def test_diff_lines_are_counted_at_newlines_only() -> None:
    item = {"type": "diff", "path": "/w/f.txt", "oldText": None, "newText": "a\x0c\nb\nc\u2028d\n"}
    rows = [attrs.get("class") for tag, attrs in _parse(diff_html(item, "/w")).tags if tag == "tr"]
    assert rows.count("add") == 3


def test_terminal_output_is_clipped_before_it_is_decoded(monkeypatch: object) -> None:
    import acp_sidecar.export.gfm_cards as gfm

    seen: list[int] = []
    original = gfm.terminal_text

    def counting(output: str) -> object:
        seen.append(len(output))
        return original(output)

    monkeypatch.setattr(gfm, "terminal_text", counting)  # type: ignore[attr-defined]
    output = "".join(f"\x1b[32mline {n}\x1b[0m\n" for n in range(100_000))
    card = apply_tool_update(
        CardState("c1"),
        {
            "title": "noisy",
            "status": "completed",
            "content": [{"type": "terminal", "terminalId": "t"}],
            "_meta": {
                "terminal_output": {"terminal_id": "t", "data": output},
                "terminal_exit": {"terminal_id": "t", "exit_code": 0},
            },
        },
    )
    markdown = card_markdown(card, None)
    assert "line 0\n" in markdown and "line 99999\n" in markdown and "\x1b" not in markdown
    assert "99,700 lines left out" in markdown.replace("99700", "99,700")
    assert sum(seen) < len(output) // 100


def test_a_huge_message_keeps_its_head_and_tail_and_says_what_it_left_out() -> None:
    lines = [f"line {n}" for n in range(50_000)]
    clipped = clip_message("\n".join(lines)).split("\n")
    assert clipped[:2] == ["line 0", "line 1"] and clipped[-1] == "line 49999"
    left_out = 50_000 - MESSAGE_HEAD_LINES - MESSAGE_TAIL_LINES
    assert f"*… {left_out:,} lines left out …*" in clipped
    assert len(clip_message("x" * 200_000)) < 60_000
    assert clip_message("short\n\nmessage") == "short\n\nmessage"


def test_a_prompt_block_without_its_text_does_not_stop_an_export(tmp_path: Path) -> None:
    log = tmp_path / "odd.jsonl"
    log.write_text(
        RECORDED.read_text(encoding="utf-8").split("\n", 1)[0]
        + '\n{"v":2,"type":"user_message","content":[{"type":"text"}]}\n'
    )
    out = io.StringIO()
    with StoredSession(log, LOOKUP) as session:
        write_markdown(session, out, generator=GENERATOR)
    assert "0 prompts" in out.getvalue()  # the block could not be read: skipped, not fatal


def test_a_link_is_followed_and_a_private_file_stays_private(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "link.md"
    link.symlink_to(real)
    with StoredSession(RECORDED, LOOKUP) as session:
        written = write_export(session, "markdown", str(link))
    assert written == real and link.is_symlink()
    assert real.read_text().startswith("# ") and stat.S_IMODE(real.stat().st_mode) == 0o600


def test_a_pipe_is_written_into_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    with StoredSession(RECORDED, LOOKUP) as session:
        write_export(session, "markdown", str(fifo))
    reader.join(timeout=30)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert received and received[0].startswith(b"# ")
