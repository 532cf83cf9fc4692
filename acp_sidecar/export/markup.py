"""Markdown from a transcript as safe HTML (markdown-it-py, CommonMark + tables + strikethrough).

Invariants:
- Raw HTML is text; a link is kept only for ``http(s)``, ``mailto`` or no scheme, read as a
  browser reads it (``java	script:`` is refused too); images never load.
- Plain prose skips the parser, and is byte for byte what markdown-it renders (a property
  test holds the two equal).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from acp_sidecar.export import escape
from acp_sidecar.export.highlight import highlight_code

LINK_REL: Final = "nofollow noopener noreferrer"
"""The ``rel`` of every link an export writes."""

ALLOWED_SCHEMES: Final = frozenset({"http", "https", "mailto"})
_SCHEME: Final = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
_TAB_OR_NEWLINE: Final = re.compile("[\t\n\r]")
_C0_OR_SPACE: Final = "".join(map(chr, range(0x21)))
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f]")


def link_target(url: str) -> str | None:
    """The ``href`` an export may write for ``url``, or ``None`` when it may not link to it.

    ``url`` is first read as the URL standard has a browser read it (every ASCII tab and
    newline removed, C0 controls and spaces stripped from both ends), so the scheme checked is
    the scheme the browser would follow; a control left inside refuses the link. Its
    percent-decoded form must pass too (a Markdown parser hands over ``java%09script:``).
    """
    target = _browser_form(url)
    if target is None or _browser_form(unquote(target)) is None:
        return None
    return target


def _browser_form(url: str) -> str | None:
    target = _TAB_OR_NEWLINE.sub("", url).strip(_C0_OR_SPACE)
    if _CONTROL.search(target):
        return None
    match = _SCHEME.match(target)
    if match is None or match.group(1).lower() in ALLOWED_SCHEMES:
        return target
    return None


def link_allowed(url: str) -> bool:
    """Whether an export may link to ``url`` (see :func:`link_target`)."""
    return link_target(url) is not None


def _fence(code: str, language: str, _attrs: str) -> str:
    if not language:
        return ""
    highlighted = highlight_code(code, language.split()[0])
    if highlighted is None:
        return ""  # markdown-it escapes it in a plain <pre><code>
    return f'<pre class="hl"><code>{highlighted}</code></pre>\n'


def _link_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    tokens[idx].attrSet("rel", LINK_REL)
    return self.renderToken(tokens, idx, options, env)


def _image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    label = f"[image: {escape.text(alt)}]"
    src = token.attrGet("src")
    if not isinstance(src, str) or not src:
        return f'<span class="image-alt">{label}</span>'
    return f'<a class="image-link" href="{escape.attr(src)}" rel="{LINK_REL}">{label}</a>'


def _parser(*, breaks: bool) -> MarkdownIt:
    options: dict[str, Any] = {"html": False, "breaks": breaks, "highlight": _fence}
    md = MarkdownIt("commonmark", options).enable(["table", "strikethrough"])
    md.validateLink = link_allowed  # type: ignore[method-assign]
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image)
    return md


_AGENT: Final = _parser(breaks=False)
_USER: Final = _parser(breaks=True)


_NOT_PLAIN: Final = re.compile(
    r"[\\`*_{}\[\]<>()#+\-!|~=&\x00-\x08\x0b-\x1f\x7f-\x9f\t]|^[ \d]| $", re.MULTILINE
)
"""A character or line start/end at which CommonMark could see more than a paragraph."""

_PARAGRAPH_END_SPACES: Final = re.compile(r" +(?=\n\n|\n*\Z)")


def plain_paragraphs(source: str, *, breaks: bool) -> str | None:
    """The HTML markdown-it renders for ``source`` when it is plain prose (see the module
    invariants), else ``None``."""
    source = _PARAGRAPH_END_SPACES.sub("", source)  # CommonMark drops them too
    if _NOT_PLAIN.search(source):
        return None
    joint = "<br />\n" if breaks else "\n"
    paragraphs = [p for p in source.split("\n\n") if p.strip("\n")]
    return "".join(
        "<p>" + joint.join(p.strip("\n").split("\n")).replace('"', "&quot;") + "</p>\n"
        for p in paragraphs
    )


def markdown_html(source: str, *, breaks: bool = False) -> str:
    """``source`` rendered as safe HTML; ``breaks`` keeps single newlines (for prompts people
    typed)."""
    plain = plain_paragraphs(source, breaks=breaks)
    if plain is not None:
        return escape.controls(plain)
    return escape.controls((_USER if breaks else _AGENT).render(source))
