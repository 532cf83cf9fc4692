"""The suite and the demo never use the user's own set-up.

A user who ran ``acp-sidecar configure`` has a config file naming a model (and perhaps a key)
in their home, and may have ``OPENAI_API_KEY`` or ``ACP_SIDECAR_MODEL`` in their shell. Here
such a home is planted — a config file whose model is a canary endpoint and whose log file
would show that a sidecar read it — and the suite's ways of starting a sidecar are run under
it, in a nested pytest: none of them may read it or reach the endpoint.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.model.fake_openai import ScriptedOpenAI, serve_in_thread
from tests.isolation import PLACES, scrubbed

pytestmark = pytest.mark.process  # every test starts the suite, a sidecar or a benchmark

ROOT = Path(__file__).resolve().parents[1]

SPAWNING = (
    # the official SDK's client spawning the sidecar (tests.sdk.sdk_sidecar)
    "tests/server/test_stored_at_creation.py::test_every_new_session_is_stored_before_the_process_exits",
    # the SDK's spawn called directly, with an environment of the test's own
    "tests/server/test_sdk_peer.py::test_the_sdk_client_runs_initialize_session_prompt_and_cancel",
    # our NDJSON client on a subprocess (tests.server.wire.start_sidecar)
    "tests/server/test_process.py::test_stdout_carries_only_protocol_messages",
    # the command line as a plain subprocess: doctor (which reads the config) and the demo
    "tests/cli/test_doctor.py::test_no_model_is_not_a_failure_and_asks_no_endpoint",
    "tests/cli/test_session_commands.py::test_demo_runs_a_scripted_session_kept_in_the_store",
)


@pytest.fixture
def canary() -> Iterator[ScriptedOpenAI]:
    with serve_in_thread() as endpoint:
        yield endpoint


def plant_config(home: Path, endpoint: ScriptedOpenAI, *extra: str) -> Path:
    """A config file in ``home``'s user config directory, as ``configure`` writes one."""
    path = home / ".config" / "acp-sidecar" / "config.toml"
    path.parent.mkdir(parents=True)
    lines = [
        f'base_url = "{endpoint.base_url}"',
        'api_key = "sk-planted-0123456789"',
        'model = "planted-model"',
        *extra,
    ]
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o600)
    return path


def users_environment(home: Path, endpoint: ScriptedOpenAI) -> dict[str, str]:
    """This environment as a user's shell would have it: their home, no XDG variables (the
    defaults under home), and a model and key of their own."""
    env = {k: v for k, v in os.environ.items() if not scrubbed(k) and k not in PLACES}
    return env | {
        "HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "ACP_SIDECAR_MODEL": "shell-model",
        "OPENAI_BASE_URL": endpoint.base_url,
        "OPENAI_API_KEY": "sk-shell-0123456789",
    }


@pytest.mark.timeout(600)  # a nested run of the suite: several sidecars start
def test_no_sidecar_the_suite_starts_reads_the_users_config_or_endpoint(
    tmp_path: Path, canary: ScriptedOpenAI
) -> None:
    home = tmp_path / "home"
    witness = tmp_path / "read-by-a-sidecar.log"
    plant_config(home, canary, f'log_file = "{witness}"', 'log_level = "DEBUG"')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-o",
            "addopts=",
            "-q",
            "-p",
            "no:cacheprovider",
            *SPAWNING,
        ],
        cwd=ROOT,
        env=users_environment(home, canary),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{len(SPAWNING)} passed" in done.stdout
    assert not witness.exists(), witness.read_text()[:2000]
    assert (canary.requests, canary.listings) == ([], 0)
    assert sorted(p.name for p in home.rglob("*")) == [".config", "acp-sidecar", "config.toml"]


def test_the_demo_is_the_console_session_whatever_the_config_says(
    tmp_path: Path, canary: ScriptedOpenAI
) -> None:
    home = tmp_path / "home"
    plant_config(home, canary, 'mode = "read-only"')
    done = subprocess.run(
        [sys.executable, "-m", "acp_sidecar", "demo", "--store", str(tmp_path / "s")],
        cwd=tmp_path,
        env=users_environment(home, canary) | {"COLUMNS": "100", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Hello, world!" in done.stdout  # written, edited and run: not refused
    assert (canary.requests, canary.listings) == ([], 0)


@pytest.mark.timeout(300)
def test_a_benchmark_run_by_hand_gives_its_sidecars_a_home_of_their_own(
    tmp_path: Path, canary: ScriptedOpenAI
) -> None:
    """Run from a shell, outside the suite: the benchmark isolates itself."""
    home = tmp_path / "home"
    witness = tmp_path / "read-by-a-sidecar.log"
    plant_config(home, canary, f'log_file = "{witness}"', 'log_level = "DEBUG"')
    argv = ["--prompt-mb", "1", "--line-mb", "1", "--sessions", "60", "--runs", "1"]
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_listing.py", *argv],
        cwd=ROOT,
        env=users_environment(home, canary),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "first page" in done.stdout
    assert not witness.exists(), witness.read_text()[:2000]
    assert (canary.requests, canary.listings) == ([], 0)
