"""Stored sessions for the export tests, written through the store's own writer.

- :func:`write_sample_session`: one of everything an export draws — prompts, a thought,
  Markdown answers, terminal cards (exit 0 with ANSI colours, exit 1, killed by a signal),
  edit and write diffs, a search, a failed call, a call left open, a plan, mode and model
  switches and permission decisions, an output long enough to collapse and one long enough
  to be clipped.
- :func:`write_hostile_session`: the same shapes with :data:`HOSTILE` strings in every place
  that reaches the page: prompts, messages, thoughts, titles, paths, commands, outputs.

Expectations (how many cards, with which status) are read from ``replay --json`` — the
stream an editor gets — not restated here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp_sidecar.store import SessionStore
from acp_sidecar.store.records import (
    ConfigChangeRecord,
    PermissionAnswerRecord,
    PermissionAskedRecord,
)
from acp_sidecar.store.writer import SessionWriter
from acp_sidecar.tools.content import TextContent
from acp_sidecar.tools.result import ToolErrorInfo, ToolExecutionResult

CWD = "/work/project"
CREATED = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)

PWNED = "window.__pwned=1"
HOSTILE = (
    f"<script>{PWNED}</script>",
    f'<img src=x onerror="{PWNED}">',
    "</details></section></div>",
    f"[x](javascript:{PWNED})",
    "\x1b[31mred\x1b[0m \x1b]8;;javascript:alert(1)\x07osc\x1b]8;;\x07 \x00\x07\x08\x7f",
    "\ufffd",
)
"""Strings that would break the page if anything reached it unescaped."""
HOSTILE_TEXT = " ".join(HOSTILE)


def _lines(count: int, label: str) -> str:
    return "".join(f"{label} line {n}\n" for n in range(1, count + 1))


def bash(
    writer: SessionWriter,
    call_id: str,
    command: str,
    output: str,
    *,
    exit_code: int | None = 0,
    signal: str | None = None,
    cwd: str = CWD,
) -> None:
    """A finished ``bash`` call whose card is a terminal."""
    writer.tool_call(call_id, "bash", {"command": command, "cwd": cwd})
    ending = f"Exit code: {exit_code}" if signal is None else f"Killed by {signal}"
    meta: dict[str, Any] = {
        "cwd": cwd,
        "exit_code": exit_code,
        "signal": signal,
        "timed_out": False,
        "cancelled": False,
        "output": output,
        "output_chars": len(output),
    }
    writer.tool_result(
        ToolExecutionResult(
            call_id=call_id, content=[TextContent(output + ending)], is_error=False, meta=meta
        )
    )


def edit(writer: SessionWriter, call_id: str, path: str, old: str, new: str) -> None:
    """A finished ``edit`` call (one hunk from line 1) whose card is a diff."""
    writer.tool_call(call_id, "edit", {"path": path, "old_string": old, "new_string": new})
    meta = {
        "path": f"{CWD}/{path}",
        "replacements": 1,
        "encoding": "utf-8",
        "line_endings": "lf",
        "hunks": [{"old_line": 1, "new_line": 1, "old_text": old, "new_text": new}],
        "omitted_hunks": 0,
        "cut": False,
    }
    writer.tool_result(
        ToolExecutionResult(
            call_id=call_id, content=[TextContent(f"Edited {path}")], is_error=False, meta=meta
        )
    )


def write_new_file(writer: SessionWriter, call_id: str, path: str, text: str) -> None:
    """A finished ``write`` call that created a file (a "new file" diff)."""
    writer.tool_call(call_id, "write", {"path": path, "content": text})
    meta = {
        "path": f"{CWD}/{path}",
        "created": True,
        "hunks": [{"old_line": 0, "new_line": 1, "old_text": "", "new_text": text}],
        "omitted_hunks": 0,
        "cut": False,
    }
    writer.tool_result(
        ToolExecutionResult(
            call_id=call_id, content=[TextContent(f"Created {path}")], is_error=False, meta=meta
        )
    )


def failed(writer: SessionWriter, call_id: str, path: str, message: str) -> None:
    """A ``read`` call that failed."""
    writer.tool_call(call_id, "read", {"path": path})
    writer.tool_result(
        ToolExecutionResult(
            call_id=call_id,
            content=[TextContent(message)],
            is_error=True,
            error=ToolErrorInfo("FileNotFound", "FILE_NOT_FOUND"),
        )
    )


def plan(writer: SessionWriter, call_id: str, entries: list[tuple[str, str]]) -> None:
    """A ``plan`` call: ``(content, status)`` entries."""
    arguments = {
        "entries": [
            {"content": content, "priority": "medium", "status": status}
            for content, status in entries
        ]
    }
    writer.tool_call(call_id, "plan", arguments)
    writer.tool_result(
        ToolExecutionResult(call_id=call_id, content=[TextContent("Plan updated.")], is_error=False)
    )


def asked(writer: SessionWriter, call_id: str, tool: str, answer: str) -> None:
    """The user was asked about ``call_id`` and answered ``answer``."""
    options = ("allow_once", "allow_always", "reject_once", "reject_always")
    writer.append(PermissionAskedRecord(call_id=call_id, tool=tool, options=options))
    writer.append(PermissionAnswerRecord(call_id=call_id, tool=tool, answer=answer))  # type: ignore[arg-type]


def write_sample_session(directory: Path, session_id: str = "sample") -> Path:
    """One of everything (see the module docstring); returns the log's path."""
    store = SessionStore(directory, fsync="never")
    with store.create(session_id, CWD, mode="ask", created_at=CREATED) as writer:
        writer.user_message([{"type": "text", "text": "Fix the failing test in `app.py`."}])
        writer.agent_thought("The assertion compares against the old value.")
        writer.end_message()
        writer.agent_text("Let me **run** the tests first:\n\n```sh\npytest -q\n```\n")
        writer.end_message()
        plan(writer, "plan-1", [("Run the tests", "completed"), ("Fix app.py", "in_progress")])
        bash(
            writer,
            "run-ok",
            "pytest -q",
            "\x1b[32m12 passed\x1b[0m in 0.3s\nprogress 10%\rprogress 100%\n",
        )
        bash(
            writer,
            "run-fail",
            "pytest -q tests/test_app.py",
            "\x1b[31mF\x1b[0m\n1 failed\n",
            exit_code=1,
        )
        bash(writer, "run-killed", "sleep 100", "", exit_code=None, signal="SIGTERM")
        asked(writer, "edit-1", "edit", "allow_once")
        edit(writer, "edit-1", "src/app.py", "def f():\n    return 1\n", "def f():\n    return 2\n")
        write_new_file(writer, "write-1", "src/new.py", "print('hello')\n")
        failed(writer, "read-1", "missing.py", "missing.py: no such file")
        bash(writer, "run-long", "seq 60", _lines(60, "medium"))
        bash(writer, "run-huge", "seq 1000", _lines(1000, "huge"))
        writer.end_turn("end_turn")
        writer.mode_change("auto")
        writer.append(ConfigChangeRecord(config_id="model", value="gpt-test-2"))
        writer.user_message([{"type": "text", "text": "Now commit it."}])
        writer.agent_text("Committing.")
        writer.end_message()
        asked(writer, "git-1", "bash", "reject_once")
        writer.tool_call("git-1", "bash", {"command": "git commit -am fix"})
        writer.tool_result(
            ToolExecutionResult(
                call_id="git-1",
                content=[TextContent("The user rejected this call.")],
                is_error=True,
                error=ToolErrorInfo("PermissionDenied", "PERMISSION_DENIED"),
            )
        )
        writer.tool_call("open-1", "bash", {"command": "sleep 5"})  # left open: interrupted
        writer.end_turn("cancelled")
    return store.path_of(session_id)


