"""Layering the config file under the command line and the environment: the option wins, then
its variable, then the file, then the default — for every key of ``KEYS`` (the table below
must cover each, so a new key cannot go untested) — and the endpoint's key travels with the
endpoint (``acp_sidecar.settings.layering``)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from acp_sidecar.cli import build_parser, with_config_file
from acp_sidecar.settings import KEYS, KEYS_BY_NAME, Key
from acp_sidecar.settings.keys import DEFAULTS
from acp_sidecar.settings.layering import EndpointKey, layered_model_config, model_environment

ENDPOINT_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "MY_KEY", "ACP_SIDECAR_MODEL_INFO")


@attrs.frozen
class Sample:
    """A value of one key in each layer, all different."""

    option: tuple[str, ...]
    """The command line that gives it."""
    parsed: object
    """What the parsed command line holds for it."""
    env: str | None
    """Its variable's value (``None``: the key has no variable)."""
    file: object
    """Its value in the file (as TOML writes it)."""
    from_file: object
    """What the layered command line holds when the file gives it."""


SAMPLES: dict[str, Sample] = {
    "model": Sample(("--model", "m-opt"), "m-opt", "m-env", "m-file", "m-file"),
    "models": Sample(("--models", "a,b"), ["a,b"], "c,d", ["e", "f"], ["e", "f"]),
    "base_url": Sample(
        ("--base-url", "http://opt/v1"),
        "http://opt/v1",
        "http://env/v1",
        "http://file/v1",
        "http://file/v1",
    ),
    "max_turn_requests": Sample(("--max-turn-requests", "3"), 3, "4", 5, 5),
    "max_parallel_tools": Sample(("--max-parallel-tools", "3"), 3, "4", 5, 5),
    "max_tokens": Sample(("--max-tokens", "3"), 3, "4", 0, 0),
    "first_byte_timeout": Sample(("--first-byte-timeout", "3"), 3.0, "4", 4.5, 4.5),
    "budget_cost": Sample(("--budget-cost", "2.5"), 2.5, None, 4, 4),
    "budget_tokens": Sample(("--budget-tokens", "1_000"), 1000, None, 2000, 2000),
    "budget_time": Sample(("--budget-time", "10m"), 600.0, None, 90.5, 90.5),
    "mode": Sample(("--mode", "auto"), "auto", "read-only", "ask", "ask"),
    "allow_outside_workspace": Sample(("--allow-outside-workspace",), True, None, True, True),
    "acp_v2": Sample(("--acp-v2",), True, None, True, True),
    "tools": Sample(("--tools", "opt:TOOLS"), ["opt:TOOLS"], None, ["file:TOOLS"], ["file:TOOLS"]),
    "pass_env": Sample(("--pass-env", "OPT"), ["OPT"], "ENV", ["FILE"], ["FILE"]),
    "fsync": Sample(("--fsync", "record"), "record", None, "never", "never"),
    "mcp_start_timeout": Sample(("--mcp-start-timeout", "3"), 3.0, None, 4.5, 4.5),
    "store": Sample(("--store", "/opt/store"), "/opt/store", "/env/store", "/f/s", "/f/s"),
    "log_level": Sample(("--log-level", "debug"), "DEBUG", None, "error", "ERROR"),
    "log_file": Sample(("--log-file", "/opt.log"), "/opt.log", None, "/file.log", "/file.log"),
}
"""One sample per key with an option (``api_key`` and ``api_key_env`` have none: see the
endpoint-key tests)."""

