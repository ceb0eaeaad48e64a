"""Load a file or a string as a Document, choosing the parser by format.

Text formats are decoded first and parsed from ``str``; binary formats (PDF,
DOCX) are parsed from the file's bytes and never decoded as text.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable

from hichunk.document.decode import decode_bytes
from hichunk.document.model import Document
from hichunk.errors import InputError

# format -> "module:function"; parsers import lazily so plain text stays cheap.
PARSERS: dict[str, str] = {
    "text": "hichunk.document.markdown:parse_text",
    "markdown": "hichunk.document.markdown:parse_markdown",
    "html": "hichunk.document.html:parse_html",
    "rst": "hichunk.document.rst:parse_rst",
    "groff": "hichunk.document.groff:parse_groff",
}
# binary formats: "module:function" taking (bytes, name)
BINARY_PARSERS: dict[str, str] = {
    "pdf": "hichunk.document.pdf:parse_pdf",
    "docx": "hichunk.document.docx:parse_docx",
}
FORMATS = (*PARSERS, *BINARY_PARSERS)

EXTENSIONS: dict[str, str] = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".rst": "rst",
    ".rest": "rst",
    ".pdf": "pdf",
    ".docx": "docx",
}
GROFF_SUFFIXES = tuple(f".{n}" for n in range(1, 10))
MAX_INFLATED_BYTES = 256 * 1024 * 1024  # a .gz input inflates to at most this (a small file can hide gigabytes)


def detect_format(path: str) -> str:
    """Format from the file name; unknown extensions are read as plain text."""
    lower = path.lower()
    if lower.endswith(".gz"):
        lower = lower[:-3]
    if lower.endswith(".rst.txt"):  # Sphinx ships its sources under this name
        return "rst"
    ext = os.path.splitext(lower)[1]
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    if ext in GROFF_SUFFIXES:
        return "groff"
    return "text"


def _function(spec: str) -> Callable:
    module, func = spec.split(":")
    return getattr(importlib.import_module(module), func)


def parser_for(fmt: str) -> Callable[[str, str], Document]:
    """The parse function of a text format (``text``, ``markdown``, ``html``, ``rst``, ``groff``)."""
    if fmt in BINARY_PARSERS:
        raise InputError(f"{fmt} is a binary format: load it from a file, or parse its bytes with parse_bytes")
    if fmt not in PARSERS:
        raise InputError(f"unknown format {fmt!r} (choose from {', '.join(sorted(FORMATS))})")
    return _function(PARSERS[fmt])


def parse_document(text: str, fmt: str = "text", name: str = "<text>") -> Document:
    """Parse already decoded text."""
    return parser_for(fmt)(text, name)


def parse_bytes(data: bytes, fmt: str, name: str = "<input>", encoding: str = "utf-8",
                encoding_errors: str = "strict") -> Document:
    """Parse a document given as bytes: binary formats directly, text formats after decoding."""
    if fmt in BINARY_PARSERS:
        try:
            return _function(BINARY_PARSERS[fmt])(data, name)
        except InputError:
            raise
        except Exception as exc:  # a PDF/DOCX library surprised by an unusual file: one line, never a traceback
            logging.getLogger(__name__).debug("%s: %s parser failed", name, fmt, exc_info=True)
            raise InputError(f"{name}: cannot read this {fmt} file ({type(exc).__name__}: {exc})") from None
    return parse_document(decode_bytes(data, name, encoding, encoding_errors), fmt, name)


def read_file(path: str) -> bytes:
    """A file's bytes; a missing or unreadable file raises ``InputError`` with a one-line message."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def inflate(data: bytes, name: str, limit: int | None = None) -> bytes:
    """The content of gzip ``data``, read only up to ``limit`` bytes (default ``MAX_INFLATED_BYTES``; more is
    refused, never held in memory)."""
    import gzip
    import io
    import zlib

    limit = MAX_INFLATED_BYTES if limit is None else limit
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            out = fh.read(limit + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{name}: not a valid gzip file ({exc})") from None
    if len(out) > limit:
        raise InputError(f"{name}: inflates to more than {limit:,} bytes (the limit for .gz inputs); decompress it "
                         "yourself to read it")
    return out


def load_document(
    path: str,
    fmt: str | None = None,
    encoding: str = "utf-8",
    encoding_errors: str = "strict",
) -> Document:
    """Read, decode and parse a file; problems raise ``InputError`` with a one-line message."""
    data = read_file(path)
    if path.lower().endswith(".gz"):
        data = inflate(data, path)
    return parse_bytes(data, fmt or detect_format(path), path, encoding, encoding_errors)
