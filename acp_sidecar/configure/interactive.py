"""The interactive flow of ``configure``: provider, URL, key, models, the check, the preview.
A typed key is never echoed or printed. Nothing is written here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

import attrs
from rich.console import Console
from rich.markup import escape
from rich.prompt import Confirm, Prompt
from rich.text import Text

from acp_sidecar.configure.answers import (
    HIDDEN,
    Answers,
    KeyFromEnv,
    KeySource,
    KeyStored,
    ModelDescription,
    NoKey,
    file_changes,
    file_key,
    same_endpoint,
)
from acp_sidecar.configure.checking import check_endpoint, show_checks
from acp_sidecar.configure.flags import ENV_NAME, ConfigureOptions, split_names
from acp_sidecar.configure.presets import CUSTOM, PRESETS, PRESETS_BY_ID, Preset, preset_for_url
from acp_sidecar.settings import FileSettings
from acp_sidecar.settings.reading import key_problem, url_problem
from acp_sidecar.settings.writing import render_settings
from acp_sidecar.text import shown_url

if TYPE_CHECKING:
    from acp_sidecar.agent.model.probe import (
        EndpointReport,
    )

LISTED_SHOWN: Final = 30
"""How many of the endpoint's models are listed by number."""
LISTING_CHECKS: Final = ("reachable", "key", "models listed")
"""The checks that a listing alone decides (shown after the first look)."""
NONE: Final = "-"
"""The answer that names no model."""

Checker = Callable[[str, KeySource, str | None], "EndpointReport"]


