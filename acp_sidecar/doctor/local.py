"""The checks ``doctor`` makes without the network: config file, model settings and key,
ripgrep, session store. Nothing raises; no check shows a key; the store check leaves nothing.
"""

from __future__ import annotations

import argparse
import ipaddress
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from typing import Final
from urllib.parse import urlsplit

from acp_sidecar.agent.model.config import API_KEY_ENV, MODEL_INFO_ENV, ModelConfig
from acp_sidecar.checks import Check
from acp_sidecar.settings import KEYS_BY_NAME, FileSettings, Problem
from acp_sidecar.settings.layering import EndpointKey, layered_model_config, no_model
from acp_sidecar.store.paths import resolve_store_dir

CONFIG_FILE: Final = "config file"
MODEL: Final = "model"
KEY_PRESENT: Final = "key present"
RIPGREP: Final = "ripgrep"
STORE: Final = "store writable"
ACP_V2: Final = "ACP v2 (preview)"
DEFAULT_SOURCE: Final = "the config file"

CONFIG_FIX: Final = (
    "Correct it in the file (or run `acp-sidecar configure`). Until then acp-sidecar runs "
    "without the file, and `serve` tells the editor why."
)
UNKNOWN_KEY_FIX: Final = (
    "It is ignored: correct or remove it, or update acp-sidecar if a newer version wrote it."
)
RIPGREP_FIX: Final = (
    "Install ripgrep (apt install ripgrep, dnf install ripgrep, brew install ripgrep, "
    "winget install BurntSushi.ripgrep.MSVC) and make sure it is on the PATH the editor "
    "starts acp-sidecar with."
)
STORE_FIX: Final = (
    "Choose a writable directory: --store DIR, $ACP_SIDECAR_STORE or store in the config "
    "file (or fix the directory's permissions)."
)
VERSION_TIMEOUT_S: Final = 10.0
"""How long ``rg --version`` may take."""


def setting_source(
    name: str, given: argparse.Namespace, env: Mapping[str, str], file: FileSettings
) -> str | None:
    """Where the setting ``name`` (a config file key) comes from: its option, its variable
    (``$NAME``), the config file, or ``None`` (nowhere: the default)."""
    key = KEYS_BY_NAME[name]
    if getattr(given, key.dest, None) not in (None, [], ()):
        return key.option
    if key.env is not None and env.get(key.env, "").strip():
        return f"${key.env}"
    if name in file.values:
        return "the config file"
    return None


def acp_v2_check(args: argparse.Namespace, env: Mapping[str, str]) -> Check:
    """Whether ``serve`` offers ACP v2 to clients that ask for it, and where that is set."""
    given: argparse.Namespace = getattr(args, "command_line", args)
    source = setting_source("acp_v2", given, env, args.config_file)
    if not getattr(args, "acp_v2", False):
        where = "the default" if source is None else f"from {source}"
        return Check(ACP_V2, "ok", f"Off ({where}): every client is served ACP v1.")
    return Check(
        ACP_V2,
        "ok",
        f"On (from {source or DEFAULT_SOURCE}): a client asking for v2 gets it "
        "(session set-up only so far).",
    )


def problem_check(problem: Problem) -> Check:
    """A problem of the config file as a check; a message that ends in its own fix (" Fix:
    chmod 600 …") has it shown as the fix."""
    if problem.severity == "warning":
        return Check(CONFIG_FILE, "warning", str(problem), UNKNOWN_KEY_FIX)
    said, marker, own_fix = str(problem).partition(" Fix: ")
    if marker and own_fix:
        return Check(CONFIG_FILE, "failed", said, own_fix)
    return Check(CONFIG_FILE, "failed", str(problem), CONFIG_FIX)


def config_checks(file: FileSettings, problems: Sequence[Problem]) -> list[Check]:
    """The config file: where it is, and each problem (``file:line: key: message``)."""
    location = file.location
    if problems:
        return [problem_check(problem) for problem in problems]
    if not file.exists:
        return [
            Check(
                CONFIG_FILE,
                "ok",
                f"None at {location.path} ({location.source}): settings come from the options "
                "and the environment. `acp-sidecar configure` writes one.",
            )
        ]
    stored = "; it stores a key, and only you can read it" if file.api_key is not None else ""
    found = Check(CONFIG_FILE, "ok", f"{location.path} ({location.source}){stored}.")
    return [found] + [
        Check(CONFIG_FILE, "warning", str(warning), UNKNOWN_KEY_FIX) for warning in file.warnings
    ]


