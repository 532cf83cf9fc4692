"""The config file in a running server (``acp_sidecar.server.settings``): read again only when
it changed, applied without a restart, its problems shown after every ``session/new`` and its
warnings once, the last good settings kept while it is broken. In process, on the wire
(every message checked against the schema)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.driver import MessageDriver
from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.cli import build_parser, with_config_file
from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.refresh import refresh_settings, replace_driver
from acp_sidecar.server.session import Session
from acp_sidecar.server.settings import ServeSettings
from acp_sidecar.settings import KEYS
from acp_sidecar.tools.cancel import CancelSignal
from tests.drivers import ScriptDriver
from tests.server.wire import WireClient, served

NOTICES = {"session": {"notices": {}}}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No variable a key or the endpoint reads is set."""
    for key in KEYS:
        if key.env is not None:
            monkeypatch.delenv(key.env, raising=False)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ACP_SIDECAR_MODEL_INFO"):
        monkeypatch.delenv(name, raising=False)
    yield monkeypatch


def write(path: Path, text: str, mode: int = 0o600) -> Path:
    """Replace the file as ``configure`` does (a new file renamed over the old one)."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.chmod(mode)
    os.replace(temporary, path)
    return path


def settings_of(*argv: str) -> ServeSettings:
    return ServeSettings.from_args(with_config_file(build_parser().parse_args(list(argv))))


def test_the_file_is_read_again_only_when_it_changed(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", 'model = "first"\nmode = "auto"\n')
    settings = settings_of("--config", str(config))
    assert settings.live.model is not None and settings.live.model.model == "first"
    assert settings.live.default_mode == "auto"
    assert settings.refresh() is None

    write(config, 'model = "second"\nmode = "read-only"\nallow_outside_workspace = true\n')
    changed = settings.refresh()
    assert changed is not None and changed.model
    assert changed.after.model is not None and changed.after.model.model == "second"
    assert (changed.after.default_mode, changed.after.allow_outside_workspace) == (
        "read-only",
        True,
    )
    assert settings.refresh() is None

    write(config, 'model = "second"\nmode = "ask"\nallow_outside_workspace = true\n')
    changed = settings.refresh()
    assert changed is not None and not changed.model  # the same model: the driver stays
    assert changed.after.default_mode == "ask"


def test_options_and_variables_still_win_after_a_re_read(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    config = write(tmp_path / "config.toml", 'model = "file"\nmcp_start_timeout = 3\n')
    clean_env.setenv("ACP_SIDECAR_MODE", "read-only")
    settings = settings_of("--config", str(config), "--mcp-start-timeout", "7")
    write(config, 'model = "file2"\nmcp_start_timeout = 4\nmode = "auto"\n')
    clean_env.setenv("ACP_SIDECAR_MODEL", "from-env")  # the environment as it is now
    changed = settings.refresh()
    assert changed is not None
    assert changed.after.model is not None and changed.after.model.model == "from-env"
    assert changed.after.mcp_start_timeout == 7.0
    assert changed.after.default_mode == "read-only"


def test_a_file_that_becomes_broken_keeps_the_last_good_settings(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", 'model = "good"\n')
    settings = settings_of("--config", str(config))
    assert settings.problems() == ()
    write(config, 'model = "bad"\n\nmax_tokens = -1\n')
    changed = settings.refresh()
    assert changed is not None and not changed.model
    assert settings.live.model is not None and settings.live.model.model == "good"
    [problem] = settings.problems()
    assert problem.severity == "error"
    assert problem.title == (
        "Config file error: config.toml:3: max_tokens: expected a whole number of at least 0"
    )
    assert f"- {config}:3: max_tokens" in problem.text
    assert "the settings read from it before stay in force." in problem.text
    assert "Traceback" not in problem.text

    write(config, 'model = "fixed"\n')
    changed = settings.refresh()
    assert changed is not None and changed.model and settings.problems() == ()


def test_a_file_broken_at_start_is_run_without(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", "model = [\n")
    settings = settings_of("--config", str(config), "--model", "opt")
    assert settings.live.model is not None and settings.live.model.model == "opt"
    [problem] = settings.problems()
    assert f"{config}:" in problem.text and "is not valid TOML" in problem.text
    assert "acp-sidecar runs without it (options" in problem.text


def test_a_bad_mode_variable_and_a_bad_limit_are_shown_not_fatal(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    config = write(tmp_path / "config.toml", 'model = "m"\nmode = "auto"\n')
    clean_env.setenv("ACP_SIDECAR_MODE", "yolo")
    clean_env.setenv("ACP_SIDECAR_MAX_TOKENS", "lots")
    settings = settings_of("--config", str(config))
    assert settings.live.default_mode == "auto"  # the variable is left out, the file used
    texts = [m.text for m in settings.problems()]
    assert texts == [
        "A setting cannot be used: ACP_SIDECAR_MODE 'yolo': expected one of ask, auto, read-only.",
        f"{settings.live.model_problem}.",
    ]
    assert settings.live.model_problem is not None
    assert "ACP_SIDECAR_MAX_TOKENS" in settings.live.model_problem
    factory = settings.driver_factory(_tools())
    assert factory is not None and isinstance(factory(), MessageDriver)


def test_restart_only_keys_are_logged_once_per_value(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = write(tmp_path / "config.toml", 'fsync = "turn"\n')
    settings = settings_of("--config", str(config))
    caplog.set_level(logging.WARNING, "acp_sidecar.server.settings")
    write(config, 'fsync = "never"\n')
    settings.refresh()
    write(config, 'fsync = "never"\nmodel = "m"\n')
    settings.refresh()
    said = [r.getMessage() for r in caplog.records]
    assert said == [f"config file {config}: fsync changed; it takes effect at the next start"]
    write(config, 'fsync = "record"\n')
    settings.refresh()
    assert len(caplog.records) == 2


def test_unknown_keys_are_warnings_and_a_deleted_default_file_is_no_configuration(
    tmp_path: Path, clean_env: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    clean_env.setenv("XDG_CONFIG_HOME", str(tmp_path))
    config = tmp_path / "acp-sidecar" / "config.toml"
    config.parent.mkdir()
    write(config, 'model = "m"\ncolour = "blue"\n')
    caplog.set_level(logging.WARNING, "acp_sidecar.server.settings")
    settings = settings_of()
    settings.log_problems()
    [warning] = settings.warning_messages()
    assert warning.severity == "warning" and "config.toml:2: colour: unknown key" in warning.text
    assert f"The file: {config}" in warning.text
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert settings.problems() == ()
    config.unlink()
    changed = settings.refresh()
    assert changed is not None and changed.after.model is None and settings.problems() == ()


def _tools() -> Any:
    from acp_sidecar.agent.toolset import ToolsProvider

    return ToolsProvider()


# -- on the wire ------------------------------------------------------------------------------


def server_for(settings: ServeSettings) -> AcpServer:
    live = settings.live
    return AcpServer(
        settings.driver_factory(_tools()),
        default_mode=live.default_mode,
        allow_outside_workspace=live.allow_outside_workspace,
        mcp_start_timeout=live.mcp_start_timeout,
        settings=settings,
        cancel_grace=0.3,
    )


def updates(wire: WireClient, kind: str) -> list[dict[str, Any]]:
    return [
        u["params"]["update"]
        for u in wire.updates
        if u["params"]["update"]["sessionUpdate"] == kind
    ]


async def read_until(wire: WireClient, wanted: str, timeout: float = 5) -> None:
    while wanted not in json.dumps(wire.updates):
        await wire.next_update(timeout)


async def quiet(wire: WireClient, seconds: float = 0.3) -> None:
    """Read what comes within ``seconds`` (nothing more is expected)."""
    try:
        while True:
            await wire.next_update(seconds)
    except TimeoutError:
        pass


async def test_new_sessions_start_in_the_file_s_mode_and_follow_a_change(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", 'mode = "read-only"\n')
    server = server_for(settings_of("--config", str(config)))
    async with served(server) as (wire, _server):
        await wire.initialize()
        first = await wire.result("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert first["modes"]["currentModeId"] == "read-only"  # the console driver answers
        assert first["configOptions"][0]["currentValue"] == "read-only"
        write(config, 'mode = "auto"\n')
        second = await wire.result("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert second["modes"]["currentModeId"] == "auto"
        assert server.sessions[first["sessionId"]].policy.mode == "read-only"  # kept
        await quiet(wire)
        assert updates(wire, "notice") == [] and wire.texts() == []


async def test_problems_follow_every_new_session_and_warnings_come_once(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", 'mode = "auto"\nshade = 1\n')
    server = server_for(settings_of("--config", str(config)))
    async with served(server) as (wire, _server):
        await wire.initialize(**NOTICES)
        await wire.new_session(str(tmp_path))
        await read_until(wire, "shade")
        [warning] = updates(wire, "notice")
        assert warning["severity"] == "warning"
        assert warning["title"] == (
            "Config file: config.toml:2: shade: unknown key, ignored (a newer acp-sidecar's?)."
        )
        assert str(config) in warning["description"]

        write(config, 'mode = "auto"\nshade = 1\n\nfsync = "sometimes"\n')
        for _ in range(2):
            wire.updates.clear()
            result = await wire.result("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            assert result["modes"]["currentModeId"] == "auto"  # the last good settings
            await read_until(wire, "cannot be used")
            await quiet(wire)
            [notice] = updates(wire, "notice")  # the warning is not repeated
            assert notice["severity"] == "error"
            assert notice["title"] == (
                "Config file error: config.toml:4: fsync: expected one of turn, record, never"
            )
            assert f"- {config}:4: fsync: expected one of" in notice["description"]
            assert "Traceback" not in json.dumps(wire.received)


async def test_without_notices_the_problem_is_an_agent_message(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", "max_tokens = true\n")
    server = server_for(settings_of("--config", str(config)))
    async with served(server) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        await read_until(wire, "cannot be used")
        [text] = wire.texts()
        assert text.startswith("Config file error: config.toml:1: max_tokens")
        assert f"- {config}:1: max_tokens: expected a whole number" in text
        assert all(u["params"]["sessionId"] == session for u in wire.updates)


async def test_a_changed_model_list_is_announced_to_open_sessions(tmp_path: Path) -> None:
    # An endpoint that refuses at once: the listing fails and the configured models stay.
    base = 'base_url = "http://127.0.0.1:9/v1"\n'
    config = write(tmp_path / "config.toml", base + 'models = ["a"]\n')
    server = server_for(settings_of("--config", str(config)))
    async with served(server) as (wire, _server):
        await wire.initialize()
        first = await wire.result("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        [model] = [o for o in first["configOptions"] if o["id"] == "model"]
        assert [v["value"] for v in model["options"]] == ["a"]
        old = server.driver
        assert isinstance(old, ModelDriver)

        write(config, base + 'models = ["a", "b"]\n')
        second = await wire.result("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert server.driver is not old
        [model] = [o for o in second["configOptions"] if o["id"] == "model"]
        assert [v["value"] for v in model["options"]] == ["a", "b"]
        await read_until(wire, '"b"')
        [update] = [
            u["params"]
            for u in wire.updates
            if u["params"]["update"]["sessionUpdate"] == "config_option_update"
        ]
        assert update["sessionId"] == first["sessionId"]


async def test_a_replaced_driver_is_closed_once_its_turns_have_ended() -> None:
    closed: list[str] = []

    class Closing(ScriptDriver):
        def __init__(self, name: str) -> None:
            self.name = name

        async def aclose(self) -> None:
            closed.append(self.name)

    server = AcpServer(lambda: Closing("old"))
    assert isinstance(server.driver, Closing)
    busy = Session(session_id="s", cwd="/")
    busy.running, busy.idle = CancelSignal(), asyncio.Event()
    server.sessions["s"] = busy
    replace_driver(server, lambda: Closing("new"))
    assert server.driver.name == "new"  # type: ignore[attr-defined]
    await asyncio.sleep(0.05)
    assert closed == []  # a turn still runs on it
    busy.running = None
    busy.idle.set()
    await asyncio.sleep(0.05)
    assert closed == ["old"]
    await server.close(0.5)
    assert closed == ["old", "new"]


async def test_a_driver_given_on_the_command_line_is_never_replaced(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", 'model = "a"\n')
    settings = ServeSettings.from_args(
        with_config_file(
            build_parser().parse_args(
                ["--config", str(config), "--driver", "tests.drivers:ScriptDriver"]
            )
        )
    )
    assert settings.driver_pinned
    server = AcpServer(ScriptDriver, settings=settings)
    driver = server.driver
    write(config, 'model = "b"\nmode = "auto"\n')
    refresh_settings(server)
    assert server.driver is driver and server.default_mode == "auto"


async def test_a_loaded_session_shows_a_file_broken_since_in_its_own_mode(tmp_path: Path) -> None:
    from acp_sidecar.store import SessionStore

    config = write(tmp_path / "config.toml", 'mode = "auto"\n')
    settings = settings_of("--config", str(config))
    server = AcpServer(
        default_mode=settings.live.default_mode,
        settings=settings,
        store=lambda: SessionStore(str(tmp_path / "store")),
    )
    async with served(server) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        await quiet(wire)
        write(config, 'mode = "read-only"\nlog_level = "LOUD"\n')
        params = {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        loaded = await wire.result("session/load", params)
        assert loaded["modes"]["currentModeId"] == "auto"  # its log's mode
        await read_until(wire, "cannot be used")
        assert "config.toml:2: log_level: expected one of" in wire.texts()[-1]
