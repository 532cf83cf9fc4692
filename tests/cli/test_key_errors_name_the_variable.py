"""A missing or refused key is explained with the variable the key is actually read from
(the config file's ``api_key_env``), in the session, in ``replay``, in ``configure``'s check
and in ``doctor``; a key from the environment is never sent to look in the config file, and a
stored one is. In process, against the scripted endpoint (which wants its own key)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.cli import build_parser, main, with_config_file
from acp_sidecar.configure.answers import KeyFromEnv, KeyStored
from acp_sidecar.configure.checking import check_endpoint
from acp_sidecar.doctor import diagnose
from acp_sidecar.settings.layering import layered_model_config
from acp_sidecar.tools.registry import ToolRegistry
from tests.agent.model.fake_openai import ScriptedOpenAI
from tests.agent.model.harness import SESSION, RecordedSession
from tests.fakes import Editor

VARIABLE = "MYFAKE_KEY"
WRONG = "sk-wrong-key-0123456789"


@pytest.fixture
def clean(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (VARIABLE, "OPENAI_API_KEY", "OPENAI_BASE_URL", "ACP_SIDECAR_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def config_file(tmp_path: Path, url: str, key: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'model = "test-model"\nbase_url = "{url}"\n{key}\n')
    path.chmod(0o600)
    return path


async def session_text(path: Path, tmp_path: Path) -> str:
    """What one prompt in a session served with the config file ``path`` is told."""
    args = with_config_file(build_parser().parse_args(["--config", str(path)]))
    config = layered_model_config(args, os.environ)
    assert config is not None
    driver = ModelDriver(config, ToolRegistry)
    editor = Editor()
    try:
        assert await RecordedSession(tmp_path / "store").run(driver, "hi", editor=editor)
    finally:
        await driver.aclose()
    return editor.text()


@pytest.fixture
async def endpoint() -> AsyncIterator[ScriptedOpenAI]:
    async with ScriptedOpenAI() as server:
        server.key = "sk-the-right-key-0123456789"
        yield server


async def test_the_session_and_replay_name_the_unset_variable_the_file_names(
    endpoint: ScriptedOpenAI,
    tmp_path: Path,
    clean: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = config_file(tmp_path, endpoint.base_url, f'api_key_env = "{VARIABLE}"')

    said = await session_text(path, tmp_path)

    assert said.startswith(f"The model endpoint {endpoint.base_url} needs an API key")
    assert said.endswith(f"Set {VARIABLE} in the environment acp-sidecar runs in.")
    assert "OPENAI_API_KEY" not in said
    # replay shows what the session said
    capsys.readouterr()
    assert main(["replay", "--store", str(tmp_path / "store"), "--json", SESSION]) == 0
    shown = [
        message["params"]["update"]["content"]["text"]
        for message in map(json.loads, capsys.readouterr().out.splitlines())
        if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert shown == [said]


async def test_a_refused_key_from_the_environment_is_the_variable_s_to_check(
    endpoint: ScriptedOpenAI, tmp_path: Path, clean: pytest.MonkeyPatch
) -> None:
    clean.setenv(VARIABLE, WRONG)
    path = config_file(tmp_path, endpoint.base_url, f'api_key_env = "{VARIABLE}"')

    said = await session_text(path, tmp_path)

    assert said.startswith(f"The model endpoint {endpoint.base_url} rejected the API key")
    assert said.endswith(f"Check {VARIABLE}.")
    assert "config file" not in said
    assert WRONG not in said


async def test_a_refused_stored_key_is_the_config_file_s(
    endpoint: ScriptedOpenAI, tmp_path: Path, clean: pytest.MonkeyPatch
) -> None:
    path = config_file(tmp_path, endpoint.base_url, f'api_key = "{WRONG}"')

    said = await session_text(path, tmp_path)

    assert said.endswith(
        "Check the key stored in the config file (`acp-sidecar configure` replaces it)."
    )
    assert "OPENAI_API_KEY" not in said


async def test_configure_s_check_names_the_variable_it_was_given(
    endpoint: ScriptedOpenAI, clean: pytest.MonkeyPatch
) -> None:
    report = await asyncio.to_thread(
        check_endpoint, endpoint.base_url, KeyFromEnv(VARIABLE), "test-model"
    )

    key = report.check("key")
    assert key.status == "failed"
    assert key.detail.endswith(f"Set {VARIABLE} in the environment acp-sidecar runs in.")
    assert key.fix is not None and VARIABLE in key.fix
    assert "OPENAI_API_KEY" not in key.detail + key.fix
    assert "config file" not in key.fix

    stored = await asyncio.to_thread(
        check_endpoint, endpoint.base_url, KeyStored(WRONG), "test-model"
    )
    assert "stored in the config file" in stored.check("key").detail


async def test_doctor_names_the_variable_the_file_names(
    endpoint: ScriptedOpenAI, tmp_path: Path, clean: pytest.MonkeyPatch
) -> None:
    clean.setenv(VARIABLE, WRONG)
    path = config_file(tmp_path, endpoint.base_url, f'api_key_env = "{VARIABLE}"')
    args = with_config_file(build_parser().parse_args(["doctor", "--config", str(path)]))

    findings = await diagnose(args, os.environ, offline=False, timeout=5)

    [key] = [f.check for f in findings if f.check.name == "key"]
    assert key.status == "failed"
    assert key.detail.endswith(f"Check {VARIABLE}.")
    assert key.fix is not None and "config file" not in key.fix
    assert "OPENAI_API_KEY" not in json.dumps([f.check.detail for f in findings])
