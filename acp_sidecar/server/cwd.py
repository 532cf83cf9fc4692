"""Checking the directories a client names in ``session/new``, ``load`` and ``resume``: the
working directory and the additional workspace roots.

Invariants: a session's ``cwd`` is an absolute path of at most :data:`MAX_CWD_BYTES` bytes
(UTF-8) with no NUL character; a new session's ``cwd`` is also an existing directory. Each of
``additionalDirectories`` (at most :data:`MAX_ADDITIONAL_DIRECTORIES`) is all of that, always
existing. Anything else is refused with ``-32602`` naming the field (``cwd``,
``additionalDirectories/<index>``), the path quoted only shortened: the answer never grows
with what the client sent.
"""

from __future__ import annotations

import os
import stat
from typing import NoReturn

from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.text import shorten

MAX_CWD_BYTES = 4096
"""The longest ``cwd`` accepted, in UTF-8 bytes: Linux's ``PATH_MAX``, beyond which the
system refuses the path anyway."""
MAX_ADDITIONAL_DIRECTORIES = 64
"""The most extra roots a session may name (each is checked, and stored in its log)."""
SHOWN = 120
"""The most characters of a refused path an error message quotes."""


def check_additional_directories(directories: list[str] | None) -> tuple[str, ...]:
    """The extra roots of a request, normalised, in order, without repeats; ``-32602`` naming
    the first that is not an existing absolute directory (see the module)."""
    if not directories:
        return ()
    if len(directories) > MAX_ADDITIONAL_DIRECTORIES:
        raise AcpError.invalid_params(
            f"Invalid params: additionalDirectories: {len(directories)} directories; "
            f"the limit is {MAX_ADDITIONAL_DIRECTORIES}"
        )
    for index, directory in enumerate(directories):
        check_cwd(directory, must_exist=True, field=f"additionalDirectories/{index}")
    return tuple(dict.fromkeys(os.path.normpath(directory) for directory in directories))


def check_cwd(cwd: str, *, must_exist: bool, field: str = "cwd") -> None:
    """Refuse ``cwd`` (``-32602`` naming ``field``) unless it is a usable session directory
    (see the module)."""

    def _refuse(reason: str) -> NoReturn:
        raise AcpError.invalid_params(f"Invalid params: {field}: {reason}")

    size = len(cwd.encode("utf-8", "surrogatepass"))
    if size > MAX_CWD_BYTES:
        _refuse(f"is {size} bytes long; the limit is {MAX_CWD_BYTES}")
    if "\0" in cwd:
        _refuse("contains a NUL character")
    if not os.path.isabs(cwd):
        _refuse(f"must be an absolute path, got {_quoted(cwd)}")
    if not must_exist:
        return
    try:
        mode = os.stat(cwd).st_mode
    except FileNotFoundError:
        _refuse(f"no such directory: {_quoted(cwd)}")
    except UnicodeEncodeError:
        _refuse(f"is not a valid file name: {_quoted(cwd)}")
    except OSError as exc:
        _refuse(f"cannot be reached: {_quoted(cwd)}: {exc.strerror or exc}")
    if not stat.S_ISDIR(mode):
        _refuse(f"not a directory: {_quoted(cwd)}")


def _quoted(path: str) -> str:
    return repr(shorten(path, SHOWN))
