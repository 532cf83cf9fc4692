"""A served sidecar with a config file, over the real wire: the file's model answers, a broken
file is shown in the editor (never as a traceback) and a changed one is picked up without a
restart, and a key stored in the file reaches the endpoint and nothing else.

The sidecar serves in process (its logging set up as ``serve`` sets it up, stderr captured);
the model is the scripted OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import acp

from tests.agent.model.fake_openai import ScriptedOpenAI, answer
from tests.fakes import AllowingEditor
from tests.in_process import sdk_served, serving
from tests.server.wire import WireClient

SECRET = "sk-stored-in-the-file-0123456789"
NOTICES = {"session": {"notices": {}}}


def write(path: Path, text: str) -> Path:
    """Replace the file as ``configure`` does: a private file renamed over the old one."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.chmod(0o600)
    os.replace(temporary, path)
    return path


def config_text(endpoint: ScriptedOpenAI, model: str, *extra: str) -> str:
    lines = [f'model = "{model}"', f'base_url = "{endpoint.base_url}"', f'api_key = "{SECRET}"']
    return "\n".join([*lines, *extra]) + "\n"


async def prompt(connection: Any, session: str, endpoint: ScriptedOpenAI) -> str:
    """One prompt the endpoint answers; the model the endpoint was asked for."""
    endpoint.script(answer("ok"))
    done = await connection.prompt(session_id=session, prompt=[acp.text_block("hi")])
    assert done.stop_reason == "end_turn"
    model: str = endpoint.requests[-1].body["model"]
    return model


async def test_the_file_s_model_answers_and_a_change_applies_without_a_restart(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    async with ScriptedOpenAI() as endpoint:
        write(config, config_text(endpoint, "file-model"))
        args = ("--config", str(config))
        env = {"OPENAI_API_KEY": "sk-not-this-one"}  # the file names its own endpoint and key
        async with sdk_served(AllowingEditor(), *args, store=tmp_path / "s", env=env) as (
            connection,
            _wire,
        ):
            first = (await connection.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            assert await prompt(connection, first, endpoint) == "file-model"
            assert endpoint.requests[-1].headers["authorization"] == f"Bearer {SECRET}"

            write(config, config_text(endpoint, "second-model"))
            await connection.authenticate(method_id="configure")
            assert await prompt(connection, first, endpoint) == "second-model"  # the next turn

            write(config, config_text(endpoint, "third-model"))  # no authenticate this time
            new = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
            assert await prompt(connection, new.session_id, endpoint) == "third-model"


async def read_until(wire: WireClient, wanted: str, timeout: float = 10) -> None:
    while wanted not in json.dumps(wire.updates):
        await wire.next_update(timeout)


async def test_a_broken_file_is_shown_after_session_new_and_its_fix_is_picked_up(
    tmp_path: Path,
) -> None:
    config = write(tmp_path / "config.toml", 'model = "m"\nmax_parallel_tools = 0\n')
    async with ScriptedOpenAI() as endpoint:
        logged = io.StringIO()
        async with serving(
            *("--config", str(config), "--store", str(tmp_path / "s")),
            env={"OPENAI_API_KEY": ""},
            stderr=logged,
        ) as (wire, _server):
            await wire.initialize(**NOTICES)
            session = await wire.new_session(str(tmp_path))  # answered
            await read_until(wire, "cannot be used")
            [notice] = [
                u["params"]["update"]
                for u in wire.updates
                if u["params"]["update"]["sessionUpdate"] == "notice"
            ]
            assert notice["severity"] == "error"
            assert notice["title"] == (
                "Config file error: config.toml:2: max_parallel_tools: expected "
                "a whole number of at least 1"
            )
            assert f"{config}:2: max_parallel_tools" in notice["description"]
            # Without the file no model is configured: the console answers.
            response = await wire.next_response(await wire.start_prompt(session, "hello"))
            assert response["result"]["stopReason"] == "end_turn"
            assert "No model is configured" in " ".join(wire.texts())

            write(config, config_text(endpoint, "fixed-model"))
            wire.updates.clear()
            fixed = await wire.new_session(str(tmp_path))
            endpoint.script(answer("fixed"))
            response = await wire.next_response(await wire.start_prompt(fixed, "hello"))
            assert response["result"]["stopReason"] == "end_turn"
            assert endpoint.requests[-1].body["model"] == "fixed-model"
            assert "cannot be used" not in json.dumps(wire.updates)
        stderr = logged.getvalue()
        assert "Traceback" not in json.dumps(wire.received) and "Traceback" not in stderr
        # Logged once, at start (the editor shows none of stderr).
        assert stderr.count("config.toml:2: max_parallel_tools") == 2  # title and list
        assert stderr.count("The file cannot be used") == 1


async def test_a_stored_key_reaches_the_endpoint_and_nothing_else(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    log = tmp_path / "debug.log"
    store = tmp_path / "store"
    async with ScriptedOpenAI() as endpoint:
        write(config, config_text(endpoint, "m", "colour = 1"))
        args = ("--config", str(config), "--store", str(store))
        logged = io.StringIO()
        async with serving(
            *args,
            *("--log-file", str(log), "--log-level", "DEBUG"),
            env={"OPENAI_API_KEY": ""},
            stderr=logged,
        ) as (wire, _server):
            await wire.initialize()
            session = await wire.new_session(str(tmp_path))
            endpoint.script(answer("hello"))
            response = await wire.next_response(await wire.start_prompt(session, "hi"))
            assert response["result"]["stopReason"] == "end_turn"
            write(config, config_text(endpoint, "m2", "max_tokens = -1"))  # a broken re-read
            await wire.new_session(str(tmp_path))
            await read_until(wire, "cannot be used")
        stderr = logged.getvalue()
        assert endpoint.requests[-1].headers["authorization"] == f"Bearer {SECRET}"
    assert "DEBUG" in log.read_text() and "config.toml" in log.read_text()
    kept = [log, *(p for p in store.rglob("*") if p.is_file())]
    assert len(kept) >= 2
    for path in kept:
        assert SECRET not in path.read_text(errors="replace"), path
    assert SECRET not in stderr
    assert SECRET not in json.dumps(wire.received)