def write_hostile_session(directory: Path, session_id: str = "hostile") -> Path:
    """Hostile strings everywhere the page shows something from the log."""
    store = SessionStore(directory, fsync="never")
    text = HOSTILE_TEXT
    with store.create(session_id, CWD, mode="ask", created_at=CREATED) as writer:
        writer.user_message(
            [
                {"type": "text", "text": text},
                {"type": "resource_link", "uri": f"javascript:{PWNED}", "name": text},
                {
                    "type": "image",
                    "mimeType": "image/png",
                    "data": '"><script>x</script>',
                    "uri": "http://127.0.0.1:9/tracker.png",
                },
            ]
        )
        writer.agent_thought(text)
        writer.end_message()
        writer.agent_text(f'{text}\n\n<div onclick="{PWNED}">raw html</div>\n\n')
        writer.agent_text(f"![img](http://127.0.0.1:9/x.png) [link](javascript:{PWNED})\n")
        writer.agent_text("```\n```</details>" + text + "\n```\n")
        writer.end_message()
        bash(writer, "h-run", f"echo '{text}'", text + "\n", exit_code=1, cwd=f"{CWD}/{text}")
        edit(writer, "h-edit", f"src/{text}.py", f"old {text}\n", f"new {text}\n")
        failed(writer, "h-read", f"{text}.txt", text)
        plan(writer, "h-plan", [(text, "pending")])
        writer.tool_call("h-tool", text, {"arg": text})
        writer.tool_result(
            ToolExecutionResult(call_id="h-tool", content=[TextContent(text)], is_error=False)
        )
        writer.end_turn("end_turn")
        writer.append(ConfigChangeRecord(config_id="model", value=text))
        writer.mode_change(text)
    return store.path_of(session_id)
