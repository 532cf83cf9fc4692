"""``acp-sidecar doctor`` as a user runs it (in process; as another user, a subprocess), against the scripted
OpenAI-compatible server: a working endpoint, a broken one, config files that cannot be
used, no model at all. The key is never printed."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import unprivileged
from tests.agent.model.fake_openai import (
    ScriptedOpenAI,
    call,
    calling,
    listed,
    serve_in_thread,
    think,
)
from tests.in_process import Ran, run_cli

KEY = "sk-doctor-secret-0123456789"
CLEARED = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ACP_SIDECAR_MODEL",
    "ACP_SIDECAR_MODELS",
    "ACP_SIDECAR_MODEL_INFO",
    "ACP_SIDECAR_CONFIG",
    "DEEPSEEK_API_KEY",
)


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with serve_in_thread() as running:
        yield running


@pytest.fixture
def rg_bin(tmp_path: Path) -> Path:
    """A directory whose ``rg`` answers ``--version`` as ripgrep does (the suite must not
    depend on ripgrep being installed)."""
    directory = tmp_path / "bin"
    directory.mkdir()
    rg = directory / "rg"
    rg.write_text("#!/bin/sh\necho 'ripgrep 14.1.0'\necho '+PCRE2'\n")
    rg.chmod(0o755)
    return directory


def doctor(*args: str, env: dict[str, str] | None = None, path: Path | None = None) -> Ran:
    environment: dict[str, str | None] = dict.fromkeys(CLEARED)
    environment["COLUMNS"] = "300"  # rich wraps nothing: the tests read whole lines
    if path is not None:
        environment["PATH"] = str(path)
    return run_cli("doctor", *args, env=environment | (env or {}))


def findings(done: Ran | subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    parsed: list[dict[str, Any]] = json.loads(done.stdout)
    return parsed


def script_a_working_answer(server: ScriptedOpenAI) -> None:
    server.script(
        calling(
            *think("Time: call get_time."),
            call(0, call_id="call_1", name="get_time", arguments='{"timezone"'),
            call(0, arguments=': "UTC"}'),
        )
    )


def private_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    path.chmod(0o600)
    return path


def refused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_working_endpoint_passes_every_check(
    server: ScriptedOpenAI, tmp_path: Path, rg_bin: Path
) -> None:
    server.models = listed("test-model", "other-model")
    script_a_working_answer(server)
    script_a_working_answer(server)
    options = ("--model", "test-model", "--base-url", server.base_url)
    store = ("--store", str(tmp_path / "sessions"))
    env = {"OPENAI_API_KEY": KEY}

    done = doctor(*options, *store, "--json", env=env, path=rg_bin)
    assert done.returncode == 0, done.stdout + done.stderr
    found = findings(done)
    assert [f["name"] for f in found] == [
        "config file",
        "ACP v2 (preview)",
        "model",
        "key present",
        "reachable",
        "key",
        "models listed",
        "model answers",
        "streaming",
        "tool calls",
        "reasoning",
        "first byte",
        "ripgrep",
        "store writable",
    ]
    assert {f["status"] for f in found} == {"ok"}, found
    by_name = {f["name"]: f for f in found}
    assert by_name["key present"]["detail"] == "From $OPENAI_API_KEY (not shown)."
    assert by_name["ripgrep"]["detail"] == f"ripgrep 14.1.0 ({rg_bin / 'rg'})."
    assert by_name["model"]["detail"] == (
        f"test-model (from --model) at {server.base_url} (from --base-url)."
    )
    assert by_name["store writable"]["detail"].startswith(f"{tmp_path / 'sessions'} (from --store)")

    done = doctor(*options, *store, env=env, path=rg_bin)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.strip().startswith("✓ tool calls: The model called get_time") for line in lines)
    assert "✗" not in done.stdout and "fix:" not in done.stdout
    assert lines[-1] == "Everything checked works."
    assert KEY not in done.stdout + done.stderr
    assert done.stderr == ""
    assert len(server.requests) == 2 and server.listings == 2
    assert list(tmp_path.iterdir()) == [rg_bin]  # the store check left nothing behind


def test_a_broken_endpoint_exits_1_and_prints_the_fix(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{refused_port()}/v1"
    done = doctor("--model", "qwen3", "--base-url", url, env={"OPENAI_API_KEY": KEY})
    assert done.returncode == 1
    out = done.stdout
    assert f"✗ reachable: Could not reach the model endpoint {url}" in out
    assert "fix: Start the server, or correct the base URL (--base-url" in out
    assert "– key, models listed, model answers, streaming, tool calls, reasoning: " in out
    assert out.splitlines()[-1].startswith("1 check failed")
    assert KEY not in out + done.stderr
    assert "Traceback" not in out + done.stderr


def test_a_refused_key_is_never_printed(server: ScriptedOpenAI, tmp_path: Path) -> None:
    server.key = "sk-the-right-one-000000"  # the server quotes the key it was sent
    server.models = listed("test-model")
    config = private_config(
        tmp_path,
        f'model = "test-model"\nbase_url = "{server.base_url}"\napi_key = "{KEY}"\n',
    )
    for output in ((), ("--json",)):
        done = doctor("--config", str(config), *output)
        assert done.returncode == 1
        assert KEY not in done.stdout + done.stderr
        assert "[API key]" in done.stdout  # where the server echoed it
    assert "✓ key present: Stored in the config file (not shown)." in done_text(config)
    assert server.requests == []  # a 401 on the listing: no chat request


def done_text(config: Path) -> str:
    return doctor("--config", str(config), "--offline").stdout


def test_a_key_from_the_variable_the_file_names(tmp_path: Path) -> None:
    config = private_config(
        tmp_path,
        'model = "deepseek-chat"\nbase_url = "https://api.deepseek.com/v1"\n'
        'api_key_env = "DEEPSEEK_API_KEY"\n',
    )
    done = doctor("--config", str(config), "--offline", env={"DEEPSEEK_API_KEY": KEY})
    assert done.returncode == 0, done.stdout
    out = done.stdout
    assert "✓ key present: From $DEEPSEEK_API_KEY (not shown)." in out
    assert (
        "✓ model: deepseek-chat (from the config file) at https://api.deepseek.com/v1 "
        "(from the config file)." in out
    )
    assert "– endpoint: Not asked (--offline)." in out
    assert f"✓ config file: {config} (named explicitly)." in out
    assert KEY not in out + done.stderr


def test_a_missing_key_for_a_remote_endpoint_is_a_warning(tmp_path: Path) -> None:
    done = doctor("--model", "gpt-4.1", "--offline")
    assert done.returncode == 0
    assert "! key present: None: $OPENAI_API_KEY is not set" in done.stdout
    assert "fix: Set OPENAI_API_KEY in the environment" in done.stdout


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ('model = "m"\nmax_tokens = "many"\n', ":2: max_tokens: expected a whole number"),
        ("model = \n", ":1: is not valid TOML"),
    ],
)
def test_a_malformed_config_file_shows_file_line_and_key(
    tmp_path: Path, text: str, shown: str
) -> None:
    config = private_config(tmp_path, text)
    done = doctor("--config", str(config), "--offline")
    assert done.returncode == 1
    assert f"✗ config file: {config}{shown}" in done.stdout
    assert "fix: Correct it in the file" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr == ""
    # The file is set aside, as serve sets it aside: no model, the console answers.
    assert "– model: None configured" in done.stdout


def test_a_key_in_a_file_others_can_read_fails_with_its_own_fix(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'model = "m"\napi_key = "{KEY}"\n')
    config.chmod(0o644)
    done = doctor("--config", str(config), "--offline", "--json")
    assert done.returncode == 1
    (problem,) = [f for f in findings(done) if f["name"] == "config file"]
    assert problem["status"] == "failed"
    assert problem["detail"].startswith(f"{config}:2: api_key: ")
    assert problem["fix"] == f"chmod 600 {config}"
    assert KEY not in done.stdout


def test_an_unknown_key_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    config = private_config(tmp_path, 'modle = "m"\n')
    done = doctor("--config", str(config), "--offline")
    assert done.returncode == 0
    assert f"! config file: {config}:1: modle: unknown key" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("Nothing failed;")


def test_no_model_is_not_a_failure_and_asks_no_endpoint(rg_bin: Path, tmp_path: Path) -> None:
    done = doctor("--store", str(tmp_path / "s"), path=rg_bin)
    assert done.returncode == 0
    out = done.stdout
    assert "– model: None configured: the console answers prompts" in out
    assert "fix: To answer with a model: `acp-sidecar configure`" in out
    assert "Endpoint" not in out
    assert out.splitlines()[-1] == "Everything checked works."


def test_without_ripgrep_the_user_is_told_what_they_lose(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    done = doctor("--offline", "--json", path=empty)
    (rg,) = [f for f in findings(done) if f["name"] == "ripgrep"]
    assert rg["status"] == "warning"
    assert rg["detail"] == (
        "Not on PATH, so the grep tool searches in Python instead (the same results, slower "
        "in large trees)."
    )
    assert rg["fix"].startswith("Install ripgrep")
    assert done.returncode == 0


def test_a_store_that_cannot_be_written_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    done = doctor("--store", str(blocker / "sessions"), "--offline", "--json")
    assert done.returncode == 1
    (store,) = [f for f in findings(done) if f["name"] == "store writable"]
    assert store["status"] == "failed"
    assert (
        store["detail"] == f"{blocker / 'sessions'} (from --store): {blocker} is not a directory."
    )
    assert "--store DIR" in store["fix"]


def test_a_read_only_store_fails(tmp_path: Path) -> None:
    """Root writes into any directory, so the doctor runs as ``nobody`` here when the suite
    runs as root (as in CI), else as the user running it."""
    if os.geteuid() == 0:
        unprivileged.require()
        with unprivileged.shared_directory() as shared:
            store = shared / "sessions"
            store.mkdir()
            os.chown(store, unprivileged.NOBODY, unprivileged.NOBODY)
            store.chmod(stat.S_IRUSR | stat.S_IXUSR)
            done = subprocess.run(
                unprivileged.command("doctor", "--offline"),
                capture_output=True,
                text=True,
                timeout=60,
                env=unprivileged.environment(
                    ACP_SIDECAR_STORE=str(store),
                    XDG_CONFIG_HOME=str(shared),
                    COLUMNS="300",
                ),
            )
    else:
        store = tmp_path / "sessions"
        store.mkdir()
        store.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            done = doctor("--offline", env={"ACP_SIDECAR_STORE": str(store)})
        finally:
            store.chmod(0o700)
    assert done.returncode == 1, done.stderr
    assert f"✗ store writable: {store} (from $ACP_SIDECAR_STORE) cannot be written" in done.stdout


def test_a_remote_url_the_file_names_without_a_key_is_told_how_to_name_one(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model = "m"\nbase_url = "https://llm.example.com/v1"\n')
    done = doctor(
        "--config", str(config), "--offline", env={"OPENAI_API_KEY": "sk-should-not-travel-1"}
    )
    assert "the config file names this URL but no key" in done.stdout
    assert 'api_key_env = "NAME"' in done.stdout
    assert "sk-should-not-travel-1" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("options", "config", "detail"),
    [
        ((), None, "Off (the default): every client is served ACP v1."),
        (
            ("--acp-v2",),
            None,
            "On (from --acp-v2): a client asking for v2 gets it (session set-up only so far).",
        ),
        (
            (),
            "acp_v2 = true\n",
            "On (from the config file): a client asking for v2 gets it "
            "(session set-up only so far).",
        ),
        ((), "acp_v2 = false\n", "Off (from the config file): every client is served ACP v1."),
    ],
)
def test_doctor_says_whether_acp_v2_is_on(
    tmp_path: Path, rg_bin: Path, options: tuple[str, ...], config: str | None, detail: str
) -> None:
    given = ("--config", str(private_config(tmp_path, config))) if config is not None else ()
    store = ("--store", str(tmp_path / "sessions"))
    done = doctor(*given, *options, *store, "--json", "--offline", path=rg_bin)
    (found,) = [f for f in findings(done) if f["name"] == "ACP v2 (preview)"]
    assert (found["status"], found["detail"]) == ("ok", detail)
