"""Reading the config file: checked values, or every problem with its file, line and key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_sidecar.agent.model.config import ModelProfile, Prices
from acp_sidecar.settings import (
    KEYS,
    ConfigError,
    ConfigLocation,
    Problem,
    config_path,
    default_config_path,
    read_settings,
)

SECRET = "sk-test-0123456789abcdef"


def write(tmp_path: Path, text: str, mode: int = 0o600) -> ConfigLocation:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    os.chmod(path, mode)
    return ConfigLocation(path, explicit=True)


def problems(location: ConfigLocation) -> tuple[Problem, ...]:
    with pytest.raises(ConfigError) as caught:
        read_settings(location)
    return caught.value.problems


def test_a_full_file_reads_into_typed_values(tmp_path: Path) -> None:
    location = write(
        tmp_path,
        f"""
model = "deepseek-chat"
models = ["deepseek-chat", "deepseek-reasoner", "deepseek-chat"]
base_url = "https://api.deepseek.com/v1"
api_key = "{SECRET}"
max_turn_requests = 30
max_parallel_tools = 2
max_tokens = 0
mode = "read-only"
allow_outside_workspace = true
tools = ["pkg.mod:TOOLS"]
pass_env = ["GITHUB_TOKEN"]
fsync = "record"
mcp_start_timeout = 2.5
store = "sessions"
log_level = "debug"
log_file = "~/sidecar.log"

[model_info."deepseek-chat"]
context = 65536
input = 0.27
output = 1.1
currency = "USD"

[model_info."qwen3:8b"]
images = true
reasoning = true
""",
    )
    settings = read_settings(location)
    assert settings.exists and settings.warnings == ()
    assert settings.values == {
        "model": "deepseek-chat",
        "models": ("deepseek-chat", "deepseek-reasoner"),
        "base_url": "https://api.deepseek.com/v1",
        "max_turn_requests": 30,
        "max_parallel_tools": 2,
        "max_tokens": 0,
        "mode": "read-only",
        "allow_outside_workspace": True,
        "tools": ("pkg.mod:TOOLS",),
        "pass_env": ("GITHUB_TOKEN",),
        "fsync": "record",
        "mcp_start_timeout": 2.5,
        "store": str(tmp_path / "sessions"),  # relative to the file's directory
        "log_level": "DEBUG",
        "log_file": str(Path("~/sidecar.log").expanduser()),
    }
    assert settings.api_key == SECRET
    assert SECRET not in repr(settings)
    assert settings.model_info == (
        ModelProfile("deepseek-chat", context_window=65536, prices=Prices(0.27, 1.1, "USD")),
        ModelProfile("qwen3:8b", images=True, reasoning_effort=True),
    )


def test_every_key_of_the_table_is_read(tmp_path: Path) -> None:
    samples = {
        "text": '"x"',
        "names": '["a"]',
        "count": "3",
        "seconds": "1",
        "amount": "2.5",
        "flag": "true",
        "path": '"/tmp/x"',
    }
    lines = []
    for key in KEYS:
        if key.kind == "choice":
            lines.append(f'{key.name} = "{key.choices[0]}"')
        elif key.name == "base_url":
            lines.append('base_url = "http://localhost:1/v1"')
        else:
            lines.append(f"{key.name} = {samples[key.kind]}")
    settings = read_settings(write(tmp_path, "\n".join(lines)))
    assert set(settings.values) | {"api_key"} == {key.name for key in KEYS}
    assert settings.warnings == ()


def test_bad_values_are_all_reported_with_line_and_key(tmp_path: Path) -> None:
    location = write(
        tmp_path,
        """model = "x"
max_tokens = -3
mode = "yolo"
models = "a,b"
base_url = "localhost:11434"

