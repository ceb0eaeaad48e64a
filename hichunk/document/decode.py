"""Bytes to text, refusing what is not text with a clear message."""

from __future__ import annotations

import codecs

from hichunk.errors import InputError

_SNIFF_BYTES = 8192
# Control characters that never appear in real text (tab, LF, VT, FF, CR and ESC do).
_BINARY_CONTROLS = bytes(c for c in range(32) if c not in (9, 10, 11, 12, 13, 27))


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
        return data.decode(encoding, errors)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: not valid {exc.encoding} at byte {exc.start} "
            f"(use --encoding-errors replace to read it anyway)"
        ) from None
    except LookupError:
        raise InputError(f"unknown encoding {encoding!r}") from None