def model_config(
    args: argparse.Namespace, env: Mapping[str, str]
) -> tuple[Check, ModelConfig | None]:
    """The model ``serve`` would use, and the check that says which and from where."""
    given: argparse.Namespace = getattr(args, "command_line", args)
    file: FileSettings = args.config_file
    try:
        config = layered_model_config(args, env)
    except ValueError as exc:
        return Check(
            MODEL,
            "failed",
            f"The model settings cannot be used: {exc}",
            "Correct the setting the message names; until then every prompt is answered "
            "with this message.",
        ), None
    if config is None and no_model(args):
        return Check(
            MODEL,
            "skipped",
            "Not used in this run (--no-model): the console answers prompts; no model is asked.",
        ), None
    if config is None:
        return Check(
            MODEL,
            "skipped",
            "None configured: the console answers prompts (slash commands for the tools, "
            "/help lists them); no model is asked.",
            "To answer with a model: `acp-sidecar configure`, or --model, $ACP_SIDECAR_MODEL "
            "or model in the config file.",
        ), None
    source = setting_source("model", given, env, file)
    if source is None:
        offered = setting_source("models", given, env, file)
        if offered is None:
            offered = "--model-info" if getattr(given, "model_info", None) else None
        if offered is None:
            offered = f"${MODEL_INFO_ENV}" if env.get(MODEL_INFO_ENV, "").strip() else None
        source = f"the first of the models from {offered or 'the config file'}"
    url_source = setting_source("base_url", given, env, file)
    url_origin = f"from {url_source}" if url_source is not None else "the default"
    return Check(
        MODEL,
        "ok",
        f"{config.model} (from {source}) at {config.shown_url} ({url_origin}).",
    ), config


def is_local(url: str) -> bool:
    """Whether ``url`` names this machine or a private network (servers that need no key)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_unspecified


def key_check(args: argparse.Namespace, config: ModelConfig) -> Check:
    """Whether the endpoint has a key, and where it comes from (never the key)."""
    key: EndpointKey | None = getattr(args, "endpoint_key", None)
    variable = key.variable if key is not None and key.variable else API_KEY_ENV
    if config.api_key is not None:
        if key is not None and key.variable is None:
            return Check(KEY_PRESENT, "ok", "Stored in the config file (not shown).")
        return Check(KEY_PRESENT, "ok", f"From ${variable} (not shown).")
    if key is not None and key.variable is None:
        # The file names this URL and no key: OPENAI_API_KEY is not sent to it (layering).
        if is_local(config.endpoint_url):
            return Check(
                KEY_PRESENT, "ok", "None (the config file names none): a local server needs none."
            )
        return Check(
            KEY_PRESENT,
            "warning",
            "None: the config file names this URL but no key (api_key_env or api_key), and "
            f"${API_KEY_ENV} is only sent to OpenAI's own URL or one named beside it.",
            'Add api_key_env = "NAME" (the variable holding the key) to the config file, or '
            "store a key with `acp-sidecar configure`.",
        )
    if is_local(config.endpoint_url):
        return Check(
            KEY_PRESENT, "ok", f"None (${variable} is not set): a local server needs none."
        )
    return Check(
        KEY_PRESENT,
        "warning",
        f"None: ${variable} is not set, and an endpoint that needs a key refuses requests "
        "without one.",
        f"Set {variable} in the environment the editor starts acp-sidecar in, or store a "
        "key with `acp-sidecar configure`.",
    )


def ripgrep_check() -> Check:
    """ripgrep on PATH, and its version."""
    from acp_sidecar.tools.builtin.grep import ripgrep

    lost = "the grep tool searches in Python instead (the same results, slower in large trees)"
    path = ripgrep()
    if path is None:
        return Check(RIPGREP, "warning", f"Not on PATH, so {lost}.", RIPGREP_FIX)
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(RIPGREP, "warning", f"{path} does not run ({exc}): {lost}.", RIPGREP_FIX)
    version = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
    if done.returncode != 0 or not version:
        return Check(
            RIPGREP,
            "warning",
            f"`{path} --version` failed (exit status {done.returncode}): {lost}.",
            RIPGREP_FIX,
        )
    return Check(RIPGREP, "ok", f"{version} ({path}).")


def store_check(args: argparse.Namespace, env: Mapping[str, str]) -> Check:
    """Whether the session store's directory can be written (see the module invariants)."""
    given: argparse.Namespace = getattr(args, "command_line", args)
    directory = resolve_store_dir(args.store, env)
    source = setting_source("store", given, env, args.config_file)
    origin = f"from {source}" if source is not None else "the default"
    existing = directory
    try:
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            return Check(
                STORE,
                "failed",
                f"{directory} ({origin}): {existing} is not a directory.",
                STORE_FIX,
            )
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".acp-sidecar-doctor-"):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return Check(
            STORE, "failed", f"{directory} ({origin}) cannot be written: {reason}.", STORE_FIX
        )
    later = "" if existing == directory else f"; the first session creates it in {existing}"
    return Check(STORE, "ok", f"{directory} ({origin}) is writable{later}.")
