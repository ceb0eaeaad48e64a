"""Bytes to text, refusing what is not text with a clear message."""

from __future__ import annotations

import codecs
import re

from hichunk.errors import InputError

_SNIFF_BYTES = 8192
# Control characters that never appear in real text (tab, LF, VT, FF, CR and ESC do).
_BINARY_CONTROLS = bytes(c for c in range(32) if c not in (9, 10, 11, 12, 13, 27))
_SURROGATE = re.compile("[\ud800-\udfff]")  # in a Python str, a code point here is always a lone surrogate


def lone_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (not valid Unicode: UTF-8 cannot write it), or None."""
    m = _SURROGATE.search(text)
    return m.start() if m else None


def looks_binary(data: bytes) -> bool:
    """True for data that is not text: NUL bytes, or many control characters, near the start."""
    head = data[:_SNIFF_BYTES]
    if not head or head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    head = head.replace(b"\x00\x08[", b"").replace(b"\x00\x08]", b"")  # GNU info image markers in text manuals
    if b"\x00" in head:
        return True
    controls = sum(head.count(bytes([c])) for c in _BINARY_CONTROLS)
    return controls > max(8, len(head) // 100)


def decode_bytes(data: bytes, name: str = "<input>", encoding: str = "utf-8", errors: str = "strict") -> str:
    """Decode a document; binary data and undecodable bytes raise ``InputError``.

    UTF-16 with a byte-order mark is recognised; a UTF-8 BOM is kept as the
    character U+FEFF so that chunks still rebuild the file byte for byte.
    """
    if errors not in ("strict", "replace", "ignore"):
        raise InputError(f"unknown encoding-errors mode {errors!r} (use strict, replace or ignore)")
    if looks_binary(data):
        raise InputError(f"{name}: looks like a binary file, not text")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    try:
        if not getattr(codecs.lookup(encoding), "_is_text_encoding", True):  # base64, zlib, rot13 ...
            raise InputError(f"{encoding!r} is not a text encoding")
    except LookupError:
        raise InputError(f"unknown encoding {encoding!r}") from None
    try:
        text = data.decode(encoding, errors)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: not valid {exc.encoding} at byte {exc.start} "
            f"(use --encoding-errors replace to read it anyway)"
        ) from None
    except (UnicodeError, ValueError, TypeError) as exc:  # codecs such as punycode raise their own kinds
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise InputError(f"{name}: cannot decode as {encoding} ({reason})") from None
    at = lone_surrogate(text)
    if at is not None:  # utf-7, unicode_escape ... can decode to text that no UTF-8 output can hold
        raise InputError(f"{name}: decoding as {encoding} gives a lone surrogate at character {at} (not valid Unicode)")
    return text
