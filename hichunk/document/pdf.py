"""PDF input: extracted text as the raw text, body paragraphs as the clean view, pages kept.

* Raw text (``Document.text``): the text PDFium extracts, defined exactly in
  ``hichunk.document.pdftext``: per page, its lines joined with ``\\n``
  (a hyphen that broke a word is written back as ``-`` before the break);
  pages joined with ``\\f``. Chunks are spans of it, so their texts rebuild
  the extracted text byte for byte (not the PDF file, which is binary).
* Clean view (``Document.clean``): the body text only, lines reflowed into
  paragraphs separated by blank lines, hyphenated words joined
  (``hichunk.document.reflow``). Running heads, feet, page numbers and
  table-of-contents lines (``hichunk.document.layout``) stay in the raw text
  but not in the clean view, so no model or embedder ever reads them.
* ``Line.style`` (``LineStyle``): page, font size relative to the body font,
  bold, italic, indent and the space above, from the paragraph's first line.
  ``Line.heading`` is always None: a PDF has no heading markup, and the
  bookmarks (outline) are deliberately not used as hints, because structure
  must be inferred and the outline is what benchmarks score against.
  ``pdf_outline`` returns it as data.
* ``Document.page_starts``: raw offset of every page, so ``Document.pages``
  (and chunk trees and retrieved passages) give 1-based page ranges.

Every failure (missing file, encrypted, damaged or truncated, no text layer)
is an ``InputError`` with a one-line message. PDFium is not thread-safe: use
processes to read PDFs in parallel.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator

from hichunk.document.model import Document
from hichunk.errors import InputError

# PDFium's FPDF_ERR_* codes
_ERRORS = {
    1: "unknown error in the PDF library",
    2: "cannot open the file",
    3: "not a PDF, or damaged or truncated",
    4: "encrypted (a password is needed)",
    5: "unsupported security handler",
    6: "a page is missing or damaged",
}


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """One bookmark: depth (1 = top), title, and the 1-based page it points to (None when it points nowhere)."""

    level: int
    title: str
    page: int | None


def _pdfium() -> Any:
    try:
        import pypdfium2
    except ImportError:
        raise InputError('reading PDF needs pypdfium2: pip install pypdfium2 (it comes with "pip install hichunk")') from None
    return pypdfium2


def _read_source(source: str | os.PathLike | bytes) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "<pdf>"
    path = os.fspath(source)
    try:
        with open(path, "rb") as fh:
            return fh.read(), path
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


class _Open:
    """An open PDFium document whose failures, on opening or while reading, become one-line InputErrors."""

    def __init__(self, data: bytes, name: str):
        self.data, self.name = data, name
        self.pdf: Any = None

    def __enter__(self) -> Any:
        pdfium = _pdfium()
        if not self.data:
            raise InputError(f"{self.name}: empty file, not a PDF")
        try:
            self.pdf = pdfium.PdfDocument(self.data)
        except pdfium.PdfiumError as exc:
            why = _ERRORS.get(getattr(exc, "err_code", None), str(exc).splitlines()[0] if str(exc) else "unreadable")
            raise InputError(f"{self.name}: cannot read PDF: {why}") from None
        return self.pdf

    def __exit__(self, kind, exc, tb) -> bool:
        if self.pdf is not None:
            self.pdf.close()
        if exc is not None and not isinstance(exc, (InputError, KeyboardInterrupt)) and isinstance(exc, Exception):
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InputError(f"{self.name}: cannot read PDF: {first}") from None
        return False


def read_pdf(source: str | os.PathLike | bytes, name: str | None = None):
    """The extracted text and visual lines (``pdftext.PdfText``) of a PDF given as a path or bytes."""
    from hichunk.document.pdftext import extract_text

    data, default = _read_source(source)
    name = name or default
    with _Open(data, name) as pdf:
        out = extract_text(pdf)
    if not out.text.strip():
        if not out.n_pages:
            raise InputError(f"{name}: the PDF has no pages")
        raise InputError(f"{name}: the PDF has no text layer ({out.n_pages} pages; scanned or image-only?)")
    return out


def parse_pdf(data: bytes, name: str = "<pdf>") -> Document:
    """A PDF's bytes as a Document (see the module docstring for what raw and clean mean)."""
    from hichunk.document.layout import analyse
    from hichunk.document.reflow import reflow

    text = read_pdf(data, name)
    metrics = analyse(text.text, text.lines, [h for _, h in text.page_sizes])
    return reflow(text, metrics, name, "pdf")


def pdf_outline(source: str | os.PathLike | bytes) -> list[OutlineEntry]:
    """The PDF's bookmarks in order, as (level, title, page) entries; empty when it has none.

    For benchmarks (the outline is the author's structure); chunking never reads it.
    """
    data, name = _read_source(source)
    with _Open(data, name) as pdf:
        return list(_outline(pdf))


def _outline(pdf: Any) -> Iterator[OutlineEntry]:
    for item in pdf.get_toc():
        dest = item.get_dest()
        index = dest.get_index() if dest is not None else None
        page = index + 1 if index is not None and index >= 0 else None
        yield OutlineEntry(item.level + 1, (item.get_title() or "").strip(), page)