@attrs.define
class Flow:
    """One run of the interactive flow."""

    console: Console
    options: ConfigureOptions
    file: FileSettings
    current: str
    """The file's text (empty: none yet)."""
    checker: Checker = check_endpoint

    def run(self) -> Answers | None:
        path = self.file.location.path
        self.console.print(f"acp-sidecar configure: writes [bold]{escape(str(path))}[/bold]")
        if self.file.exists:
            self.console.print("Its values are the defaults; other keys and comments are kept.")
        preset = self.ask_preset()
        base_url: str | None = None
        key: KeySource | None = None
        listed: tuple[str, ...] = ()
        while True:
            base_url = self.ask_base_url(preset, base_url)
            same = self.file_url is not None and same_endpoint(base_url, self.file_url)
            key = self.ask_key(preset, same, key)
            if not self.options.check:
                break
            self.console.print(f"\nLooking at {escape(shown_url(base_url))} …")
            first = self.checker(base_url, key, None)
            show_checks(self.console, first, LISTING_CHECKS)
            listed = tuple(first.models)
            usable = all(first.check(name).status != "failed" for name in ("reachable", "key"))
            if usable or not Confirm.ask(
                "Change the base URL or the key?", console=self.console, default=True
            ):
                break
        model, others = self.ask_models(preset, same, listed)
        report = None
        if self.options.check:
            self.console.print(f"\nChecking {escape(model)} on {escape(shown_url(base_url))} …")
            report = self.checker(base_url, key, model)
            show_checks(self.console, report)
            if not report.ok and not Confirm.ask(
                "The check failed. Write the file anyway?", console=self.console, default=False
            ):
                return None
        reasoned = report is not None and report.check("reasoning").status == "ok"
        described = self.ask_descriptions((model, *others), reasoned)
        answers = Answers(base_url, key, model, others, described)
        return answers if self.confirm_write(answers) else None

    @property
    def file_url(self) -> str | None:
        value = self.file.values.get("base_url")
        return value if isinstance(value, str) else None

    def ask_preset(self) -> Preset:
        self.console.print("\nProviders:")
        for number, preset in enumerate(PRESETS, 1):
            where = preset.base_url or "(you give the URL)"
            name = escape(f"{preset.name:<30}")
            self.console.print(f"  {number}. {preset.id:<11} {name} {where}")
        default = self.options.provider or preset_for_url(self.file_url)
        if default is None:
            default = PRESETS_BY_ID[CUSTOM if self.file_url else "openai"]
        numbers = [str(n) for n in range(1, len(PRESETS) + 1)]
        answer = Prompt.ask(
            "Provider (number or name)",
            console=self.console,
            choices=[*numbers, *PRESETS_BY_ID],
            show_choices=False,
            default=default.id,
        )
        return PRESETS[int(answer) - 1] if answer in numbers else PRESETS_BY_ID[answer]

    def ask_base_url(self, preset: Preset, previous: str | None = None) -> str:
        default = previous or self.options.base_url or preset.base_url
        if preset.id == CUSTOM and default is None:
            default = self.file_url
        while True:
            answer = self.ask_text("Base URL", default).rstrip()
            problem = url_problem(answer)
            if problem is None:
                return answer
            self.console.print(f"  {problem[0].upper()}{problem[1:]}.")

    def ask_key(self, preset: Preset, same: bool, previous: KeySource | None = None) -> KeySource:
        """Where the key comes from; ``previous``: the answer given before (the default)."""
        options = self.options
        kept = previous or (file_key(self.file) if same else None)
        default: KeySource
        if previous is not None:
            default = previous
        elif options.api_key_env is not None:
            default = KeyFromEnv(options.api_key_env)
        elif options.no_api_key:
            default = NoKey()
        elif kept is not None:
            default = kept
        elif preset.key_env is not None:
            default = KeyFromEnv(preset.key_env)
        else:
            default = NoKey() if preset.local else KeyFromEnv("OPENAI_API_KEY")
        kinds = {KeyFromEnv: "env", KeyStored: "file", NoKey: "none"}
        self.console.print(
            "\nThe API key: read from an environment variable (env), stored in the config "
            "file (file), or none (a local server)."
        )
        kind = Prompt.ask(
            "API key",
            console=self.console,
            choices=list(kinds.values()),
            default=kinds[type(default)],
        )
        if kind == "none":
            return NoKey()
        if kind == "env":
            suggested = default.variable if isinstance(default, KeyFromEnv) else preset.key_env
            while True:
                variable = self.ask_text("Environment variable", suggested or "OPENAI_API_KEY")
                if ENV_NAME.fullmatch(variable):
                    break
                self.console.print("  Expected a variable's name (letters, digits, _).")
            if os.environ.get(variable, "").strip():
                self.console.print(f"  ${variable} is set now.")
            else:
                self.console.print(
                    f"  ${variable} is not set now: set it where your editor starts acp-sidecar."
                )
            return KeyFromEnv(variable)
        self.console.print(
            f"  The key is kept in {escape(str(self.file.location.path))}, which only you can "
            "read (mode 0600)."
        )
        stored = kept if isinstance(kept, KeyStored) else None
        hint = " (Enter keeps the one given)" if stored is not None else ""
        while True:
            typed = Prompt.ask(
                f"API key{hint}",
                console=self.console,
                password=True,
                default="",
                show_default=False,
            ).strip()
            if typed and (problem := key_problem(typed)) is not None:
                self.console.print(f"  {problem[0].upper()}{problem[1:]}.")
                continue
            if typed:
                return KeyStored(typed)
            if stored is not None:
                return stored
            self.console.print("  No key was typed.")

    def ask_models(
        self, preset: Preset, same: bool, listed: Sequence[str]
    ) -> tuple[str, tuple[str, ...]]:
        file_model = self.file.values.get("model") if same else None
        file_models = self.file.values.get("models") if same else None
        default = self.options.model or (file_model if isinstance(file_model, str) else None)
        default = default or preset.model or (listed[0] if listed else None)
        if listed:
            self.console.print(f"\nThe endpoint lists {len(listed)} models:")
            for number, name in enumerate(listed[:LISTED_SHOWN], 1):
                self.console.print(f"  {number}. {escape(name)}")
            if len(listed) > LISTED_SHOWN:
                self.console.print(f"  … and {len(listed) - LISTED_SHOWN} more (type any name)")
        while True:
            model = self.pick(self.ask_text("Default model (number or name)", default), listed)
            if model:
                break
            self.console.print("  Name one model.")
        others = self.options.models
        if not others and isinstance(file_models, tuple):
            others = tuple(str(name) for name in file_models)
        others = tuple(name for name in others if name != model)
        also = " (the endpoint's listed models are offered too)" if listed else ""
        answer = self.ask_text(
            f"Other models for the picker, separated by commas, {NONE} for none{also}",
            ", ".join(others) or NONE,
        )
        picked = [self.pick(name, listed) for name in split_names([answer]) if name != NONE]
        return model, tuple(name for name in dict.fromkeys(picked) if name and name != model)

    def pick(self, answer: str, listed: Sequence[str]) -> str:
        """A model name from an answer that may be its number in ``listed``."""
        answer = answer.strip()
        if answer.isdigit() and 1 <= int(answer) <= min(len(listed), LISTED_SHOWN):
            return listed[int(answer) - 1]
        return answer

    def ask_descriptions(
        self, models: Sequence[str], reasoned: bool
    ) -> dict[str, ModelDescription]:
        given = self.options.context_window  # the default model's, from --context-window
        if not Confirm.ask(
            "\nSet the models' context window and reasoning? (Endpoints that list windows "
            "need none.)",
            console=self.console,
            default=False,
        ):
            return {models[0]: ModelDescription(context=given)} if given is not None else {}
        profiles = {profile.name: profile for profile in self.file.model_info}
        described: dict[str, ModelDescription] = {}
        for index, name in enumerate(models):
            profile = profiles.get(name)
            window = profile.context_window if profile is not None else None
            if index == 0 and given is not None:
                window = given
            context = None
            while True:
                answer = self.ask_text(
                    f"{escape(name)}: context window in tokens ({NONE}: unknown)",
                    str(window) if window else NONE,
                )
                if answer == NONE or (answer.isdigit() and int(answer) > 0):
                    context = int(answer) if answer != NONE else None
                    break
                self.console.print("  Expected a whole number of tokens.")
            # Reasoning is asked only where something is known of it: the file says so, or
            # the check saw the default model reason.
            reasoning = None
            known = profile is not None and profile.reasoning_effort
            if known or (index == 0 and reasoned):
                reasoning = Confirm.ask(
                    f"{escape(name)}: offer a reasoning effort in the picker?",
                    console=self.console,
                    default=True,
                )
            described[name] = ModelDescription(context, reasoning)
        return described

    def confirm_write(self, answers: Answers) -> bool:
        changes, tables = file_changes(answers, self.file, hide_key=True)
        preview = render_settings(self.current, changes, tables)
        path = self.file.location.path
        self.console.print(f"\nThe file {escape(str(path))} will read:")
        self.console.rule()
        self.console.print(preview.rstrip("\n"), markup=False, highlight=False)
        self.console.rule()
        return Confirm.ask(f"Write {escape(str(path))}?", console=self.console, default=True)

    def ask_text(self, question: str, default: str | None) -> str:
        """A non-empty answer (asked again until there is one); a default URL's password is
        not shown."""
        while True:
            shown = None if default is None else shown_url(default, password=HIDDEN)
            if default and shown != default:
                asked = Text.assemble(question, " ", (f"({shown})", "prompt.default"))
                answer = Prompt.ask(
                    asked, console=self.console, default=default, show_default=False
                )
            elif default:
                answer = Prompt.ask(question, console=self.console, default=default)
            else:
                answer = Prompt.ask(question, console=self.console)
            if answer.strip():
                return str(answer).strip()