[model_info."qwen3:8b"]
context = "big"
input = 1
""",
    )
    found = problems(location)
    shown = [str(problem) for problem in found]
    path = location.path
    assert shown == [
        f"{path}:2: max_tokens: expected a whole number of at least 0",
        f"{path}:3: mode: expected one of ask, auto, read-only",
        f'{path}:4: models: expected a list of non-empty strings, such as ["a", "b"]',
        f"{path}:5: base_url: expected an http:// or https:// URL with a host",
        f'{path}:8: model_info."qwen3:8b".context: expected a whole number of tokens of at least 1',
        f'{path}:7: model_info."qwen3:8b": prices need input, output and currency together '
        "(missing output, currency)",
    ]
    assert all(problem.severity == "error" for problem in found)


def test_a_file_that_is_not_toml_names_its_line(tmp_path: Path) -> None:
    location = write(tmp_path, 'model = "x"\nmax_tokens = \n')
    (problem,) = problems(location)
    assert problem.line == 2 and problem.key is None
    assert str(problem).startswith(f"{location.path}:2: is not valid TOML")


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'model = "\xff"\n')
    (problem,) = problems(ConfigLocation(path, explicit=True))
    assert problem.message == "is not UTF-8 text"


def test_unknown_keys_are_warnings_not_errors(tmp_path: Path) -> None:
    location = write(
        tmp_path,
        'model = "x"\nfuture_setting = 1\n\n[model_info.x]\ncontext = 10\nsparkles = true\n',
    )
    settings = read_settings(location)
    assert settings.values == {"model": "x"}
    assert settings.model_info == (ModelProfile("x", context_window=10),)
    assert [(w.line, w.key, w.severity) for w in settings.warnings] == [
        (2, "future_setting", "warning"),
        (6, "model_info.x.sparkles", "warning"),
    ]


def test_a_mistyped_key_is_answered_with_the_key_meant(tmp_path: Path) -> None:
    location = write(
        tmp_path, 'modle = "x"\nmax_token = 9\n\n[model_info.x]\ncontxt = 10\nsparkles = 1\n'
    )
    said = [w.message for w in read_settings(location).warnings]
    assert said == [
        "unknown key, ignored; did you mean model?",
        "unknown key, ignored; did you mean max_tokens?",
        "unknown model setting, ignored; did you mean context?",
        "unknown model setting, ignored (a newer acp-sidecar's?)",
    ]


def test_inline_tables_and_dotted_keys_find_their_line(tmp_path: Path) -> None:
    location = write(
        tmp_path,
        'model = "x"\nmodel_info.y.context = 0\nmodel_info.z = { context = "no" }\n',
    )
    assert [(p.line, p.key) for p in problems(location)] == [
        (2, "model_info.y.context"),
        (3, "model_info.z.context"),
    ]


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_key_in_a_file_others_can_read_is_refused(tmp_path: Path, mode: int) -> None:
    location = write(tmp_path, f'model = "x"\napi_key = "{SECRET}"\n', mode=mode)
    (problem,) = problems(location)
    assert problem.line == 2 and problem.key == "api_key"
    assert f"chmod 600 {location.path}" in problem.message
    assert SECRET not in str(problem)


def test_a_readable_file_without_a_key_is_fine(tmp_path: Path) -> None:
    assert read_settings(write(tmp_path, 'model = "x"\n', mode=0o644)).values == {"model": "x"}


def test_no_problem_ever_holds_the_key(tmp_path: Path) -> None:
    location = write(tmp_path, f'api_key = "{SECRET}"\napi_key_env = "{SECRET}-1"\n')
    for problem in problems(location):
        assert SECRET not in str(problem)


def test_a_missing_default_file_is_an_empty_configuration(tmp_path: Path) -> None:
    settings = read_settings(ConfigLocation(tmp_path / "absent.toml", explicit=False))
    assert not settings.exists and settings.values == {} and settings.model_info == ()


def test_a_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    (problem,) = problems(ConfigLocation(tmp_path / "absent.toml", explicit=True))
    assert "no such file" in problem.message


def test_the_location_comes_from_the_option_then_the_variable_then_the_default(
    tmp_path: Path,
) -> None:
    env = {"ACP_SIDECAR_CONFIG": str(tmp_path / "env.toml")}
    assert config_path(str(tmp_path / "opt.toml"), env) == ConfigLocation(
        tmp_path / "opt.toml", explicit=True
    )
    assert config_path(None, env) == ConfigLocation(tmp_path / "env.toml", explicit=True)
    assert config_path(None, {"ACP_SIDECAR_CONFIG": "  "}) == ConfigLocation(
        default_config_path(), explicit=False
    )
    assert default_config_path().parts[-2:] == ("acp-sidecar", "config.toml")


def test_names_kept_light_agree_with_their_sources() -> None:
    from acp_sidecar.agent.model import config
    from acp_sidecar.bridge.modes import MODE_IDS
    from acp_sidecar.cli import build_parser
    from acp_sidecar.settings import keys, layering

    assert keys.MODE_CHOICES == MODE_IDS
    assert (layering.API_KEY_ENV, layering.BASE_URL_ENV, layering.MODEL_INFO_ENV) == (
        config.API_KEY_ENV,
        config.BASE_URL_ENV,
        config.MODEL_INFO_ENV,
    )
    options = {
        option: action for action in build_parser()._actions for option in action.option_strings
    }
    for key in keys.KEYS:
        if key.option is not None:
            assert options[key.option].dest == key.dest
            if key.kind == "choice":
                assert tuple(options[key.option].choices) == key.choices


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://[x/v1", "expected an http:// or https:// URL (this one does not parse)"),
        ("http://host:port/v1", "expected an http:// or https:// URL (this one does not parse)"),
        ("http:///v1", "expected an http:// or https:// URL with a host"),
        ("ftp://host/v1", "expected an http:// or https:// URL with a host"),
        ("http://a b/v1", "expected an http:// or https:// URL with a host"),
    ],
)
def test_a_base_url_that_does_not_parse_is_a_problem_not_a_crash(
    tmp_path: Path, url: str, message: str
) -> None:
    (problem,) = problems(write(tmp_path, f'model = "m"\nbase_url = "{url}"\n'))
    assert (problem.line, problem.key, problem.message) == (2, "base_url", message)


def test_a_path_for_a_user_that_does_not_exist_is_a_problem(tmp_path: Path) -> None:
    (problem,) = problems(write(tmp_path, 'store = "~no-such-user-here/sessions"\n'))
    assert problem.key == "store" and "no such user" in problem.message
    location = config_path("~no-such-user-here/config.toml", {})
    assert location.explicit and "no such file" in str(problems(location)[0])


def test_lines_inside_multi_line_strings_are_not_read_as_keys(tmp_path: Path) -> None:
    location = write(tmp_path, "model = '''\n\"\\q\" = 1\n'''\nnewer_key = 1\n")
    settings = read_settings(location)
    assert settings.values == {"model": '"\\q" = 1'}  # stripped
    assert [(w.key, w.line) for w in settings.warnings] == [("newer_key", 4)]


def test_a_key_that_cannot_go_in_a_header_is_refused_unseen(tmp_path: Path) -> None:
    (problem,) = problems(write(tmp_path, 'api_key = "sk-tést-secret123"\n'))
    assert problem.key == "api_key" and "printable ASCII" in problem.message
    assert "tést" not in str(problem)
