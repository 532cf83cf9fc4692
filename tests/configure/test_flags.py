"""The answers the script flags give: completed from the file and the preset, never guessed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from acp_sidecar.agent.model.config import ModelProfile
from acp_sidecar.cli import build_parser
from acp_sidecar.command_line.configure_options import PROVIDER_CHOICES
from acp_sidecar.configure.answers import (
    KeyFromEnv,
    KeyStored,
    ModelDescription,
    NoKey,
    file_changes,
)
from acp_sidecar.configure.command import run_configure
from acp_sidecar.configure.flags import (
    ConfigureOptions,
    UsageError,
    read_stdin_key,
    scripted_answers,
    split_names,
)
from acp_sidecar.configure.interactive import Flow
from acp_sidecar.configure.presets import PRESETS, PRESETS_BY_ID, preset_for_url
from acp_sidecar.settings import ConfigLocation, FileSettings, read_settings

LOCATION = ConfigLocation(Path("/nowhere/config.toml"), explicit=False)
EMPTY = FileSettings(LOCATION)


def parsed(*flags: str) -> ConfigureOptions:
    return ConfigureOptions.from_args(build_parser().parse_args(["configure", *flags]))


def file_with(**values: object) -> FileSettings:
    return FileSettings(LOCATION, exists=True, values=values)


def test_the_parser_fills_the_options() -> None:
    options = parsed(
        "--provider", "vllm", "--model", "q", "--models", "a, b", "--models", "a,c", "--no-check"
    )
    assert options.provider == PRESETS_BY_ID["vllm"]
    assert options.models == ("a", "b", "c") and options.check is False
    assert options.non_interactive is False and parsed("-y").non_interactive is True


def test_options_before_the_subcommand_count_too() -> None:
    args = build_parser().parse_args(["--model", "early", "configure", "--provider", "ollama"])
    assert ConfigureOptions.from_args(args).model == "early"


def test_a_preset_gives_url_key_variable_and_model() -> None:
    answers = scripted_answers(parsed("--provider", "openai"), EMPTY)
    assert answers.base_url == "https://api.openai.com/v1"
    assert answers.key == KeyFromEnv("OPENAI_API_KEY")
    assert answers.model == "gpt-5-mini"
    local = scripted_answers(parsed("--provider", "llama.cpp", "--model", "q"), EMPTY)
    assert local.key == NoKey() and local.base_url == "http://localhost:8080/v1"


def test_a_known_url_is_its_preset() -> None:
    answers = scripted_answers(
        parsed("--base-url", "https://openrouter.ai/api/v1/", "--model", "x"), EMPTY
    )
    assert answers.key == KeyFromEnv("OPENROUTER_API_KEY")
    assert preset_for_url("http://localhost:11434/v1/") == PRESETS_BY_ID["ollama"]
    assert preset_for_url("http://elsewhere/v1") is None


def test_the_same_endpoint_keeps_the_files_key_model_and_models() -> None:
    file = file_with(base_url="http://h:1/v1", api_key_env="MINE", model="m", models=("m", "n"))
    answers = scripted_answers(parsed(), file)
    assert (answers.base_url, answers.key, answers.model) == (
        "http://h:1/v1",
        KeyFromEnv("MINE"),
        "m",
    )
    assert answers.models == ("m", "n")
    stored = FileSettings(
        LOCATION, exists=True, values={"base_url": "http://h:1/v1", "model": "m"}, api_key="sk-9"
    )
    assert scripted_answers(parsed(), stored).key == KeyStored("sk-9")
    keyless = file_with(base_url="http://h:1/v1", model="m")
    assert scripted_answers(parsed(), keyless).key == NoKey()


def test_another_endpoint_takes_nothing_of_the_files_key_or_models() -> None:
    file = file_with(base_url="http://h:1/v1", api_key_env="MINE", model="m", models=("m", "n"))
    answers = scripted_answers(parsed("--provider", "deepseek"), file)
    assert answers.key == KeyFromEnv("DEEPSEEK_API_KEY")
    assert answers.model == "deepseek-v4-flash" and answers.models == ()
    with pytest.raises(UsageError, match="--api-key-env NAME, --api-key-stdin or --no-api-key"):
        scripted_answers(parsed("--base-url", "http://other:2/v1", "--model", "m"), file)


def test_explicit_key_flags_win() -> None:
    options = parsed("--provider", "openai", "--api-key-env", "WORK_KEY")
    assert scripted_answers(options, EMPTY).key == KeyFromEnv("WORK_KEY")
    assert scripted_answers(parsed("--provider", "openai", "--no-api-key"), EMPTY).key == NoKey()
    piped = read_stdin_key(" sk-5 \nignored\n")
    assert (
        scripted_answers(parsed("--provider", "openai", "--api-key-stdin"), EMPTY, piped).key
        == piped
    )


def test_key_flags_exclude_each_other() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["configure", "--no-api-key", "--api-key-env", "K"])


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ((), "say which endpoint to use: --provider NAME or --base-url URL"),
        (("--provider", "custom"), "--provider custom needs --base-url URL"),
        (("--provider", "vllm"), "name the default model: --model NAME"),
        (
            ("--base-url", "localhost:1"),
            "--base-url localhost:1: expected an http:// or https:// URL with a host",
        ),
    ],
)
def test_missing_or_bad_values_name_the_flag(flags: tuple[str, ...], message: str) -> None:
    with pytest.raises(UsageError) as raised:
        scripted_answers(parsed(*flags), EMPTY)
    assert str(raised.value) == message


def test_an_empty_stdin_key_is_refused() -> None:
    with pytest.raises(UsageError, match="standard input held no key"):
        read_stdin_key("  \n")


def test_a_stdin_key_that_cannot_go_in_a_header_is_refused_unseen() -> None:
    with pytest.raises(UsageError) as raised:
        read_stdin_key("sk-tést-secret123\n")
    assert "printable ASCII" in str(raised.value) and "tést" not in str(raised.value)


def test_a_base_url_that_does_not_parse_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="does not parse"):
        scripted_answers(parsed("--base-url", "http://[x/v1", "--model", "m"), EMPTY)


def test_names_split_on_commas_in_order_once() -> None:
    assert split_names(["a, b,", " ,c", "a"]) == ("a", "b", "c")


def test_the_presets_are_the_issues_providers_and_the_parsers_choices() -> None:
    ids = [p.id for p in PRESETS]
    assert ids == ["openai", "deepseek", "openrouter", "ollama", "llama.cpp", "vllm", "custom"]
    assert tuple(ids) == PROVIDER_CHOICES
    assert all(p.key_env is None for p in PRESETS if p.local)


# -- the default model's context window -----------------------------------------------------


def test_the_context_window_flag_describes_the_default_model() -> None:
    options = parsed("--provider", "llama.cpp", "--model", "qwen", "--context-window", "2048")
    answers = scripted_answers(options, EMPTY)
    assert answers.described == {"qwen": ModelDescription(context=2048)}
    assert file_changes(answers, EMPTY)[1] == {"qwen": {"context": 2048}}
    assert (
        scripted_answers(parsed("--provider", "llama.cpp", "--model", "q"), EMPTY).described == {}
    )


@pytest.mark.parametrize("value", ["0", "-5", "2k", "²", "1.5"])
def test_a_context_window_that_is_no_number_of_tokens_names_the_flag(value: str) -> None:
    with pytest.raises(UsageError) as raised:
        parsed("--context-window", value)
    assert str(raised.value) == (
        f"--context-window {value}: expected a whole number of tokens of at least 1"
    )


def test_configure_yes_writes_the_window_and_keeps_the_models_other_settings(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        'base_url = "http://localhost:8080/v1"\nmodel = "qwen"\n\n'
        '[model_info."qwen"]\nimages = true\n'
    )
    flags = ["--config", str(path), "--no-api-key", "--context-window", "2048", "--no-check"]
    args = build_parser().parse_args(["configure", *flags, "--yes"])
    out, err = io.StringIO(), io.StringIO()
    assert run_configure(args, stdin=io.StringIO(), stdout=out, stderr=err) == 0, err.getvalue()
    read = read_settings(ConfigLocation(path, explicit=True))
    assert read.model_info == (ModelProfile(name="qwen", context_window=2048, images=True),)


@pytest.mark.parametrize(("confirm", "typed"), [("n", []), ("y", ["", "-"])])
def test_in_a_terminal_the_flag_is_the_default_models_window(
    monkeypatch: pytest.MonkeyPatch, confirm: str, typed: list[str]
) -> None:
    answers = iter([confirm, *typed])
    monkeypatch.setattr("builtins.input", lambda *_: next(answers))
    flow = Flow(Console(file=io.StringIO()), parsed("--context-window", "2048"), EMPTY, "")
    described = flow.ask_descriptions(("qwen", "other"), reasoned=False)
    expected = {"qwen": ModelDescription(context=2048)}
    if typed:
        expected["other"] = ModelDescription(context=None)
    assert described == expected
