"""Untrusted text to HTML text: the one escaping every export fragment goes through. No markup
and no control character but ``\\n``/``\\t`` survive; a lone surrogate becomes U+FFFD.
"""

from __future__ import annotations

import html
import re
from typing import Final

_UNSAFE: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _plain(char: str) -> str:
    code = ord(char)
    if code >= 0xD800:
        return "\ufffd"
    if code >= 0x80:
        return f"\\x{code:02x}"
    return f"^{chr(code ^ 0x40)}"


def _caret(char: str) -> str:
    shown = _plain(char)
    return shown if ord(char) >= 0xD800 else f'<span class="ctl">{shown}</span>'


def text(value: str) -> str:
    """``value`` as HTML element text (see the module invariant)."""
    escaped = html.escape(value)
    if _UNSAFE.search(escaped) is None:
        return escaped
    return _UNSAFE.sub(lambda m: _caret(m.group()), escaped)


def controls(markup: str) -> str:
    """Already-escaped HTML (another library built it from untrusted text) with its control
    characters in caret notation as plain text, without the ``<span>`` :func:`text` adds:
    they may sit inside an attribute value (a link's title, a fence's language class),
    where markup would end the attribute."""
    if _UNSAFE.search(markup) is None:
        return markup
    return _UNSAFE.sub(lambda m: _plain(m.group()), markup)


def attr(value: str) -> str:
    """``value`` for a quoted attribute: escaped, control characters shown as text."""
    escaped = html.escape(value)
    if _UNSAFE.search(escaped) is None:
        return escaped
    return _UNSAFE.sub(lambda m: _plain(m.group()), escaped)
