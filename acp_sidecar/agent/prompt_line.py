"""A prompt as the drivers read it: its text and its ``@``-mentions, in order.

A typed ``@path`` naming a mention block's file *is* that mention (Toad sends both).
:func:`read_prompt` touches the file system: call it off the loop.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable

import attrs

from acp_sidecar.agent.mentions import Mention, parse_mention, typed_mention, typed_paths
from acp_sidecar.protocol import (
    BlobResourceContents,
    ContentBlock,
    EmbeddedResourceContentBlock,
    ResourceLinkContentBlock,
    TextContentBlock,
    TextResourceContents,
)

Piece = str | Mention
"""Text as the prompt has it, or a mention."""


@attrs.frozen
class PromptLine:
    """A prompt's pieces, joined as words already (see the module invariants)."""

    pieces: tuple[Piece, ...]

    @property
    def mentions(self) -> tuple[Mention, ...]:
        """Its mentions, in order (typed paths that name nothing on disk included)."""
        return tuple(piece for piece in self.pieces if isinstance(piece, Mention))

    def text(self, *, quote: bool = False, skip: Mention | None = None) -> str:
        """The prompt as text: a mention stands for its path (shell-quoted with ``quote``),
        but a typed path that names nothing stays as typed; ``skip`` leaves one out."""
        parts: list[str] = []
        for piece in self.pieces:
            if isinstance(piece, str):
                parts.append(piece)
            elif piece is not skip:
                parts.append(shown(piece, quote))
        return "".join(parts)

    def rest(self, start: int) -> PromptLine:
        """The line after its first ``start`` characters (which must lie in its first
        piece, text)."""
        first = self.pieces[0]
        assert isinstance(first, str) and start <= len(first)
        return PromptLine((first[start:], *self.pieces[1:]))


def shown(mention: Mention, quote: bool = False) -> str:
    """How a mention reads in a command's text."""
    if mention.typed is not None and not mention.found:
        return mention.typed
    return shlex.quote(mention.shown) if quote else mention.shown


def read_prompt(blocks: Iterable[ContentBlock], cwd: str) -> PromptLine:
    """The prompt's line (see the module invariants); typed paths resolve against ``cwd``."""
    per_block = [_pieces(block, cwd) for block in blocks]
    sent = [
        (index, piece)
        for index, pieces in enumerate(per_block)
        for piece in pieces
        if isinstance(piece, Mention) and piece.source != "typed"
    ]
    for pieces in per_block:
        for position, piece in enumerate(pieces):
            if not isinstance(piece, Mention) or piece.source != "typed":
                continue
            match = next((s for s in sent if _same_file(piece, s[1])), None)
            if match is None:
                pieces[position] = _settled(piece)
                continue
            sent.remove(match)
            index, block_mention = match
            pieces[position] = attrs.evolve(block_mention, typed=piece.typed)
            per_block[index] = []
    joined: list[Piece] = []
    for pieces in per_block:
        if not pieces:
            continue
        if joined and _ends_word(joined[-1]) and _starts_word(pieces[0]):
            joined.append(" ")
        joined.extend(pieces)
    return PromptLine(tuple(joined))


def _pieces(block: ContentBlock, cwd: str) -> list[Piece]:
    match block:
        case TextContentBlock(text=text):
            pieces: list[Piece] = []
            at = 0
            for typed in typed_paths(text):
                if typed.start > at:
                    pieces.append(text[at : typed.start])
                pieces.append(typed_mention(typed, text, cwd))
                at = typed.end
            if at < len(text):
                pieces.append(text[at:])
            return pieces
        case ResourceLinkContentBlock(uri=uri):
            return [parse_mention(uri)]
        case EmbeddedResourceContentBlock(
            resource=TextResourceContents(uri=uri) | BlobResourceContents(uri=uri)
        ):
            return [attrs.evolve(parse_mention(uri), source="embedded")]
        case _:
            return []  # images and audio: nothing a command or a path can take


def _settled(typed: Mention) -> Mention:
    """A typed mention with what the disk says of its path."""
    assert typed.path is not None
    found = os.path.lexists(typed.path)
    return attrs.evolve(
        typed, found=found, directory=typed.directory or (found and os.path.isdir(typed.path))
    )


def _same_file(typed: Mention, sent: Mention) -> bool:
    if typed.path is None or sent.path is None:
        return False
    return typed.path == sent.path or os.path.realpath(typed.path) == os.path.realpath(sent.path)


def _ends_word(piece: Piece) -> bool:
    return isinstance(piece, Mention) or (bool(piece) and not piece[-1].isspace())


def _starts_word(piece: Piece) -> bool:
    return isinstance(piece, Mention) or (bool(piece) and not piece[0].isspace())