OPTION_KEYS = [key for key in KEYS if key.option is not None]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No variable a key or the endpoint reads is set."""
    for key in KEYS:
        if key.env is not None:
            monkeypatch.delenv(key.env, raising=False)
    for name in ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield monkeypatch


def write_config(path: Path, values: dict[str, object], mode: int = 0o600) -> Path:
    # JSON writes strings, numbers, booleans and lists as TOML reads them.
    lines = [f"{name} = {json.dumps(value)}" for name, value in values.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.chmod(mode)
    return path


def parsed(*argv: str) -> argparse.Namespace:
    return with_config_file(build_parser().parse_args(list(argv)))


def test_every_key_with_an_option_has_a_sample_and_names_its_option() -> None:
    assert sorted(SAMPLES) == sorted(key.name for key in OPTION_KEYS)
    parser = build_parser()
    options = {option for action in parser._actions for option in action.option_strings}
    for key in OPTION_KEYS:
        assert key.option in options, key
        assert key.option == "--" + key.name.replace("_", "-")


@pytest.mark.parametrize("key", OPTION_KEYS, ids=lambda key: key.name)
def test_the_option_wins_over_the_variable_and_the_file(
    key: Key, tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    sample = SAMPLES[key.name]
    config = write_config(tmp_path / "config.toml", {key.name: sample.file})
    if key.env is not None and sample.env is not None:
        clean_env.setenv(key.env, sample.env)
    args = parsed("--config", str(config), *sample.option)
    assert getattr(args, key.dest) == sample.parsed


@pytest.mark.parametrize(
    "key", [k for k in OPTION_KEYS if k.env is not None], ids=lambda key: key.name
)
def test_the_variable_wins_over_the_file(
    key: Key, tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    sample = SAMPLES[key.name]
    assert key.env is not None and sample.env is not None
    config = write_config(tmp_path / "config.toml", {key.name: sample.file})
    clean_env.setenv(key.env, sample.env)
    args = parsed("--config", str(config))
    if key.name == "mode":  # read from its variable here
        assert args.mode == sample.env
    else:  # left to the code that reads the variable itself: the file does not fill it in
        assert getattr(args, key.dest) is None


@pytest.mark.parametrize("key", OPTION_KEYS, ids=lambda key: key.name)
def test_the_file_wins_over_the_default(
    key: Key, tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    sample = SAMPLES[key.name]
    config = write_config(tmp_path / "config.toml", {key.name: sample.file})
    args = parsed("--config", str(config))
    assert getattr(args, key.dest) == sample.from_file
    assert sample.from_file != DEFAULTS.get(key.name)
    assert args.config_problems == ()


@pytest.mark.parametrize("key", OPTION_KEYS, ids=lambda key: key.name)
def test_without_any_layer_the_default(
    key: Key, tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "config.toml", {})
    args = parsed("--config", str(config))
    assert getattr(args, key.dest) == DEFAULTS.get(key.name)


def test_a_relative_path_in_the_file_is_relative_to_the_file(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "config.toml", {"store": "sessions", "log_file": "x.log"})
    args = parsed("--config", str(config))
    assert (args.store, args.log_file) == (str(tmp_path / "sessions"), str(tmp_path / "x.log"))


def test_a_list_comes_whole_from_one_layer(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    config = write_config(tmp_path / "config.toml", {"pass_env": ["A", "B"], "tools": ["x:Y"]})
    args = parsed("--config", str(config), "--pass-env", "C")
    assert args.pass_env == ["C"]  # never ["C", "A", "B"]
    assert args.tools == ["x:Y"]


def test_a_bad_mode_variable_is_refused_outside_serve_and_left_out_by_serve(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "config.toml", {"mode": "auto"})
    clean_env.setenv("ACP_SIDECAR_MODE", "yolo")
    with pytest.raises(ValueError, match="ACP_SIDECAR_MODE 'yolo': expected one of"):
        parsed("--config", str(config), "tools")
    args = parsed("--config", str(config))  # serve: the file's mode, the problem told later
    assert args.mode == "auto"


# -- the endpoint's key travels with the endpoint ----------------------------------------------


def endpoint(args: argparse.Namespace) -> EndpointKey:
    key = args.endpoint_key
    assert isinstance(key, EndpointKey)
    return key


def test_a_base_url_from_the_command_line_takes_openai_api_key_whatever_the_file_says(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    config = write_config(
        tmp_path / "config.toml",
        {"base_url": "http://file/v1", "api_key_env": "MY_KEY", "api_key": "sk-stored"},
    )
    clean_env.setenv("OPENAI_API_KEY", "sk-env")
    clean_env.setenv("MY_KEY", "sk-mine")
    args = parsed("--config", str(config), "--base-url", "http://opt/v1")
    assert endpoint(args) == EndpointKey("sk-env", "OPENAI_API_KEY")
    assert args.base_url == "http://opt/v1"


def test_a_base_url_from_the_variable_takes_openai_api_key_too(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    config = write_config(
        tmp_path / "config.toml", {"base_url": "http://file/v1", "api_key": "sk-stored"}
    )
    clean_env.setenv("OPENAI_BASE_URL", "http://env/v1")
    args = parsed("--config", str(config))
    assert endpoint(args) == EndpointKey(None, "OPENAI_API_KEY")  # unset: no key at all
    assert "OPENAI_API_KEY" not in model_environment(args, {"OPENAI_API_KEY": "   "})


def test_the_file_s_endpoint_takes_its_api_key_env_then_its_stored_key(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-env")
    clean_env.setenv("MY_KEY", "sk-mine")
    named = write_config(
        tmp_path / "named.toml",
        {"base_url": "http://file/v1", "api_key_env": "MY_KEY", "api_key": "sk-stored"},
    )
    assert endpoint(parsed("--config", str(named))) == EndpointKey("sk-mine", "MY_KEY")
    stored = write_config(tmp_path / "stored.toml", {"api_key": "sk-stored"})
    args = parsed("--config", str(stored))
    assert endpoint(args) == EndpointKey("sk-stored", None)
    assert endpoint(args).source == "stored in the config file"
    assert "sk-stored" not in repr(args.endpoint_key) and "sk-stored" not in repr(args)
    assert model_environment(args, os.environ)["OPENAI_API_KEY"] == "sk-stored"
    plain = write_config(tmp_path / "plain.toml", {"model": "m"})
    assert endpoint(parsed("--config", str(plain))) == EndpointKey("sk-env", "OPENAI_API_KEY")


def test_the_file_s_other_url_without_a_key_setting_sends_no_key(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    """$OPENAI_API_KEY goes to OpenAI's URL, or to a URL named beside it (option or
    variable), never to a third party's URL that only the file names."""
    clean_env.setenv("OPENAI_API_KEY", "sk-env")
    other = write_config(tmp_path / "other.toml", {"base_url": "https://llm.example.com/v1"})
    args = parsed("--config", str(other))
    assert endpoint(args) == EndpointKey(None, None)
    assert endpoint(args).source == "none"
    assert "OPENAI_API_KEY" not in model_environment(args, os.environ)
    openai = write_config(tmp_path / "openai.toml", {"base_url": "https://API.openai.com/v1"})
    assert endpoint(parsed("--config", str(openai))) == EndpointKey("sk-env", "OPENAI_API_KEY")
    said = write_config(
        tmp_path / "said.toml",
        {"base_url": "https://llm.example.com/v1", "api_key_env": "OPENAI_API_KEY"},
    )
    assert endpoint(parsed("--config", str(said))) == EndpointKey("sk-env", "OPENAI_API_KEY")


