"""Build the distributions once per test session, and install the wheel once, in temporary
directories.

Every command runs with a scrubbed environment (:func:`isolated_env`): ``HOME``, the XDG
directories, ``TMPDIR`` and the pip and uv caches all point into the session's temporary
directory, so nothing is written outside it and no user configuration (a config file naming a
model, an API key in the environment) changes what the installed sidecar does. Packages come
from the package index as a user's would (CI reaches PyPI); a command that fails reports its
output.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import attrs
import pytest

from tests import spawns
from tests.isolation import PLACES, isolated_environment

ROOT = Path(__file__).resolve().parents[2]

SCRUBBED_PREFIXES = ("ACP_SIDECAR_", "UV_", "PYTHON", "VIRTUAL_ENV", "CONDA_")
"""Variables the child never inherits besides the suite's own scrubbing: uv's settings (ours
are set below), anything that points Python at another installation, and the suite's own
variables (but the store)."""


@attrs.frozen
class Sandbox:
    """The session's temporary directory and the environment that keeps commands in it."""

    root: Path
    env: Mapping[str, str]

    def run(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        timeout: float = 240,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` in the sandbox; fail with its output if it does not exit 0."""
        started = time.monotonic()
        done = subprocess.run(
            [str(arg) for arg in argv],
            cwd=cwd or self.root,
            env=dict(self.env),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (
            f"{' '.join(map(str, argv))} exited {done.returncode} after "
            f"{time.monotonic() - started:.1f} s\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )
        return done


@attrs.frozen
class Dists:
    """What ``python -m build`` made."""

    wheel: Path
    sdist: Path


class BackgroundVenv:
    """A clean virtual environment (``python -m venv``) that the wheel is installed into by
    the venv's own pip, on a thread, so that the slow part — downloading some forty packages
    from the index — runs while the build and the other checks do.

    The thread creates the venv and installs the project's declared dependencies (from
    ``pyproject.toml``) while the wheel is being built; once :meth:`install_wheel` names the
    wheel, pip installs it, checking its own ``Requires-Dist`` against what is there (that the
    wheel declares exactly the project's dependencies is checked in ``test_dists.py``).
    :meth:`wait` gives the venv's ``bin``."""

    def __init__(self, sandbox: Sandbox, dependencies: Sequence[str]) -> None:
        self.venv = sandbox.root / "venv"
        self.python = str(self.venv / "bin" / "python")
        # --no-compile: the .pyc files are written on first import instead; it halves the
        # install's time.
        self.pip_install = [self.python, "-m", "pip", "install", "--quiet", "--no-compile"]
        self.dependencies = list(dependencies)
        self.env = dict(sandbox.env)
        self.cwd = sandbox.root
        self.wheel: Path | None = None
        self.wheel_named = threading.Event()
        self.process: subprocess.Popen[str] | None = None
        self.failure: str | None = None
        self.closed = False
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._install, name="venv install", daemon=True)
        spawns.background.add(self.thread)
        self.thread.start()

    def install_wheel(self, wheel: Path) -> None:
        self.wheel = wheel
        self.wheel_named.set()

    def _install(self) -> None:
        steps = [
            [sys.executable, "-m", "venv", str(self.venv)],
            [*self.pip_install, *self.dependencies],
        ]
        if not all(self._run(argv) for argv in steps):
            return
        self.wheel_named.wait()
        if self.wheel is not None:
            self._run([*self.pip_install, str(self.wheel)])

    def _run(self, argv: list[str]) -> bool:
        with self.lock:
            if self.closed:
                return False
            self.process = subprocess.Popen(
                argv,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        output, _ = self.process.communicate()
        if self.process.returncode != 0:
            self.failure = f"{' '.join(argv)} exited {self.process.returncode}\n{output}"
        return self.process.returncode == 0

    def wait(self, timeout: float = 240) -> Path:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"installing the wheel took over {timeout} s"
        assert self.failure is None, self.failure
        return self.venv / "bin"

    def close(self) -> None:
        with self.lock:
            self.closed = True
            if self.process is not None and self.process.poll() is None:
                self.process.kill()
        self.wheel_named.set()
        self.thread.join(30)


@attrs.frozen
class Built:
    dists: Dists
    venv: BackgroundVenv


def isolated_env(root: Path) -> dict[str, str]:
    """The suite's isolation (:mod:`tests.isolation`) inside ``root``, without what points
    Python or uv elsewhere, and with every other place a tool writes to (temporary files, the
    pip and uv caches) inside ``root`` too."""
    env = {
        name: value
        for name, value in isolated_environment(root, os.environ).items()
        if not name.startswith(SCRUBBED_PREFIXES) or name in PLACES
    }
    places = {
        "TMPDIR": "tmp",
        "PIP_CACHE_DIR": "pip-cache",
        "UV_CACHE_DIR": "uv-cache",
        "UV_TOOL_DIR": "uv-tools",
        "UV_TOOL_BIN_DIR": "uv-bin",
        "UV_PYTHON_INSTALL_DIR": "uv-python",
    }
    for name, place in places.items():
        path = root / place
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    env["UV_NO_CONFIG"] = "1"  # no uv.toml of the user's or of a project around
    env["UV_PYTHON_DOWNLOADS"] = "never"  # the Python running the tests is the one to use
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    return env


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    root = tmp_path_factory.mktemp("packaging")
    return Sandbox(root, isolated_env(root))


@pytest.fixture(scope="session")
def built(sandbox: Sandbox) -> Iterator[Built]:
    """The sdist and the wheel of this checkout, built once (the wheel from the sdist, as
    ``python -m build`` does by default); and the clean-venv install of that wheel, in the
    background (:class:`BackgroundVenv`)."""
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    venv = BackgroundVenv(sandbox, dependencies)
    try:
        out = sandbox.root / "dist"
        # build's isolated environment (hatchling) is made with uv: twice as fast as pip.
        build: list[str | Path] = [sys.executable, "-m", "build", "--installer", "uv"]
        build += ["--outdir", out, ROOT]
        sandbox.run(build)
        (wheel,) = out.glob("*.whl")
        (sdist,) = out.glob("*.tar.gz")
        venv.install_wheel(wheel)
        yield Built(Dists(wheel=wheel, sdist=sdist), venv)
    finally:
        venv.close()


@pytest.fixture(scope="session")
def dists(built: Built) -> Dists:
    return built.dists


@pytest.fixture(scope="session")
def venv_bin(built: Built) -> Path:
    """The ``bin`` directory of the clean venv the wheel is installed in."""
    return built.venv.wait()
