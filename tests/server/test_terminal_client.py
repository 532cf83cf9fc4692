"""acpx, a terminal ACP client from npm (pinned; ``.ci/run`` installs it), driving a spawned
console sidecar the way a user at a shell would: one acpx command per prompt, a session kept
across them, resumed by a fresh sidecar once the first one has gone."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from benchmarks.ts_sdk import install_acpx
from tests.agent.model.fake_openai import ScriptedOpenAI, answer, stop, tool_call

pytestmark = [pytest.mark.process, pytest.mark.timeout(300)]  # a node start per step

FOREGROUND_PID = "sh -c 'echo $$ > d.tmp && mv d.tmp d.pid; exec sleep 300'"


@attrs.frozen
class Acpx:
    """acpx run in ``workspace`` against a sidecar (the console by default) storing in
    ``store``."""

    executable: Path
    workspace: Path
    store: Path
    model: tuple[str, ...] = ("--no-model",)
    """The sidecar's model options (default: the console)."""
    key: str | None = None
    """The endpoint's key, set in the sidecar's environment (acpx passes it only a few of
    its own variables)."""

    def run(self, *arguments: str, ttl: float = 30) -> list[dict[str, Any]]:
        """The JSON-RPC messages acpx printed for one command (it fails the test if acpx
        exits non-zero)."""
        sidecar = [sys.executable, "-m", "acp_sidecar", *self.model, "--store", str(self.store)]
        if self.key is not None:
            sidecar = ["env", f"OPENAI_API_KEY={self.key}", *sidecar]
        agent = shlex.join(sidecar)
        done = subprocess.run(
            [str(self.executable), "--approve-all", "--format", "json", "--ttl", str(ttl),
             "--agent", agent, *arguments],
            cwd=self.workspace, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr + done.stdout
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    def prompt(self, text: str, ttl: float = 30) -> list[dict[str, Any]]:
        return self.run("prompt", text, ttl=ttl)

    async def owner_gone(self) -> None:
        """Waits until acpx's queue owner (and so its sidecar) has exited."""
        for _ in range(600):
            status = (await asyncio.to_thread(self.run, "status"))[-1]
            if "pid" not in status:
                return
            await asyncio.sleep(0.1)
        pytest.fail(f"acpx's queue owner never went: {status}")


def said(messages: list[dict[str, Any]]) -> str:
    """The agent's text in these messages, joined."""
    chunks = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    return "".join(
        u["content"].get("text", "") for u in chunks if u["sessionUpdate"] == "agent_message_chunk"
    )


def methods(messages: list[dict[str, Any]]) -> list[str]:
    return [m["method"] for m in messages if "method" in m]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def acpx(tmp_path: Path) -> Acpx:
    installed = install_acpx()
    if isinstance(installed, str):
        pytest.skip(f"acpx is not available: {installed}")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return Acpx(installed[1], workspace, tmp_path / "store")


async def test_acpx_edits_undoes_keeps_a_job_and_exports_across_fresh_sidecars(acpx: Acpx) -> None:
    acpx.run("sessions", "new")
    write = acpx.prompt('/write {"path": "notes.txt", "content": "one\\ntwo\\n"}', ttl=0.2)
    assert "session/request_permission" in methods(write)  # ask mode; acpx approves
    await acpx.owner_gone()

    # This owner serves the /undo too; its ttl, not the /undo's, says when it goes.
    edit = acpx.prompt('/edit {"path": "notes.txt", "old_string": "two", "new_string": "2"}', ttl=5)
    assert "session/resume" in methods(edit)  # a fresh sidecar took the stored session
    assert (acpx.workspace / "notes.txt").read_bytes() == b"one\n2\n"
    acpx.prompt("/undo", ttl=0.2)
    assert (acpx.workspace / "notes.txt").read_bytes() == b"one\ntwo\n"
    await acpx.owner_gone()
    redo = acpx.prompt("/redo")  # a fresh sidecar again: the undo's record is in the log
    assert "session/resume" in methods(redo)
    assert (acpx.workspace / "notes.txt").read_bytes() == b"one\n2\n"

    acpx.prompt(f'/bash {{"command": {json.dumps(FOREGROUND_PID)}, "background": true}}')
    pid = int((acpx.workspace / "d.pid").read_text())
    listed = said(acpx.prompt("/jobs"))
    assert f"1. pid {pid}, running" in listed and "sleep 300" in listed
    killed = acpx.prompt("/kill 1")
    assert "job 1" in said(killed).lower()
    for _ in range(600):
        if not alive(pid):
            break
        await asyncio.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("/kill 1 left the job's process running")

    exported = acpx.prompt("/export md")
    updates = [m["params"]["update"] for m in exported if m.get("method") == "session/update"]
    links = [
        u["content"]
        for u in updates
        if u["sessionUpdate"] == "agent_message_chunk" and u["content"]["type"] == "resource_link"
    ]
    assert len(links) == 1 and links[0]["uri"].startswith("file://")
    transcript = Path(links[0]["uri"].removeprefix("file://")).read_text()
    assert "notes.txt" in transcript and "/kill 1" in transcript
    acpx.run("sessions", "close")
    assert sorted(p.name for p in acpx.workspace.iterdir()) == ["d.pid", "notes.txt"]
    assert (acpx.workspace / "notes.txt").read_bytes() == b"one\n2\n"


async def test_acpx_in_model_mode_undoes_the_models_turn_and_holds_its_budget(acpx: Acpx) -> None:
    """The sidecar on the scripted endpoint (run in this process, so acpx runs in a thread):
    the model writes a file, ``/undo`` takes it back, and the next request no longer holds
    the undone turn; a token budget below what was spent ends the next prompt at once."""
    from tests.agent.model.fake_openai import Reply, usage

    async with ScriptedOpenAI(strict=True) as endpoint:
        looked = answer("Nothing here yet.")
        looked.usage = usage(50, 5)
        endpoint.script(
            Reply(
                [
                    tool_call(0, "call_w", "write", '{"path": "out.txt", "content": "made\\n"}'),
                    stop("tool_calls"),
                ]
            ),
            answer("Wrote it."),
            looked,
        )
        modelled = attrs.evolve(
            acpx, model=("--model", "test-model", "--base-url", endpoint.base_url), key="sk-test"
        )
        try:
            await asyncio.to_thread(modelled.run, "sessions", "new")
            wrote = await asyncio.to_thread(modelled.prompt, "Write out.txt.")
            assert "Wrote it." in said(wrote)
            assert (acpx.workspace / "out.txt").read_bytes() == b"made\n"
            await asyncio.to_thread(modelled.prompt, "/undo")
            assert not (acpx.workspace / "out.txt").exists()
            asked = await asyncio.to_thread(modelled.prompt, "What is in the workspace?")
            assert "Nothing here yet." in said(asked)
            await asyncio.to_thread(modelled.prompt, "/budget tokens 10")
            over = await asyncio.to_thread(modelled.prompt, "And now?")
            assert "budget is reached: tokens (10)" in said(over)
        finally:
            await asyncio.to_thread(modelled.run, "sessions", "close")
    assert len(endpoint.requests) == 3  # the prompt over budget asked the model nothing
    last = endpoint.requests[-1].messages
    contents = [str(m.get("content")) for m in last]
    assert not any("Write out.txt." in c for c in contents)  # the undone turn left the history
    assert any("What is in the workspace?" in c for c in contents)
    assert sorted(p.name for p in acpx.workspace.iterdir()) == []


async def test_acpx_a_config_files_deny_rule_stops_a_command_and_its_allow_rule_asks_nobody(
    acpx: Acpx, tmp_path: Path
) -> None:
    """The sidecar's own config file (``--config``) holds the rules: ``!rm -rf kept`` is
    refused though acpx approves every request; a write the rules allow goes through with no
    request, one they do not is asked about. (acpx's ``--deny-all`` would refuse the
    sidecar's ``fs/write_text_file`` too, so acpx's approval stays on and the requests it was
    sent are counted instead.)"""
    config = tmp_path / "config.toml"
    config.write_text('[permissions]\nrules = ["deny bash rm -rf *", "allow write notes/**"]\n')
    (acpx.workspace / "kept").mkdir()
    (acpx.workspace / "kept" / "file.txt").write_bytes(b"keep me\n")
    ruled = attrs.evolve(acpx, model=("--no-model", "--config", str(config)))
    ruled.run("sessions", "new")
    refused = ruled.prompt("!rm -rf kept")
    assert "session/request_permission" not in methods(refused)
    assert "the permission rule `deny bash rm -rf *` (user (" in json.dumps(refused)
    allowed = ruled.prompt('/write {"path": "notes/a.txt", "content": "ruled\\n"}')
    assert "session/request_permission" not in methods(allowed)
    asked = ruled.prompt('/write {"path": "other.txt", "content": "asked\\n"}')
    assert "session/request_permission" in methods(asked)  # no rule: ask mode asks acpx
    ruled.run("sessions", "close")
    assert sorted(str(p.relative_to(acpx.workspace)) for p in acpx.workspace.rglob("*")) == [
        "kept",
        "kept/file.txt",
        "notes",
        "notes/a.txt",
        "other.txt",
    ]
    assert (acpx.workspace / "kept" / "file.txt").read_bytes() == b"keep me\n"
    assert (acpx.workspace / "notes" / "a.txt").read_bytes() == b"ruled\n"
