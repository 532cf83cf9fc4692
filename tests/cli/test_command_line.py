"""The command line's parser, in process: each subcommand's own options and usage, what a
mistyped flag or subcommand meant, and a key never taken from the command line."""

from __future__ import annotations

import gc

import pytest

from acp_sidecar.cli import build_parser
from tests.in_process import run_cli

SECRET = "sk-never-echoed-5c2e9a"

SERVE_ONLY = ("--driver", "--pass-env", "--mode", "--fsync", "--mcp-start-timeout")
MODEL = ("--model", "--models", "--model-info", "--base-url", "--max-tokens")


def help_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args([*argv, "--help"])
    assert stopped.value.code == 0
    return capsys.readouterr().out


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """What the parser says on stderr when it refuses ``argv`` (exit status 2)."""
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(list(argv))
    assert stopped.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "offered", "not_offered"),
    [
        ("sessions", ("--store", "--config", "--cwd", "--log-level"), ("--tools", *MODEL)),
        ("tools", ("--tools", "--config", "--json", "--log-level"), ("--store", *MODEL)),
        ("replay", ("--store", "--tools", "--html", "--log-level"), MODEL),
        ("demo", ("--store", "--tools", "--log-level"), MODEL),
        ("doctor", ("--store", "--timeout", "--offline", *MODEL), ("--tools", *SERVE_ONLY)),
        ("configure", ("--provider", "--api-key-env", "--log-level"), ("--store", "--tools")),
        ("serve", (*SERVE_ONLY, *MODEL, "--tools", "--store"), ("--json", "--offline")),
    ],
)
def test_each_subcommands_help_lists_only_the_options_that_apply_to_it(
    capsys: pytest.CaptureFixture[str],
    command: str,
    offered: tuple[str, ...],
    not_offered: tuple[str, ...],
) -> None:
    shown = help_of(capsys, command)
    assert shown.startswith(f"usage: acp-sidecar {command}")
    for option in offered:
        assert f"{option} " in shown or f"{option}\n" in shown, option
    for option in not_offered:
        assert f"{option} " not in shown and f"{option}\n" not in shown, option


def test_doctor_still_takes_the_editors_serve_options_as_they_are() -> None:
    args = build_parser().parse_args(["doctor", "--mode", "auto", "--driver", "m:f"])
    assert (args.command, args.mode, args.driver) == ("doctor", "auto", "m:f")


@pytest.mark.parametrize(
    "argv",
    [
        ["tools", "--log-level", "debug"],
        ["sessions", "--log-level", "debug"],
        ["replay", "abc", "--log-level", "debug"],
        ["demo", "--log-level", "debug"],
        ["doctor", "--log-level", "debug"],
        ["configure", "--log-level", "debug"],
        ["serve", "--log-level", "debug"],
        ["--log-level", "debug", "tools"],
    ],
)
def test_log_level_is_accepted_after_every_subcommand_like_config(argv: list[str]) -> None:
    assert build_parser().parse_args(argv).log_level == "DEBUG"


def test_a_bad_flag_shows_the_subcommands_own_usage_and_the_flag_meant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    said = refused(capsys, "doctor", "--jsn")
    assert said.startswith("usage: acp-sidecar doctor ")
    assert "acp-sidecar doctor: error: unrecognized arguments: --jsn (did you mean --json?)" in said


def test_a_mistyped_flag_of_the_default_command_is_named_not_the_word_after_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    said = refused(capsys, "--modle", "qwen3")
    assert said.startswith("usage: acp-sidecar ")
    assert "unrecognized arguments: --modle (did you mean --model?)" in said
    assert "invalid choice" not in said


def test_a_flag_of_another_subcommand_says_which_takes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    said = refused(capsys, "sessions", "--offline")
    assert said.startswith("usage: acp-sidecar sessions ")
    assert "unrecognized arguments: --offline (doctor takes it)" in said


def test_a_mistyped_subcommand_is_suggested(capsys: pytest.CaptureFixture[str]) -> None:
    said = refused(capsys, "doctr")
    assert "invalid choice: 'doctr'" in said
    assert "did you mean doctor?" in said


def test_a_mistyped_choice_is_suggested(capsys: pytest.CaptureFixture[str]) -> None:
    said = refused(capsys, "serve", "--mode", "readonly")
    assert said.startswith("usage: acp-sidecar serve ")
    assert "did you mean read-only?" in said


@pytest.mark.parametrize("given", [["--api-key", SECRET], [f"--api-key={SECRET}"]])
def test_configure_api_key_says_a_key_is_never_taken_from_the_command_line(
    capsys: pytest.CaptureFixture[str], given: list[str]
) -> None:
    said = refused(capsys, "configure", "--provider", "openai", *given)
    assert said.startswith("usage: acp-sidecar configure ")
    assert "a key is never taken from the command line" in said
    assert "--api-key-env NAME" in said and "--api-key-stdin" in said
    assert SECRET not in said


def test_serve_api_key_names_where_a_key_goes_and_never_echoes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    said = refused(capsys, "--api-key", SECRET)
    assert "a key is never taken from the command line" in said
    assert "OPENAI_API_KEY" in said and "acp-sidecar configure" in said
    assert SECRET not in said


def test_an_unknown_key_flag_does_not_echo_its_value(capsys: pytest.CaptureFixture[str]) -> None:
    said = refused(capsys, "doctor", f"--openai-key={SECRET}")
    assert "unrecognized arguments: --openai-key" in said
    assert SECRET not in said


@pytest.mark.parametrize("argv", [["tools"], ["--version"], ["sessions", "--bad-flag"]])
def test_the_command_line_leaves_the_collector_running(argv: list[str]) -> None:
    # main pauses the cyclic collector for the start; every way out resumes it.
    done = run_cli(*argv)
    assert done.returncode in (0, 2)
    assert gc.isenabled()
