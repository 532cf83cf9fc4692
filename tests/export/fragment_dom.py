"""A small DOM built with ``html.parser``, to check the structure of export fragments.

Parsing is strict where a browser would recover silently: an end tag that does not close the
innermost open element fails the parse, so escaped input that broke out of its element (a
``</details>`` or ``</pre>`` from a transcript) shows up as an error, not as a passing
substring check.
"""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser

import attrs

VOID = frozenset(
    {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)


@attrs.define
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node | str] = attrs.Factory(list)

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.walk()

    def all(self, selector: str) -> list[Node]:
        """Descendants (self included) matching ``tag``, ``.class`` or ``tag.class``."""
        tag, _, cls = selector.partition(".")
        return [
            n for n in self.walk() if (not tag or n.tag == tag) and (not cls or cls in n.classes)
        ]

    def one(self, selector: str) -> Node:
        found = self.all(selector)
        assert len(found) == 1, f"{len(found)} matches for {selector!r}"
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        open_tag = self.stack[-1].tag
        assert open_tag == tag, f"</{tag}> closes <{open_tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(markup: str) -> Node:
    """The fragment's tree under a ``#root`` node; fails on unbalanced tags."""
    builder = _Builder()
    builder.feed(markup)
    builder.close()
    assert len(builder.stack) == 1, f"unclosed: {[n.tag for n in builder.stack[1:]]}"
    return builder.root


def assert_inert(root: Node) -> None:
    """No script, no event handler, nothing that loads from outside the page."""
    for node in root.walk():
        assert node.tag not in ("script", "iframe", "object", "embed", "style", "link", "meta")
        for name, value in node.attrs.items():
            assert not name.startswith("on"), (node.tag, name)
            if name == "src":
                assert (value or "").startswith("data:image/"), (node.tag, value)
            if name == "href" and node.tag == "a":
                assert (value or "").split(":", 1)[0].lower() in ("http", "https", "mailto") or (
                    ":" not in (value or "").split("/", 1)[0]
                ), value
                assert node.attrs.get("rel") == "nofollow noopener noreferrer"
            if name == "href" and node.tag == "use":
                assert (value or "").startswith("#k-")
