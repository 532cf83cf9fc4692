"""Editor ``@``-mentions: URIs → paths and line ranges, and what a prompt of mentions does."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_sidecar.agent.console import BadCommand, CallTool, OpenMentions, ShowHelp, parse_command
from acp_sidecar.agent.mentions import Mention, join_words, parse_mention, typed_paths
from acp_sidecar.agent.prompt_line import PromptLine, read_prompt
from acp_sidecar.protocol import (
    EmbeddedResourceContentBlock,
    ResourceLinkContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from acp_sidecar.tools.builtin import builtin_tools


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("file:///w/src/app.py", Mention("file:///w/src/app.py", "/w/src/app.py")),
        ("file:///w/a%20b.txt", Mention("file:///w/a%20b.txt", "/w/a b.txt")),
        ("file://localhost/w/x", Mention("file://localhost/w/x", "/w/x")),
        ("file:///w/x.py#L10:20", Mention("file:///w/x.py#L10:20", "/w/x.py", (10, 20))),
        ("file:///w/x.py#L7", Mention("file:///w/x.py#L7", "/w/x.py", (7, 7))),
        ("file:///w/x.py#L3-L5", Mention("file:///w/x.py#L3-L5", "/w/x.py", (3, 5))),
        ("file:///w/x.py#L9:2", Mention("file:///w/x.py#L9:2", "/w/x.py")),  # backwards
        ("file:///w/x.py#L0", Mention("file:///w/x.py#L0", "/w/x.py")),  # 1-based
        (
            "file:///w/x.py?symbol=main#L1:4",
            Mention("file:///w/x.py?symbol=main#L1:4", "/w/x.py", (1, 4)),
        ),
        ("file:///w/src/", Mention("file:///w/src/", "/w/src", directory=True)),
        ("https://example.com/a", Mention("https://example.com/a")),
        ("zed:///agent/thread/1", Mention("zed:///agent/thread/1")),
        ("file://other-host/x", Mention("file://other-host/x")),
        ("not a uri", Mention("not a uri")),
    ],
)
def test_parse_mention(uri: str, expected: Mention) -> None:
    assert parse_mention(uri) == expected


TOOLS = builtin_tools()


def test_a_prompt_of_mentions_opens_each() -> None:
    file, lines, folder = (
        parse_mention("file:///w/a.py"),
        parse_mention("file:///w/b.py#L10:12"),
        parse_mention("file:///w/src/"),
    )
    line = PromptLine(("  ", file, " ", lines, " ", folder, "\n"))
    assert parse_command(line, TOOLS) == OpenMentions(
        (
            CallTool("read", {"path": "/w/a.py"}),
            CallTool("read", {"path": "/w/b.py", "offset": 10, "limit": 3}),
            CallTool("glob", {"pattern": "*", "path": "/w/src"}),
        )
    )


def test_a_mention_inside_a_command_is_its_path() -> None:
    mention = parse_mention("file:///w/a.py")
    assert parse_command(PromptLine(("/read ", mention)), TOOLS) == CallTool(
        "read", {"path": "/w/a.py"}
    )
    assert parse_command(PromptLine(("look at ", mention)), TOOLS) == ShowHelp()
    assert parse_command(PromptLine((mention, " look")), TOOLS) == ShowHelp()
    assert parse_command(PromptLine(("/write ", mention, " hi there")), TOOLS) == CallTool(
        "write", {"path": "/w/a.py", "content": "hi there"}
    )
    assert parse_command(PromptLine(('/read {"limit": 2}', mention)), TOOLS) == CallTool(
        "read", {"path": "/w/a.py", "limit": 2}
    )
    assert parse_command(PromptLine(("/bash cat ", mention)), TOOLS) == CallTool(
        "bash", {"command": "cat /w/a.py"}
    )


def test_mentions_that_cannot_be_opened_say_why() -> None:
    web = parse_mention("https://example.com/")
    message = "`https://example.com/` is not a local file; only files can be opened here."
    assert parse_command(PromptLine((web,)), TOOLS) == BadCommand(message)
    assert parse_command(PromptLine(("/read ", web)), TOOLS) == BadCommand(message)
    file = parse_mention("file:///w/a.py")
    without_read = [t for t in TOOLS if t.name != "read"]
    assert isinstance(parse_command(PromptLine((file,)), without_read), BadCommand)


@pytest.mark.parametrize(
    ("text", "typed"),
    [
        ("@a.py", ["a.py"]),
        ("/read @src/a.py, then @b.py.", ["src/a.py", "b.py"]),
        ('open @"my notes.md" now', ["my notes.md"]),
        ("(see @docs/)", ["docs/"]),
        ("mail user@example.com", []),
        ("`@a.py` and ``x @b.py``", []),
        ("```\n@a.py\n```\n@b.py", ["b.py"]),
        ("~~~\n@a.py", []),  # an unclosed fence runs to the end
        ("an @ alone, @. and \\@escaped", []),
    ],
)
def test_typed_paths(text: str, typed: list[str]) -> None:
    assert [t.path for t in typed_paths(text)] == typed


def test_blocks_are_joined_as_words() -> None:
    assert join_words(["explain this", "[@a](x)", "", " and", "\n<context>"]) == (
        "explain this [@a](x) and\n<context>"
    )


def test_a_typed_path_and_the_block_for_its_file_are_one_mention(tmp_path: Path) -> None:
    """Toad resolves symlinks in the URI it sends for a typed ``@a.py``."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.py").write_text("x = 1\n")
    (tmp_path / "link").symlink_to(real)
    cwd = str(tmp_path / "link")
    resource = TextResourceContents(uri=(real / "a.py").as_uri(), text="x = 1\n")
    line = read_prompt(
        [TextContentBlock(text="/read @a.py"), EmbeddedResourceContentBlock(resource=resource)],
        cwd,
    )
    [mention] = line.mentions
    assert (mention.source, mention.typed, mention.path) == (
        "embedded",
        "@a.py",
        str(real / "a.py"),
    )
    assert line.text() == f"/read {real / 'a.py'}"
    # Text and a link that would run together are two words; text inside a block is kept.
    link = ResourceLinkContentBlock(name="a.py", uri=(real / "a.py").as_uri())
    assert read_prompt([TextContentBlock(text="/read"), link], cwd).text() == (
        f"/read {real / 'a.py'}"
    )
    line = read_prompt([TextContentBlock(text="(see @a.py) or @nope")], cwd)
    assert line.text() == f"(see {tmp_path / 'link' / 'a.py'}) or @nope"
    assert [m.found for m in line.mentions] == [True, False]
