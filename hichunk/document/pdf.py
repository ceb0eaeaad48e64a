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
* ``Line.style`` (``LineStyle``): from the paragraph's first line: page, font
  size relative to the body font, bold, italic, indent from the page's body
  margin in body font sizes, and the space above: the baseline distance to the
  body line above beyond one line step, in body line steps (0 at a page top).
  ``Line.heading`` is always None: a PDF has no heading markup.
* ``Document.bookmarks``: the outline (bookmarks) placed on the lines it names
  (``hichunk.document.bookmarks``): explicit headings, which ``--hints use``
  trusts as it trusts Markdown headings and ``--hints ignore`` hides (the
  paper's protocol: benchmarks score against the outline). They change nothing
  else: text, lines, layout and what a model reads are the same without them.
  ``pdf_outline`` returns the outline as data.
* ``Document.page_starts``: raw offset of every page, so ``Document.pages``
  (and chunk trees and retrieved passages) give 1-based page ranges.

Every failure (missing file, encrypted, damaged or truncated, no text layer)
is an ``InputError`` with a one-line message. PDFium is not thread-safe: use
processes to read PDFs in parallel.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hichunk.document.load import read_file
from hichunk.document.model import Document
from hichunk.errors import InputError

if TYPE_CHECKING:
    from hichunk.document.pdftext import PdfText

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
    return read_file(path), path


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

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: Any) -> bool:
        if self.pdf is not None:
            self.pdf.close()
        if isinstance(exc, Exception) and not isinstance(exc, InputError):
            # a page PDFium cannot load, or a file that trips the extraction: one line, and the batch goes on
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise InputError(f"{self.name}: cannot read PDF: {type(exc).__name__}: {first}"[:300]) from None
        return False


def read_pdf(source: str | os.PathLike | bytes, name: str | None = None) -> PdfText:
    """The extracted text and visual lines (``pdftext.PdfText``) of a PDF given as a path or bytes."""
    return _read(source, name, False)[0]


def _read(source: str | os.PathLike | bytes, name: str | None, outline: bool) -> tuple[PdfText, list[OutlineEntry]]:
    """The extracted text, and the outline when asked for (an unreadable outline is no outline)."""
    from hichunk.document.pdftext import extract_text

    data, default = _read_source(source)
    name = name or default
    entries: list[OutlineEntry] = []
    with _Open(data, name) as pdf:
        out = extract_text(pdf)
        if outline:
            try:
                entries = list(_outline(pdf))
            except Exception:  # noqa: BLE001 - a damaged outline loses the hints, never the text
                logging.getLogger(__name__).debug("%s: unreadable outline", name, exc_info=True)
    if not out.text.strip():
        if not out.n_pages:
            raise InputError(f"{name}: the PDF has no pages")
        raise InputError(f"{name}: the PDF has no text layer ({out.n_pages} pages; scanned or image-only?)")
    return out, entries


def parse_pdf(data: bytes, name: str = "<pdf>") -> Document:
    """A PDF's bytes as a Document (see the module docstring for what raw and clean mean)."""
    from hichunk.document.bookmarks import place_bookmarks
    from hichunk.document.layout import analyse
    from hichunk.document.reflow import reflow

    text, outline = _read(data, name, True)
    metrics = analyse(text.text, text.lines, [h for _, h in text.page_sizes])
    doc = reflow(text, metrics, name, "pdf")
    doc.bookmarks = place_bookmarks(doc, [(e.level, e.title, e.page) for e in outline])
    if outline:  # what --hints use will trust, for a user who wonders why a bookmark is not a chunk
        logging.getLogger(__name__).info("%s: %d of %d outline entries placed on heading lines", name,
                                         len(doc.bookmarks), len(outline))
    return doc


def pdf_outline(source: str | os.PathLike | bytes) -> list[OutlineEntry]:
    """The PDF's bookmarks in order, as (level, title, page) entries; empty when it has none.

    ``parse_pdf`` places them on their lines as ``Document.bookmarks``.
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
