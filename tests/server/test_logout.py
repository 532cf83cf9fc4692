"""``logout`` (``agentCapabilities.auth.logout``): the key stored in the config file is
forgotten, a key from the environment is named and left, nothing stored is said; after a
removal the console answers until a key is available again. In process, on the wire (every
message checked against the stable schema, where ``logout`` is defined); config files only
under the test's own directory."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.direct import ConsoleDriver
from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.protocol.errors import INTERNAL_ERROR, METHOD_NOT_FOUND
from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.logout import META_KEY
from tests.acp_schema import schema_def_for
from tests.server.test_serve_settings import (
    NOTICES,
    clean_env,
    read_until,
    server_for,
    settings_of,
    updates,
    write,
)
from tests.server.wire import WireClient, served

__all__ = ["clean_env"]  # the fixture, used here too

SECRET = "sk-logout-test-4711"
LOCAL = 'base_url = "http://127.0.0.1:9/v1"\n'
"""An endpoint that refuses at once (the model listing fails fast)."""
STORED = f'# my settings\nmodel = "m"\n{LOCAL}api_key = "{SECRET}"\nmode = "auto"\n'


@pytest.fixture
def user_config(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> Path:
    """The user-wide config file's place, inside the test's directory."""
    clean_env.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = tmp_path / "config" / "acp-sidecar" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


def outcome(result: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = result["_meta"][META_KEY]
    return entry


def assert_no_secret(wire: WireClient, caplog: pytest.LogCaptureFixture) -> None:
    assert SECRET not in json.dumps(wire.received)
    assert SECRET not in caplog.text


def test_logout_is_the_stable_schemas_method() -> None:
    assert schema_def_for("agent", "logout", "Request") == "LogoutRequest"
    assert schema_def_for("agent", "logout", "Response") == "LogoutResponse"


async def test_logout_forgets_the_stored_key_and_the_console_answers_until_a_new_one(
    tmp_path: Path, user_config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    write(user_config, STORED)
    server = server_for(settings_of())
    async with served(server) as (wire, _server):
        capabilities = (await wire.initialize(**NOTICES))["agentCapabilities"]
        assert capabilities["auth"] == {"logout": {}}
        session = await wire.new_session(str(tmp_path))
        assert isinstance(server.driver, ModelDriver)

        result = await wire.result("logout", {})
        said = outcome(result)
        assert said["outcome"] == "removed"
        assert said["configFile"] == str(user_config)
        assert said["message"].startswith(
            "Logged out: the API key for http://127.0.0.1:9/v1 was removed from the config file."
        )
        assert (
            f"every editor that runs acp-sidecar with this config file ({user_config})"
            in (said["message"])
        )
        assert "prompts are answered by the slash-command console" in said["message"]
        # the key alone is gone: the comment, the other keys and the file's privacy stay
        assert user_config.read_text() == '# my settings\nmodel = "m"\n' + LOCAL + 'mode = "auto"\n'
        assert user_config.stat().st_mode & 0o777 == 0o600
        assert isinstance(server.driver, ConsoleDriver)
        # the open session is told, and answered by the console
        await read_until(wire, "Logged out")
        [notice] = updates(wire, "notice")
        assert notice["severity"] == "info" and notice["title"].startswith("Logged out")
        done = await wire.next_response(await wire.start_prompt(session, "/look x"))
        assert done["result"] == {"stopReason": "end_turn"}

        # a re-read that still finds no key keeps the console, whatever model is named
        write(user_config, 'model = "other"\n' + LOCAL)
        await wire.new_session(str(tmp_path))
        assert isinstance(server.driver, ConsoleDriver)
        # a key again (``configure`` stored one): the model serves again
        write(user_config, 'model = "other"\n' + LOCAL + 'api_key = "sk-new"\n')
        await wire.new_session(str(tmp_path))
        assert isinstance(server.driver, ModelDriver)
        assert_no_secret(wire, caplog)


async def test_a_key_from_the_environment_is_named_and_left(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config = write(tmp_path / "config.toml", 'model = "m"\n' + LOCAL + 'api_key_env = "MY_KEY"\n')
    clean_env.setenv("MY_KEY", SECRET)
    server = server_for(settings_of("--config", str(config)))
    before = config.read_text()
    async with served(server) as (wire, _server):
        await wire.initialize()
        await wire.new_session(str(tmp_path))
        said = outcome(await wire.result("logout", {}))
        assert said["outcome"] == "environment"
        assert said["message"].startswith(
            "Nothing was removed: the API key for http://127.0.0.1:9/v1 comes from the "
            "environment variable $MY_KEY, which logging out cannot change."
        )
        assert isinstance(server.driver, ModelDriver)  # the key is still there
        await read_until(wire, "Nothing was removed")
        [text] = wire.texts()  # a client without notices: an agent message
        assert text.startswith("Nothing was removed")
        assert_no_secret(wire, caplog)
    assert config.read_text() == before


async def test_with_nothing_stored_there_is_nothing_to_forget(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    config = write(tmp_path / "config.toml", 'model = "m"\n' + LOCAL)
    server = server_for(settings_of("--config", str(config)))
    async with served(server) as (wire, _server):
        await wire.initialize()
        said = outcome(await wire.result("logout", {}))
        assert said == {
            "outcome": "nothing",
            "message": "Nothing to forget: no API key for http://127.0.0.1:9/v1 is stored in "
            f"the config file {config}.",
            "configFile": str(config),
        }
        assert isinstance(server.driver, ModelDriver)  # a local server that needs no key
    # OpenAI's API with its variable unset: the message says that too
    config = write(tmp_path / "config.toml", 'model = "m"\n')
    async with served(server_for(settings_of("--config", str(config)))) as (wire, _server):
        await wire.initialize()
        said = outcome(await wire.result("logout", {}))
        assert said["outcome"] == "nothing"
        assert said["message"] == (
            "Nothing to forget: no API key for OpenAI's API is stored in the config file "
            f"{config} (nor is $OPENAI_API_KEY set)."
        )


async def test_removed_with_the_environments_key_behind_it_the_model_goes_on(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # OpenAI's API: the stored key wins over $OPENAI_API_KEY, which is used once it is gone
    config = write(tmp_path / "config.toml", f'model = "m"\napi_key = "{SECRET}"\n')
    clean_env.setenv("OPENAI_API_KEY", "sk-from-env")
    server = server_for(settings_of("--config", str(config)))
    async with served(server) as (wire, _server):
        await wire.initialize()
        said = outcome(await wire.result("logout", {}))
        assert said["outcome"] == "removed"
        assert said["message"].endswith(
            "The key from $OPENAI_API_KEY is used from now on: it comes from the environment, "
            "which logging out cannot change."
        )
        assert isinstance(server.driver, ModelDriver)
        assert not server.settings.logged_out  # type: ignore[union-attr]
        assert "sk-from-env" not in json.dumps(wire.received)
        assert_no_secret(wire, caplog)
    assert config.read_text() == 'model = "m"\n'


async def test_a_file_that_cannot_be_rewritten_is_left_and_the_answer_says_why(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config = write(tmp_path / "config.toml", STORED)
    server = server_for(settings_of("--config", str(config)))
    async with served(server) as (wire, _server):
        await wire.initialize()
        broken = STORED + "max_tokens = -1\n"  # the key in force is still the last good one
        write(config, broken)
        error = await wire.error("logout", {})
        assert error["code"] == INTERNAL_ERROR
        assert error["message"].startswith(f"Cannot log out: the config file {config} cannot")
        assert "max_tokens" in error["message"] and "was not removed" in error["message"]
        assert config.read_text() == broken
        assert not server.settings.logged_out  # type: ignore[union-attr]
        assert_no_secret(wire, caplog)


async def test_without_settings_logout_is_neither_offered_nor_served() -> None:
    async with served(AcpServer()) as (wire, _server):
        capabilities = (await wire.initialize())["agentCapabilities"]
        assert capabilities["auth"] == {}  # the schema: omitted logout, clients must not call
        error = await wire.error("logout", {})
        assert error["code"] == METHOD_NOT_FOUND
