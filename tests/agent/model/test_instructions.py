"""The workspace's instructions file in the model's system prompt: which file, how much of it,
when it is read again, and every way it can be unusable without breaking a turn."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import attrs
import pytest

from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.agent.model import instructions as module
from acp_sidecar.agent.model.instructions import (
    INSTRUCTION_FILES,
    InstructionsReader,
    ProjectInstructions,
)
from acp_sidecar.agent.model.messages import system_message
from tests.agent.model.fake_openai import ScriptedOpenAI, answer
from tests.agent.model.harness import make_turn
from tests.fakes import Editor


def write(path: Path, text: str | bytes, *, mtime: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, ns=(mtime, mtime))


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_the_names_and_their_order() -> None:
    names = list(INSTRUCTION_FILES)
    assert names == ["AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md"]


def test_none_without_a_file(tmp_path: Path) -> None:
    assert InstructionsReader().read(str(tmp_path)) is None


def test_agents_md_wins_and_the_first_found_is_the_only_one_read(tmp_path: Path) -> None:
    write(tmp_path / ".github" / "copilot-instructions.md", "copilot rules")
    reader = InstructionsReader()
    assert reader.read(str(tmp_path)) == ProjectInstructions(
        name=os.path.join(".github", "copilot-instructions.md"), text="copilot rules"
    )
    write(tmp_path / "CLAUDE.md", "claude rules")
    assert reader.read(str(tmp_path)) == ProjectInstructions("CLAUDE.md", "claude rules")
    write(tmp_path / "AGENTS.md", "agents rules")
    assert reader.read(str(tmp_path)) == ProjectInstructions("AGENTS.md", "agents rules")


def test_a_changed_file_is_read_again_and_an_unchanged_one_is_not(tmp_path: Path) -> None:
    agents = tmp_path / "AGENTS.md"
    write(agents, "version one", mtime=1_000_000_000_000_000_000)
    reader = InstructionsReader()
    assert reader.read(str(tmp_path)) == ProjectInstructions("AGENTS.md", "version one")
    # Same size and mtime: the cache answers, the file is not read (its new text is unseen).
    write(agents, "version two", mtime=1_000_000_000_000_000_000)
    assert reader.read(str(tmp_path)) == ProjectInstructions("AGENTS.md", "version one")
    write(agents, "version three, longer")
    assert reader.read(str(tmp_path)) == ProjectInstructions("AGENTS.md", "version three, longer")
    agents.unlink()
    assert reader.read(str(tmp_path)) is None


def test_a_big_file_is_cut_with_a_note(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "ab" * 10 + "é" * 10)  # 40 bytes; é is two
    found = InstructionsReader(max_bytes=25).read(str(tmp_path))
    assert found is not None and found.truncated
    # 25 bytes end inside the third é: the cut drops the half character, not the file.
    assert found.text == (
        "ab" * 10 + "éé\n\n[AGENTS.md is 40 bytes; only its first 25 bytes are included here.]"
    )
    assert InstructionsReader().read(str(tmp_path)) == ProjectInstructions(
        "AGENTS.md", "ab" * 10 + "é" * 10
    )


def test_the_default_bound_is_32_kib(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "x" * 40_000)
    found = InstructionsReader().read(str(tmp_path))
    assert found is not None and found.truncated
    assert found.text.startswith("x" * 32 * 1024 + "\n\n[AGENTS.md is 40,000 bytes")


@pytest.mark.parametrize("problem", ["directory", "outside", "not-utf8", "unreadable"])
def test_an_unusable_file_is_skipped_logged_once_and_the_next_name_used(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    problem: str,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    agents = workspace / "AGENTS.md"
    if problem == "directory":
        agents.mkdir()
        reason = "is not a regular file"
    elif problem == "outside":
        write(tmp_path / "secret.md", "not the workspace's")
        agents.symlink_to(tmp_path / "secret.md")
        reason = "resolves to a file outside the workspace"
    elif problem == "not-utf8":
        write(agents, b"\xff\xfe rules in another encoding")
        reason = "is not UTF-8 text"
    else:
        write(agents, "rules")
        real_open = open

        def refuse(path: Any, *args: Any, **kwargs: Any) -> Any:
            if str(path).endswith("AGENTS.md"):
                raise PermissionError(13, "Permission denied")
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(module, "open", refuse, raising=False)
        reason = "cannot be read (Permission denied)"
    write(workspace / "CLAUDE.md", "the fallback")
    reader = InstructionsReader()
    with caplog.at_level(logging.WARNING, logger=module.__name__):
        for _ in range(3):
            assert reader.read(str(workspace)) == ProjectInstructions("CLAUDE.md", "the fallback")
    assert warnings(caplog) == [f"project instructions: {agents} {reason}; skipped"]


def test_a_symlink_inside_the_workspace_is_followed(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "agents.md", "shared rules")
    (tmp_path / "CLAUDE.md").symlink_to(tmp_path / "docs" / "agents.md")
    found = InstructionsReader().read(str(tmp_path))
    assert found == ProjectInstructions("CLAUDE.md", "shared rules")


def test_the_system_prompt_carries_them_marked_with_their_file() -> None:
    plain = system_message("/w", system="Linux")["content"]
    given = system_message(
        "/w", system="Linux", instructions=ProjectInstructions("AGENTS.md", "Run make.\n")
    )["content"]
    assert given.startswith(plain)
    assert given[len(plain) :] == (
        "\n\nThe project's instructions, from AGENTS.md in the workspace. Follow them unless "
        'the user says otherwise:\n<instructions file="AGENTS.md">\nRun make.\n</instructions>'
    )


async def test_the_request_carries_the_current_instructions_every_turn(
    driver: ModelDriver, endpoint: ScriptedOpenAI, tmp_path: Path
) -> None:
    editor = Editor()

    async def system_prompt() -> str:
        endpoint.script(answer("ok"))
        turn = attrs.evolve(make_turn(editor, "hi"), cwd=str(tmp_path))
        assert await driver.run_turn(turn) == "end_turn"
        content: str = endpoint.requests[-1].messages[0]["content"]
        return content

    assert "<instructions" not in await system_prompt()
    write(tmp_path / "AGENTS.md", "Always run the tests with make check.")
    first = await system_prompt()
    assert '<instructions file="AGENTS.md">\nAlways run the tests with make check.\n' in first
    write(tmp_path / "AGENTS.md", "Use tabs, never spaces; and run make check.")
    second = await system_prompt()
    assert "Use tabs, never spaces" in second and "Always run" not in second
    (tmp_path / "AGENTS.md").unlink()
    (tmp_path / "AGENTS.md").mkdir()  # unusable: the turn still runs, without instructions
    assert "<instructions" not in await system_prompt()
