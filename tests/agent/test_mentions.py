"""Editor ``@``-mentions: URIs → paths and line ranges, and what a prompt of mentions does."""

from __future__ import annotations

import pytest

from acp_sidecar.agent.console import BadCommand, CallTool, OpenMentions, parse_command
from acp_sidecar.agent.mentions import Mention, parse_mention
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
    text = " ".join(m.shown for m in (file, lines, folder))
    assert parse_command(f"  {text}\n", TOOLS, [file, lines, folder]) == OpenMentions(
        (
            CallTool("read", {"path": "/w/a.py"}),
            CallTool("read", {"path": "/w/b.py", "offset": 10, "limit": 3}),
            CallTool("glob", {"pattern": "*", "path": "/w/src"}),
        )
    )


def test_a_mention_inside_a_command_is_its_path() -> None:
    mention = parse_mention("file:///w/a.py")
    assert parse_command("/read /w/a.py", TOOLS, [mention]) == CallTool("read", {"path": "/w/a.py"})
    assert parse_command("look at /w/a.py", TOOLS, [mention]) != OpenMentions(())


def test_mentions_that_cannot_be_opened_say_why() -> None:
    web = parse_mention("https://example.com/")
    assert parse_command(web.shown, TOOLS, [web]) == BadCommand(
        "`https://example.com/` is not a local file; only files can be opened here."
    )
    file = parse_mention("file:///w/a.py")
    without_read = [t for t in TOOLS if t.name != "read"]
    assert isinstance(parse_command(file.shown, without_read, [file]), BadCommand)
