"""Golden tests: every card × capability × status, mapped to ACP and checked by the schema.

Regenerate the golden files after an intended change with ``ACP_SIDECAR_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar.bridge.cards import (
    call_start,
    console_block,
    output_progress,
    result_update,
    snapshot_progress,
    status_update,
    text_progress,
)
from acp_sidecar.bridge.context import CardContext, absolute, relative_title, shown_path
from acp_sidecar.protocol import SessionNotification, to_wire
from acp_sidecar.tools import (
    DiffCallView,
    DiffResultView,
    FileDiff,
    FileLocation,
    GenericCallView,
    GenericResultView,
    ImageContent,
    TerminalCallView,
    TerminalResultView,
    TextContent,
    ToolResult,
)
from tests.acp_schema import validate_agent_message

GOLDEN = Path(__file__).parent / "golden"
CWD = "/work/project"

CALLS: dict[str, Any] = {
    "generic": GenericCallView(
        card="generic",
        title="Read /work/project/src/app.py",
        kind="read",
        raw_input={"path": "src/app.py", "offset": 10},
        content=[TextContent("reading"), ImageContent("iVBORw0KGgo=", "image/png")],
        locations=[FileLocation("src/app.py", 10)],
    ),
    "generic_minimal": GenericCallView(card="generic", title="ping"),
    "diff": DiffCallView(
        card="diff",
        title="Edit /work/project/src/app.py",
        diffs=[FileDiff("src/app.py", "a = 1\n", "a = 2\n")],
    ),
    "diff_new_file": DiffCallView(
        card="diff",
        title="Write /work/project/new.txt",
        diffs=[FileDiff("/work/project/new.txt", None, "hello\n")],
        locations=[FileLocation("/work/project/new.txt")],
    ),
    "terminal": TerminalCallView(
        card="terminal", title="pytest -q", description="Run the tests", cwd="sub"
    ),
    "terminal_bare": TerminalCallView(card="terminal", title="ls"),
}

RESULTS: dict[str, Any] = {
    "none": None,
    "generic": GenericResultView(card="generic", title="Read /work/project/src/app.py (3 lines)"),
    "generic_content": GenericResultView(card="generic", content=[TextContent("shown instead")]),
    "diff": DiffResultView(
        card="diff",
        title="Edited /work/project/src/app.py",
        diffs=[FileDiff("src/app.py", "a = 1\n", "a = 2\n")],
    ),
    "terminal_exit": TerminalResultView(card="terminal", output="ok\n```\nfenced\n", exit_code=0),
    "terminal_signal": TerminalResultView(card="terminal", output="partial", signal="SIGTERM"),
}

COMPATIBLE = {
    "generic": ["none", "generic", "generic_content", "terminal_exit"],
    "generic_minimal": ["none", "generic"],
    "diff": ["none", "diff", "generic"],
    "diff_new_file": ["diff"],
    "terminal": ["none", "terminal_exit", "terminal_signal", "generic"],
    "terminal_bare": ["terminal_exit"],
}

CASES = [
    (call, result, capable, is_error)
    for call, results in COMPATIBLE.items()
    for result in results
    for capable in (True, False)
    for is_error in (False, True)
]


def notification(update: Any) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": to_wire(SessionNotification(session_id="s1", update=update)),
    }
    validate_agent_message(message)
    return message["params"]["update"]  # type: ignore[no-any-return]


def check_golden(name: str, data: Any) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("ACP_SIDECAR_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"missing golden file {path.name}; run with ACP_SIDECAR_UPDATE_GOLDEN=1"
    assert json.loads(path.read_text()) == json.loads(text), name


@pytest.mark.parametrize(("call", "result", "capable", "is_error"), CASES)
def test_card_golden(call: str, result: str, capable: bool, is_error: bool) -> None:
    ctx = CardContext(cwd=CWD, terminal_output=capable)
    outcome = ToolResult(content=(TextContent("model-facing text"),), is_error=is_error)
    sequence = [
        notification(call_start("call-1", CALLS[call], ctx)),
        notification(status_update("call-1", "in_progress")),
        notification(result_update("call-1", CALLS[call], RESULTS[result], outcome, ctx)),
    ]
    capability = "capable" if capable else "plain"
    status = "failed" if is_error else "completed"
    check_golden(f"{call}__{result}__{capability}__{status}", sequence)
    assert sequence[0]["status"] == "pending"
    view = RESULTS[result]
    command_failed = isinstance(view, TerminalResultView) and (
        view.signal is not None or view.exit_code not in (None, 0)
    )
    assert sequence[2]["status"] == ("failed" if command_failed else status)


def test_terminal_cards_follow_the_zed_meta_convention() -> None:
    ctx = CardContext(cwd=CWD, terminal_output=True)
    start = notification(call_start("c", CALLS["terminal"], ctx))
    assert start["kind"] == "execute"
    assert start["content"] == [
        {"type": "content", "content": {"type": "text", "text": "Run the tests"}},
        {"type": "terminal", "terminalId": "c"},
    ]
    assert start["_meta"] == {"terminal_info": {"terminal_id": "c", "cwd": f"{CWD}/sub"}}
    outcome = ToolResult(content=(TextContent("x"),), is_error=False)
    done = notification(
        result_update("c", CALLS["terminal"], RESULTS["terminal_exit"], outcome, ctx, streamed=3)
    )
    assert "content" not in done  # content would replace (remove) the terminal
    assert done["_meta"] == {
        "terminal_output": {"terminal_id": "c", "data": "```\nfenced\n"},
        "terminal_exit": {"terminal_id": "c", "exit_code": 0},
    }


@pytest.mark.parametrize(
    ("view_cwd", "expected"), [(None, CWD), ("/elsewhere", "/elsewhere"), ("a/../b", f"{CWD}/b")]
)
def test_terminal_cwd_resolution(view_cwd: str | None, expected: str) -> None:
    ctx = CardContext(cwd=CWD, terminal_output=True)
    view = TerminalCallView(card="terminal", title="x", cwd=view_cwd)
    assert call_start("c", view, ctx).meta == {
        "terminal_info": {"terminal_id": "c", "cwd": expected}
    }


def test_the_orphan_guard_renders_a_terminal_result_of_a_non_terminal_call_as_generic() -> None:
    ctx = CardContext(cwd=CWD, terminal_output=True)
    outcome = ToolResult(content=(), is_error=False)
    update = notification(
        result_update("c", CALLS["generic"], RESULTS["terminal_exit"], outcome, ctx)
    )
    assert "_meta" not in update
    assert update["content"][0]["content"]["text"].startswith("````console\n")


def test_diff_paths_are_absolute_and_old_text_null_for_new_files() -> None:
    ctx = CardContext(cwd=CWD)
    start = notification(call_start("c", CALLS["diff_new_file"], ctx))
    assert start["title"] == "Write new.txt"
    assert start["content"] == [
        {"type": "diff", "path": f"{CWD}/new.txt", "oldText": None, "newText": "hello\n"}
    ]
    assert start["locations"] == [{"path": f"{CWD}/new.txt"}]


@pytest.mark.parametrize(
    ("output", "fence"),
    [("plain", "```"), ("has ``` inside", "````"), ("has ````` five", "``````"), ("", "```")],
)
def test_console_fences_are_longer_than_any_backtick_run(output: str, fence: str) -> None:
    block = console_block(output, exit_code=2)
    assert block.startswith(f"{fence}console\n")
    assert block.endswith(f"\n{fence}\nExit code: 2")
    assert console_block("x", signal="SIGKILL").endswith("Terminated by signal SIGKILL")
    assert console_block("x\n") == "```console\nx\n```"


def test_progress_updates_validate() -> None:
    ctx = CardContext(cwd=CWD, terminal_output=True)
    for update in (
        output_progress("c", "chunk"),
        text_progress("c", CALLS["terminal"], "working", ctx),
        text_progress("c", CALLS["generic"], "working", ctx),
        snapshot_progress("c", CALLS["terminal"], "tail", 1000),
    ):
        notification(update)
    kept = notification(text_progress("c", CALLS["terminal"], "working", ctx))
    assert kept["content"][-1] == {"type": "terminal", "terminalId": "c"}


def test_paths_in_titles_are_shown_relative_inside_the_workspace() -> None:
    assert shown_path("/work/project/a/b.py", CWD) == "a/b.py"
    assert shown_path("/work/projectile/x", CWD) == "/work/projectile/x"
    assert shown_path("/etc/passwd", CWD) == "/etc/passwd"
    assert relative_title("Edit /work/project/a.py", ["a.py"], CWD) == "Edit a.py"
    assert relative_title("Edit /etc/hosts", ["/etc/hosts"], CWD) == "Edit /etc/hosts"


@pytest.mark.parametrize(
    ("path", "cwd", "shown"),
    [
        ("/a/b/../c", "/a/", "c"),
        ("//a/x", "//a", "x"),
        ("/", "//", "."),
        ("//a", "//", "a"),
        ("x/../y", "/", "y"),
        ("x/y", "..", "x/y"),  # a relative cwd: paths are left to relpath
    ],
)
def test_a_path_is_shown_as_relpath_would_show_it(path: str, cwd: str, shown: str) -> None:
    assert shown_path(path, cwd) == shown


PATH_PARTS = st.text(alphabet="/.ab", max_size=12)


@settings(max_examples=500, deadline=None)
@given(path=PATH_PARTS, cwd=PATH_PARTS)
def test_absolute_is_normpath_of_the_joined_path(path: str, cwd: str) -> None:
    joined = path if os.path.isabs(path) else os.path.join(cwd, path)
    assert absolute(path, cwd) == os.path.normpath(joined)


@settings(max_examples=300, deadline=None)
@given(
    title=st.lists(st.sampled_from(["Edit ", "/", "work", "project", "a", ".", " and ", "b.py"])),
    paths=st.lists(PATH_PARTS.map(lambda p: "/work/project/" + p), max_size=3),
)
def test_relative_title_replaces_each_in_workspace_path_longest_first(
    title: list[str], paths: list[str]
) -> None:
    text = "".join(title)
    expected = text
    for path in sorted({os.path.normpath(p) for p in paths}, key=len, reverse=True):
        shown = shown_path(path, CWD)
        if shown != path:
            expected = expected.replace(path, shown)
    assert relative_title(text, paths, CWD) == expected


@pytest.mark.parametrize("view", ["generic_minimal", "terminal", "diff"])
def test_raw_input_goes_on_the_wire_as_the_thawed_arguments_would(view: str) -> None:
    from acp_sidecar.server.messages import encode_message
    from acp_sidecar.tools.json_values import freeze_json, thaw

    arguments = freeze_json({"paths": ["a.py", {"deep": [1, 2.5, None]}], "odd": "\udce9 é"})
    ctx = CardContext(CWD, terminal_output=True)
    start = call_start("c", CALLS[view], ctx, arguments)
    assert start.raw_input is arguments  # shared, not copied: it is frozen
    sent = encode_message({"params": to_wire(start)})
    thawed = call_start("c", CALLS[view], ctx, thaw(arguments))
    assert sent == encode_message({"params": to_wire(thawed)})
    assert json.loads(sent)["params"]["rawInput"] == thaw(arguments)
