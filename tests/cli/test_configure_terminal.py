"""``acp-sidecar configure`` in a terminal: a pseudo-terminal (pexpect) answers its prompts.

Every expectation waits generously (a loaded machine starts Python slowly); rich's styling is
switched off (``TERM=dumb``, ``NO_COLOR``) and the terminal is wide, so that no line wraps.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from pathlib import Path

import pexpect
import pytest

from acp_sidecar.settings import ConfigLocation, read_settings

pytestmark = pytest.mark.process  # every test here starts an interpreter

ROOT = Path(__file__).resolve().parents[2]
WAIT = 30
SECRET = "sk-typed-4e8d2b9a61"


def spawn(
    *args: str, env: dict[str, str] | None = None, dimensions: tuple[int, int] = (50, 250)
) -> tuple[pexpect.spawn, io.StringIO]:
    """The command in a pseudo-terminal, and everything it printed (as it comes)."""
    shown = io.StringIO()
    child = pexpect.spawn(
        sys.executable,
        ["-m", "acp_sidecar", "configure", *args],
        cwd=str(ROOT),
        env={**os.environ, "TERM": "dumb", "NO_COLOR": "1", **(env or {})},
        encoding="utf-8",
        timeout=WAIT,
        dimensions=dimensions,
    )
    child.logfile_read = shown
    return child, shown


def answer(child: pexpect.spawn, prompt: str, reply: str) -> None:
    child.expect_exact(prompt)
    child.sendline(reply)


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None, child.signalstatus
    return int(child.exitstatus)


def test_the_whole_flow_without_a_check_writes_what_was_answered(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('# kept\nmode = "read-only"\n')
    child, shown = spawn("--config", str(path), "--no-check")
    answer(child, "Provider (number or name)", "4")  # Ollama
    answer(child, "Base URL (http://localhost:11434/v1)", "")
    answer(child, "API key [env/file/none] (none)", "")
    answer(child, "Default model (number or name)", "qwen3")
    answer(child, "Other models for the picker", "llama3, qwen3")
    answer(child, "Set the models' context window and reasoning?", "y")
    answer(child, "qwen3: context window in tokens (-: unknown) (-)", "40960")
    answer(child, "llama3: context window in tokens (-: unknown) (-)", "lots")
    answer(child, "Expected a whole number of tokens.", "")
    child.expect_exact("will read:")
    child.expect_exact('base_url = "http://localhost:11434/v1"')
    answer(child, "Write", "y")
    child.expect_exact(f"Wrote {path}.")
    assert finish(child) == 0
    text = path.read_text()
    assert text.startswith('# kept\nmode = "read-only"\n')
    read = read_settings(ConfigLocation(path, explicit=True))
    assert read.values["base_url"] == "http://localhost:11434/v1"
    assert read.values["model"] == "qwen3"
    assert read.values["models"] == ("qwen3", "llama3")
    assert "api_key_env" not in read.values and read.api_key is None
    assert [(p.name, p.context_window) for p in read.model_info] == [("qwen3", 40960)]
    assert "Its values are the defaults" in shown.getvalue()


def test_a_typed_key_is_stored_unseen_and_the_preview_hides_it(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    child, shown = spawn("--config", str(path), "--no-check")
    answer(child, "Provider (number or name)", "custom")
    answer(child, "Base URL", "not a url")
    answer(child, "Expected an http:// or https:// URL with a host.", "http://127.0.0.1:9/v1")
    answer(child, "API key [env/file/none]", "file")
    child.expect_exact("which only you can read (mode 0600)")
    answer(child, "API key:", SECRET)
    answer(child, "Default model (number or name)", "m1")
    answer(child, "Other models for the picker", "")
    answer(child, "Set the models' context window and reasoning?", "")
    child.expect_exact('api_key = "<hidden>"')
    answer(child, "Write", "y")
    assert finish(child) == 0
    assert SECRET not in shown.getvalue()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    read = read_settings(ConfigLocation(path, explicit=True))
    assert read.api_key == SECRET and read.values["model"] == "m1"
    assert "models" not in read.values


def test_a_base_url_password_is_never_shown_in_the_default_or_the_preview(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.toml"
    secret = "pw-never-shown-0123"
    url = f"http://proxy-user:{secret}@127.0.0.1:9/v1"
    path.write_text(f'base_url = "{url}"\nmodel = "m2"\n')
    path.chmod(0o600)
    child, shown = spawn("--config", str(path), "--no-check")
    answer(child, "Provider (number or name)", "")
    answer(child, "Base URL (http://proxy-user:<hidden>@127.0.0.1:9/v1)", "")
    answer(child, "API key [env/file/none]", "none")
    answer(child, "Default model (number or name) (m2)", "")
    answer(child, "Other models for the picker", "")
    answer(child, "Set the models' context window and reasoning?", "n")
    child.expect_exact('base_url = "http://proxy-user:<hidden>@127.0.0.1:9/v1"')
    answer(child, "Write", "y")
    assert finish(child) == 0
    assert secret not in shown.getvalue()
    assert read_settings(ConfigLocation(path, explicit=True)).values["base_url"] == url


def test_an_existing_files_values_are_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        'base_url = "https://api.deepseek.com"\napi_key_env = "MY_DEEPSEEK"\nmodel = "m2"\n'
    )
    original = path.read_text()
    child, _shown = spawn("--config", str(path), "--no-check", env={"MY_DEEPSEEK": "x"})
    answer(child, "Provider (number or name) (deepseek)", "")
    answer(child, "Base URL (https://api.deepseek.com)", "")
    answer(child, "API key [env/file/none] (env)", "")
    answer(child, "Environment variable (MY_DEEPSEEK)", "")
    child.expect_exact("$MY_DEEPSEEK is set now.")
    answer(child, "Default model (number or name) (m2)", "")
    answer(child, "Other models for the picker", "")
    answer(child, "Set the models' context window and reasoning?", "n")
    answer(child, "Write", "n")
    child.expect_exact("Nothing was written.")
    assert finish(child) == 1
    assert path.read_text() == original


def test_ctrl_c_and_end_of_input_write_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    child, _shown = spawn("--config", str(path), "--no-check")
    answer(child, "Provider (number or name)", "1")
    child.expect_exact("Base URL")
    child.sendintr()
    child.expect_exact("interrupted; nothing was written.")
    assert finish(child) == 130
    child, _shown = spawn("--config", str(path), "--no-check")
    child.expect_exact("Provider (number or name)")
    child.sendeof()
    child.expect_exact("input ended; nothing was written.")
    assert finish(child) == 1
    assert not path.exists()


def test_api_key_stdin_refuses_a_terminal_where_the_key_would_echo(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    child, _shown = spawn("--config", str(path), "--provider", "openai", "--api-key-stdin")
    child.expect_exact("--api-key-stdin reads the key from a pipe")
    assert finish(child) == 2
    assert not path.exists()


def test_a_narrow_terminal_gets_lines_wrapped_between_words(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    child, shown = spawn("--config", str(path), "--no-check", dimensions=(50, 60))
    answer(child, "Provider (number or name)", "openai")
    answer(child, "Base URL", "")
    child.expect_exact("API key [env/file/none]")
    child.sendintr()
    child.expect_exact("nothing was written.")
    assert finish(child) == 130
    lines = shown.getvalue().replace("\r\n", "\n").split("\n")
    # Every line fits, so the terminal never breaks one inside a word ("env\nironment").
    assert max(len(line) for line in lines) <= 60, [line for line in lines if len(line) > 60]
    said = " ".join(line.strip() for line in lines)
    assert "The API key: read from an environment variable (env)" in said
