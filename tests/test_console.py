"""The commands' console: in a pipe, nothing wrapped and nothing padded to a width."""

from __future__ import annotations

import io

from rich.markdown import Markdown
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from acp_sidecar.console import output_console

LONG = "a sentence that goes on past any width a console could guess, " * 3


def test_in_a_pipe_lines_are_neither_wrapped_nor_padded() -> None:
    out = io.StringIO()
    console = output_console(out)
    console.print(Text(LONG))
    console.print(Padding(Text("short\nlonger line here"), (0, 0, 0, 2)))
    console.print(Markdown("A paragraph.\n\n- item one\n- item two\n\n```py\nx = 1\n```"))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=3, justify="right")
    grid.add_column()
    grid.add_row("✓", "name: detail")
    console.print(grid)
    lines = out.getvalue().split("\n")
    assert LONG.rstrip() in lines  # one line, as long as it is
    assert [line for line in lines if line != line.rstrip(" ")] == []
    assert "  short" in lines and "  longer line here" in lines
    assert "  ✓ name: detail" in lines


def test_a_line_not_yet_ended_keeps_its_spaces_until_it_ends() -> None:
    out = io.StringIO()
    console = output_console(out)
    console.print("API key: ", end="")
    assert out.getvalue() == "API key: "  # a prompt is written as it is, on flush
    console.print("typed   ")
    assert out.getvalue() == "API key: typed\n"


def test_in_a_pipe_framed_output_is_wrapped_between_words_never_cut() -> None:
    out = io.StringIO()
    output_console(out, frames=True, width=40).print(Padding(Text(LONG), (0, 0, 0, 2)))
    lines = out.getvalue().splitlines()
    assert " ".join(line.strip() for line in lines) == LONG.strip()  # nothing cut, no word split
    assert all(len(line) <= 40 and line == line.rstrip(" ") for line in lines)


def test_a_long_text_reaches_a_pipe_a_line_at_a_time() -> None:
    # One large write that a pipe's leaving reader cuts short can pass for a whole one in
    # CPython (`replay | head` then ended 0); line-sized writes each fail as they should.
    class Recording(io.StringIO):
        writes: list[str] = []

        def write(self, text: str) -> int:
            self.writes.append(text)
            return super().write(text)

    target = Recording()
    console = output_console(target)
    console.print("\n".join(f"line {n}  " for n in range(300)))
    assert len(target.writes) == 300 and all(w.endswith("\n") for w in target.writes)
    assert target.getvalue().splitlines()[:2] == ["line 0", "line 1"]