def test_a_stored_key_in_a_file_others_can_read_is_not_read(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "config.toml", {"api_key": "sk-stored"}, mode=0o644)
    args = parsed("--config", str(config))  # serve goes on without the file
    assert endpoint(args) == EndpointKey(None, "OPENAI_API_KEY")
    [problem] = args.config_problems
    assert problem.key == "api_key" and "chmod 600" in problem.message
    assert "sk-stored" not in str(problem)


def test_the_first_byte_timeout_reaches_the_model_config_from_each_layer(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "config.toml", {"model": "m", "first_byte_timeout": 90})

    def waited(*argv: str) -> float:
        model = layered_model_config(parsed("--config", str(config), *argv), os.environ)
        assert model is not None
        return model.first_byte_timeout

    assert waited() == 90.0
    clean_env.setenv("ACP_SIDECAR_FIRST_BYTE_TIMEOUT", "60")
    assert waited() == 60.0
    assert waited("--first-byte-timeout", "5") == 5.0


def test_the_keys_table_names_each_key_once() -> None:
    assert len(KEYS_BY_NAME) == len(KEYS)


def test_the_help_says_the_order_and_what_a_running_server_cannot_re_read() -> None:
    from acp_sidecar.server.settings import RESTART_KEYS

    text = " ".join(build_parser().format_help().split())
    assert "in order: the command line, the environment, the config file" in text
    assert "the file's key comes between the variable it names and that default" in text
    for key in OPTION_KEYS:
        assert f"{key.option} " in text or f"{key.option}\n" in text, key
    restart = text[text.index("reads it again when it changes") :]
    for name in RESTART_KEYS:
        assert ("logging" if name.startswith("log_") else name) in restart, name
