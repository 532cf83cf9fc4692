"""Running the sidecar as an ordinary user, for protections that root would pass anyway.

CI runs as root with every capability: a non-dumpable process, a file mode or a store the
process may not write hold nothing against root. Tests of those protections run the sidecar
(and the commands it starts) as ``nobody`` with no capabilities, through ``setpriv``, on the
system Python (the virtualenv's interpreter may live where ``nobody`` cannot reach), with this
checkout and the virtualenv's ``site-packages`` on ``PYTHONPATH``.

:func:`why_not` says, once per run, why that cannot work on this machine (not root, no
``setpriv``, a checkout ``nobody`` cannot read); tests skip with that reason, visibly.
Directories the unprivileged sidecar must write come from :func:`shared_directory`, which is
owned by ``nobody`` and removed afterwards.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534


def system_python() -> str | None:
    """A Python 3.11 outside ``/root``, which ``nobody`` can run."""
    for candidate in ("/usr/bin/python3.11", "/usr/local/bin/python3.11"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def prefix() -> list[str]:
    """The command prefix that runs what follows as ``nobody``, with no capabilities."""
    return [
        "setpriv",
        f"--reuid={NOBODY}",
        f"--regid={NOBODY}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
    ]


def environment(**extra: str) -> dict[str, str]:
    """The environment of an unprivileged sidecar: this checkout and our libraries importable."""
    site_packages = sysconfig.get_paths()["purelib"]
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": f"{ROOT}{os.pathsep}{site_packages}",
        "HOME": "/nonexistent",
        "LANG": "C.UTF-8",
        **extra,
    }


def command(*args: str) -> list[str]:
    """``python -m acp_sidecar ARGS`` as ``nobody``; call only when :func:`why_not` is None."""
    python = system_python()
    assert python is not None
    return [*prefix(), python, "-m", "acp_sidecar", *args]


@functools.cache
def why_not() -> str | None:
    """None when the sidecar can run as ``nobody`` here; otherwise the reason it cannot."""
    if os.geteuid() != 0:
        return "not running as root, so the tests cannot switch to an unprivileged user"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    python = system_python()
    if python is None:
        return "no system Python 3.11 that an unprivileged user can run"
    probe = subprocess.run(
        [*prefix(), python, "-c", "import acp_sidecar.cli, openai, pygls"],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if probe.returncode != 0:
        tail = probe.stderr.strip().splitlines()[-1:] or ["(no output)"]
        return f"user nobody cannot import the sidecar from this checkout: {tail[0]}"
    return None


def require() -> None:
    """Skip the calling test, with the reason, when it cannot run unprivileged here."""
    reason = why_not()
    if reason is not None:
        pytest.skip(reason)


@contextmanager
def shared_directory() -> Iterator[Path]:
    """A fresh directory owned by ``nobody`` (under the system temp directory), removed after."""
    path = Path(tempfile.mkdtemp(prefix="acp-sidecar-nobody-", dir="/tmp"))
    try:
        os.chown(path, NOBODY, NOBODY)
        path.chmod(0o755)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
