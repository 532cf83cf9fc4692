"""How a text file is stored: the binary sniff, its encoding, and decoding that round-trips.

Pure. Not valid UTF-8 as a whole (and no UTF-16/32 mark) means Latin-1, so decoding is
lossless: ``encode_document(decode_document(b)) == b``. ``read``, ``write``, ``edit`` agree.
"""

from __future__ import annotations

import codecs

import attrs

SNIFF_BYTES = 8192
"""How much of a file the binary sniff looks at."""

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 LE starts with the UTF-16 LE mark, so it is tried first.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


_BOM_STARTS = frozenset(bom[:1] for bom, _codec in _BOMS)


@attrs.frozen
class Encoding:
    """How a text file is stored."""

    codec: str
    """The Python codec of the body (``utf-8``, ``utf-16-le``, …)."""
    bom: bytes = b""
    """The byte-order mark the file starts with (``b""`` for none)."""

    @property
    def label(self) -> str:
        """A short name for messages and meta (``utf-8``, ``utf-8 with BOM``, …)."""
        return f"{self.codec} with BOM" if self.bom else self.codec


UTF8 = Encoding("utf-8")
LATIN1 = Encoding("latin-1")
"""A file that is not valid UTF-8 (:func:`text_encoding`): every byte is one character."""


@attrs.frozen
class TextDocument:
    """A decoded text file."""

    text: str
    """The text: exactly the file's characters (it encodes back to the same bytes)."""
    encoding: Encoding


def sniff_encoding(head: bytes) -> Encoding | None:
    """The encoding a file's first bytes announce, or ``None`` for a binary file."""
    if head[:1] not in _BOM_STARTS:
        return None if b"\0" in head[:SNIFF_BYTES] else UTF8
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return Encoding(codec, bom)
    if b"\0" in head[:SNIFF_BYTES]:
        return None
    return UTF8


def decode_document(data: bytes) -> TextDocument | None:
    """Decode a whole file losslessly; ``None`` when it is binary."""
    encoding = text_encoding(data)
    if encoding is None:
        return None
    body = data[len(encoding.bom) :]
    try:
        return TextDocument(body.decode(encoding.codec), encoding)
    except UnicodeDecodeError:
        return None  # a UTF-16/32 mark on data that is not: treat as binary


def encode_document(text: str, encoding: Encoding) -> bytes:
    """The bytes of ``text`` in ``encoding``.

    Raises:
        UnicodeEncodeError: the encoding cannot hold ``text`` (or it has lone surrogates).
    """
    return encoding.bom + text.encode(encoding.codec)


def printable(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (safe to show and to store as JSON)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def text_encoding(data: bytes, *, valid_utf8: bool | None = None) -> Encoding | None:
    """The encoding of a whole file's ``data`` (``None``: binary).

    A file without a UTF-16/32 mark that is not valid UTF-8 is :data:`LATIN1`, the bytes of a
    UTF-8 mark included: Latin-1 maps every byte to one character, so decoding never loses a
    byte and never invents one. ``valid_utf8``: whether the whole file is valid UTF-8 after
    its mark, when the caller has checked that itself (``data`` is then only its head).
    """
    encoding = sniff_encoding(data[:SNIFF_BYTES])
    if encoding is None or encoding.codec != "utf-8":
        return encoding
    if valid_utf8 is None:
        valid_utf8 = _valid_utf8(data[len(encoding.bom) :])
    return encoding if valid_utf8 else LATIN1


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
