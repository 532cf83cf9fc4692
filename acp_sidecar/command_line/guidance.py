"""The command line's parser class: errors that say what was meant ("did you mean --model?");
and its subcommands, each given its options when chosen (:class:`Subcommands`).

A value given to a flag named like a key never appears in an error. The one module that
reaches into argparse's internals (``_actions``, ``_check_value``); tests fail by name if they
change.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from acp_sidecar.text import close_match

NOT_SECRET = ("--api-key-env", "--api-key-stdin")
"""Flags named like a key whose values are not keys."""
KEY_REFUSED = (
    "a key is never taken from the command line (every user of this machine can read it there)"
)


def flags(parser: argparse.ArgumentParser, *, visible: bool = False) -> set[str]:
    """The option strings ``parser`` takes (``visible``: only those its help lists)."""
    return {
        option
        for action in parser._actions
        if not visible or action.help != argparse.SUPPRESS
        for option in action.option_strings
    }


def _is_flag(token: str) -> bool:
    if len(token) < 2 or not token.startswith("-"):
        return False
    try:
        float(token)
    except ValueError:
        return True
    return False  # a negative number


def _is_secret(flag: str) -> bool:
    return flag not in NOT_SECRET and ("key" in flag or flag.startswith("--api"))


class KeyRefused(argparse.Action):
    """``--api-key``: refused, saying where a key goes instead (``advice``), never echoing it."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, advice: str, **_: Any) -> None:
        super().__init__(
            option_strings, dest, nargs="?", default=argparse.SUPPRESS, help=argparse.SUPPRESS
        )
        self.advice = advice

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        parser.error(f"{option_string}: {KEY_REFUSED}; {self.advice}")


if TYPE_CHECKING:
    _SubParsers = argparse._SubParsersAction["CommandParser"]
else:
    _SubParsers = argparse._SubParsersAction


class Subcommands(_SubParsers):
    """The subcommands' parsers, each given its options when it is chosen (or an error needs
    every parser's flags): a start parses only the program's own options."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fills: dict[str, Callable[[], None]] = {}

    def add_command(
        self, name: str, fill: Callable[[CommandParser], None], **kwargs: Any
    ) -> CommandParser:
        """The parser of subcommand ``name``; ``fill`` adds its options on first use."""
        parser = self.add_parser(name, **kwargs)
        self._fills[name] = lambda: fill(parser)
        return parser

    def fill(self, name: str) -> None:
        """Give subcommand ``name``'s parser its options, once."""
        fill = self._fills.pop(name, None)
        if fill is not None:
            fill()

    def fill_all(self) -> None:
        for name in list(self._fills):
            self.fill(name)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        if isinstance(values, Sequence) and values and isinstance(values[0], str):
            self.fill(values[0])
        super().__call__(parser, namespace, values, option_string)


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose errors follow the module invariants. The program's parser
    knows its subcommands' parsers by name (:attr:`subcommands`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.subcommands: dict[str, CommandParser] = {}
        self._given: tuple[str, ...] = ()

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._given = tuple(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        for action in self._actions:  # the flags of every subcommand name what was meant
            if isinstance(action, Subcommands):
                action.fill_all()
        blamed = self._named_subcommand() or self
        known = flags(self) | flags(blamed)
        unknown = [
            token
            for token in self._tokens()
            if _is_flag(token) and not self._known(token.partition("=")[0], known)
        ]
        if unknown:
            named = ", ".join(self._unknown(token, blamed) for token in unknown)
            message = f"unrecognized arguments: {named}"
        for secret in self._secrets():
            message = message.replace(secret, "…")
        blamed.print_usage(sys.stderr)
        blamed.exit(2, f"{blamed.prog}: error: {message}\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            meant = close_match(str(value), (str(choice) for choice in action.choices or ()))
            if meant is None:
                raise
            raise argparse.ArgumentError(action, f"{exc.message}; did you mean {meant}?") from None

    def _tokens(self) -> list[str]:
        """The tokens given, up to ``--``."""
        given = list(self._given)
        return given[: given.index("--")] if "--" in given else given

    def _named_subcommand(self) -> CommandParser | None:
        """The subcommand named on the command line (the first word that is not an option's
        value)."""
        takes_value = {
            option
            for action in self._actions
            if action.nargs != 0
            for option in action.option_strings
        }
        skip = False
        for token in self._tokens():
            if skip:
                skip = False
            elif _is_flag(token):
                skip = token in takes_value
            elif token in self.subcommands:
                return self.subcommands[token]
        return None

    @staticmethod
    def _known(name: str, known: set[str]) -> bool:
        if name in known:
            return True
        # An unambiguous abbreviation is accepted by argparse (allow_abbrev).
        return name.startswith("--") and any(flag.startswith(name) for flag in known)

    def _unknown(self, token: str, blamed: argparse.ArgumentParser) -> str:
        """``token`` named as unknown, with the flag meant or the subcommands that take it."""
        name = token.partition("=")[0]
        meant = close_match(name, flags(blamed, visible=True))
        if meant is not None:
            return f"{name} (did you mean {meant}?)"
        takers = [
            command
            for command, parser in self.subcommands.items()
            if parser is not blamed and name in flags(parser, visible=True)
        ]
        if takers:
            return f"{name} ({', '.join(takers)} take{'s' * (len(takers) == 1)} it)"
        return name

    def _secrets(self) -> list[str]:
        """The values given to flags named like a key (see the module invariants)."""
        tokens = self._tokens()
        found: list[str] = []
        for index, token in enumerate(tokens):
            name, equals, value = token.partition("=")
            if not _is_flag(name) or not _is_secret(name):
                continue
            if equals:
                found.append(value)
            elif index + 1 < len(tokens) and not _is_flag(tokens[index + 1]):
                found.append(tokens[index + 1])
        return [secret for secret in found if secret]
