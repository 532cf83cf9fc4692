"""``acp-sidecar configure`` from a script: the flags give the values, nothing is asked.

The command runs in process (the command line's ``main``), with standard input a pipe, so it
asks nothing. The file is read back with ``read_settings``.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from acp_sidecar.settings import ConfigLocation, read_settings
from tests.in_process import Ran, run_cli

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-7f3a9c1e5b"


def configure(
    *args: str, stdin: str = "", env: dict[str, str] | None = None, unset: str = ""
) -> Ran:
    environment: dict[str, str | None] = {"NO_COLOR": "1", "COLUMNS": "100", **(env or {})}
    if unset:
        environment[unset] = None
    return run_cli("configure", *args, cwd=ROOT, env=environment, stdin=stdin)


def settings(path: Path):  # type: ignore[no-untyped-def]
    return read_settings(ConfigLocation(path, explicit=True))


def test_writes_a_new_file_from_a_preset_private_and_valid(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config.toml"
    done = configure("--config", str(path), "--provider", "deepseek", "--no-check", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"Wrote {path}." in done.stdout
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    read = settings(path)
    assert dict(read.values) == {
        "base_url": "https://api.deepseek.com",
        "api_key_env": "DEEPSEEK_API_KEY",
        "model": "deepseek-v4-flash",
    }
    assert read.api_key is None and read.warnings == ()


def test_after_writing_it_says_what_to_run_next(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    done = configure("--config", str(path), "--provider", "ollama", "--model", "q", "--no-check")
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()
    wrote = next(i for i, line in enumerate(said) if line.startswith(f"Wrote {path}."))
    after = "\n".join(said[wrote + 1 :])
    assert f"acp-sidecar doctor --config {path}" in after
    assert after.index("doctor") < after.index('"agent_servers"')  # check it, then use it
    snippet = after[after.index("{") : after.rindex("}") + 1]
    command = json.loads(snippet)["agent_servers"]["ACP Sidecar"]["command"]
    assert Path(command).name == "acp-sidecar" and Path(command).is_absolute()


def test_says_when_the_named_variable_is_not_set(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    done = configure(
        "--config",
        str(path),
        "--provider",
        "openrouter",
        "--model",
        "some/model",
        "--no-check",
        unset="OPENROUTER_API_KEY",
    )
    assert done.returncode == 0, done.stderr
    assert "$OPENROUTER_API_KEY is not set now" in done.stdout


def test_the_config_environment_variable_picks_the_file(tmp_path: Path) -> None:
    path = tmp_path / "from-env.toml"
    done = configure(
        "--provider",
        "ollama",
        "--model",
        "qwen3",
        "--no-check",
        env={"ACP_SIDECAR_CONFIG": str(path)},
    )
    assert done.returncode == 0, done.stderr
    read = settings(path)
    assert read.values["base_url"] == "http://localhost:11434/v1"
    assert "api_key_env" not in read.values and read.api_key is None


def test_keeps_an_existing_files_comments_and_other_keys(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "# my settings\n"
        'mode = "auto"  # I trust it\n'
        "max_tokens = 4096\n"
        'base_url = "https://api.openai.com/v1"\n'
        'model = "old-model"\n'
        "\n"
        '[model_info."old-model"]\n'
        "context = 128000\n"
        "input = 2\n"
        "output = 8\n"
        'currency = "USD"\n'
    )
    done = configure(
        "--config",
        str(path),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--no-api-key",
        "--model",
        "local-model",
        "--models",
        "a,b",
        "--models",
        "c",
        "--no-check",
    )
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    assert "# my settings\n" in text and 'mode = "auto"  # I trust it\n' in text
    read = settings(path)
    assert read.values["mode"] == "auto" and read.values["max_tokens"] == 4096
    assert read.values["base_url"] == "http://127.0.0.1:9/v1"
    assert read.values["model"] == "local-model"
    assert read.values["models"] == ("local-model", "a", "b", "c")
    assert [p.name for p in read.model_info] == ["old-model"]  # other tables are kept
    assert read.model_info[0].prices is not None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_unchanged_endpoint_keeps_the_files_key_and_models(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "MY_KEY"\nmodels = ["x", "y"]\n'
    )
    done = configure("--config", str(path), "--model", "x", "--no-check")
    assert done.returncode == 0, done.stderr
    read = settings(path)
    assert read.values["api_key_env"] == "MY_KEY"
    assert read.values["models"] == ("x", "y") and read.values["model"] == "x"


def test_a_new_endpoint_does_not_inherit_the_files_key(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('base_url = "http://127.0.0.1:9/v1"\napi_key_env = "MY_KEY"\nmodel = "m"\n')
    done = configure("--config", str(path), "--base-url", "http://127.0.0.1:10/v1", "--no-check")
    assert done.returncode == 2
    assert done.stderr == (
        "acp-sidecar configure: say how the endpoint's key is found: --api-key-env NAME, "
        "--api-key-stdin or --no-api-key (or run it in a terminal to be asked)\n"
    )
    assert "127.0.0.1:9/" in path.read_text()


def test_api_key_stdin_stores_the_key_and_never_shows_it(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('api_key_env = "OLD_VARIABLE"\n')
    path.chmod(0o644)
    done = configure(
        "--config",
        str(path),
        "--provider",
        "openai",
        "--api-key-stdin",
        "--model",
        "gpt-test",
        "--no-check",
        stdin=SECRET + "\n",
    )
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout and SECRET not in done.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    read = settings(path)
    assert read.api_key == SECRET
    assert "api_key_env" not in read.values  # it would win over the stored key


def test_api_key_stdin_with_nothing_on_stdin_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    done = configure(
        "--config", str(path), "--provider", "openai", "--api-key-stdin", "--no-check", stdin="\n"
    )
    assert done.returncode == 2
    assert "--api-key-stdin: standard input held no key" in done.stderr
    assert not path.exists()


def test_a_key_is_never_taken_from_the_command_line(tmp_path: Path) -> None:
    done = configure("--config", str(tmp_path / "c.toml"), "--api-key", SECRET)
    assert done.returncode == 2
    assert not (tmp_path / "c.toml").exists()


def test_refuses_a_malformed_existing_file_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    original = '# mine\nmodel = "m"\nmax_tokens = "many"\n'
    path.write_text(original)
    done = configure("--config", str(path), "--provider", "ollama", "--model", "q", "--no-check")
    assert done.returncode == 1
    assert f"{path}:3: max_tokens: expected a whole number of at least 0" in done.stderr
    assert "or write another file with --config PATH" in done.stderr
    assert path.read_text() == original


def test_refuses_a_file_that_is_not_toml(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("model = \n")
    done = configure("--config", str(path), "--provider", "ollama", "--model", "q", "--no-check")
    assert done.returncode == 1
    assert f"{path}:1: is not valid TOML" in done.stderr
    assert path.read_text() == "model = \n"


def test_a_stored_key_in_a_readable_file_is_refused_without_echoing_it(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f'api_key = "{SECRET}"\n')
    path.chmod(0o644)
    done = configure("--config", str(path), "--provider", "ollama", "--model", "q", "--no-check")
    assert done.returncode == 1
    assert f"chmod 600 {path}" in done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_missing_values_are_usage_errors_naming_the_flag(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    cases = {
        (): "say which endpoint to use: --provider NAME or --base-url URL",
        ("--provider", "custom"): "--provider custom needs --base-url URL",
        ("--provider", "ollama"): "name the default model: --model NAME",
        ("--base-url", "ftp://x"): "--base-url ftp://x: expected an http:// or https:// URL",
        ("--provider", "ollama", "--api-key-env", "1BAD"): (
            "--api-key-env 1BAD: expected an environment variable's name"
        ),
    }
    for flags, message in cases.items():
        done = configure("--config", str(path), *flags, "--no-check", "--yes")
        assert done.returncode == 2, flags
        assert message in done.stderr, (flags, done.stderr)
    assert not path.exists()
