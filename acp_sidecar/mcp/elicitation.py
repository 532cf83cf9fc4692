"""When a server may ask the user for input (``elicitation/create``), and in what form.

Only while one of its tool calls runs, one question a call at a time. A URL is forwarded only
when plain ``http(s)`` with a host, no credentials and no control or format characters.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit


class ElicitationGate:
    """One server's running calls and open questions (used from the event loop only)."""

    def __init__(self) -> None:
        self._keys = itertools.count()
        self._calls: dict[int, str | None] = {}
        """Each running call → its tool call id (None when the caller gave none)."""
        self._open = 0

    @contextmanager
    def call(self, call_id: str | None) -> Iterator[None]:
        """A tool call of the server runs for the duration (``call_id``: its tool call)."""
        key = next(self._keys)
        self._calls[key] = call_id
        try:
            yield
        finally:
            del self._calls[key]

    def refusal(self) -> str | None:
        """Why a question now is declined unasked, or None."""
        if not self._calls:
            return "none of its tool calls is running"
        if self._open >= len(self._calls):
            return "a question of each of its running calls is already open"
        return None

    @property
    def call_id(self) -> str | None:
        """The tool call a question now is for: the running call when there is just one."""
        if len(self._calls) != 1:
            return None
        return next(iter(self._calls.values()))

    @contextmanager
    def question(self) -> Iterator[None]:
        """A question is open (forwarded to the editor) for the duration."""
        self._open += 1
        try:
            yield
        finally:
            self._open -= 1


def url_refusal(url: str) -> str | None:
    """Why ``url`` is not a page the user may be sent to, or None."""
    if any(c.isspace() or unicodedata.category(c) in ("Cc", "Cf") for c in url):
        return "its URL has whitespace, control or format characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - an invalid port raises here
    except ValueError:
        return "its URL does not parse"
    if parts.scheme.lower() not in ("http", "https"):
        return "its URL is not http or https"
    if not host:
        return "its URL names no host"
    if "@" in parts.netloc:
        return "its URL carries credentials (user@host)"
    return None


def current_form(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (a form's ``requestedSchema``) with legacy ``enumNames`` mapped (see the
    module); anything else as it is."""
    form = dict(schema)
    properties = form.get("properties")
    if isinstance(properties, Mapping):
        form["properties"] = {name: _titled(field) for name, field in properties.items()}
    return form


def _titled(field: object) -> object:
    if not isinstance(field, Mapping) or "enumNames" not in field:
        return field
    names, values = field["enumNames"], field.get("enum")
    options: list[tuple[str, str]] = []
    if (
        isinstance(names, list)
        and isinstance(values, list)
        and len(names) == len(values)
        and all(isinstance(item, str) for item in (*names, *values))
        and "oneOf" not in field
    ):
        options = list(zip(values, names, strict=True))
    titled: dict[str, Any] = {}
    for key, value in field.items():
        if key == "enumNames":
            continue
        if key == "enum" and options:
            titled["oneOf"] = [{"const": const, "title": title} for const, title in options]
        else:
            titled[key] = value
    return titled


__all__ = ["ElicitationGate", "current_form", "url_refusal"]
