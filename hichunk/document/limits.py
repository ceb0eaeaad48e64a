"""Work limits on one document, checked on what it becomes (after decoding, inflation, extraction).

A service cannot judge an upload by its size: a 500 KB DOCX can hold gigabytes of XML, a
small PDF thousands of pages, and text grows when decoded. ``parse_within`` checks the
cheap facts first (a DOCX's inflated parts and paragraph count, a PDF's page count), then
the characters of the decoded or extracted text, and refuses with ``WorkLimitExceeded``
(one line) before the expensive work starts. ``None`` means no limit.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from hichunk.document.decode import decode_bytes
from hichunk.document.load import BINARY_PARSERS, parse_bytes, parse_document
from hichunk.document.model import Document
from hichunk.errors import InputError


class WorkLimitExceeded(InputError):
    """The document is larger than a limit allows (a service answers 413)."""


@dataclass(frozen=True)
class WorkLimits:
    max_chars: int | None = None  # characters of the text (decoded, or extracted from PDF/DOCX)
    max_pages: int | None = None  # pages of a PDF
    max_paragraphs: int | None = None  # paragraphs of a DOCX (table cells included)
    max_inflated_bytes: int | None = None  # what a DOCX's zip parts inflate to, together


def check_chars(n: int, name: str, limits: WorkLimits) -> None:
    if limits.max_chars is not None and n > limits.max_chars:
        raise WorkLimitExceeded(f"{name}: {n:,} characters; at most {limits.max_chars:,} are taken")


def _check_pdf(data: bytes, name: str, limits: WorkLimits) -> None:
    if limits.max_pages is None:
        return
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(data)
    except Exception:  # damaged or encrypted: the parser says so in its own words
        return
    try:
        pages = len(pdf)
    finally:
        pdf.close()
    if pages > limits.max_pages:
        raise WorkLimitExceeded(f"{name}: {pages:,} pages; at most {limits.max_pages:,} are taken")


def _check_docx(data: bytes, name: str, limits: WorkLimits) -> None:
    """Inflate every part, bounded, before python-docx does (it would hold all of them in memory)."""
    import zipfile

    if limits.max_inflated_bytes is None and limits.max_paragraphs is None:
        return
    budget = limits.max_inflated_bytes
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not a zip: the parser says so
    paragraphs = 0
    with archive:
        for info in archive.infolist():
            try:
                with archive.open(info) as fh:
                    part = fh.read(-1 if budget is None else budget + 1)
            except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError):
                return  # damaged: the parser says so
            if budget is not None:
                budget -= len(part)
                if budget < 0:
                    raise WorkLimitExceeded(f"{name}: the DOCX inflates to more than {limits.max_inflated_bytes:,} bytes")
            if info.filename == "word/document.xml":
                paragraphs = part.count(b"<w:p>") + part.count(b"<w:p ")
    if limits.max_paragraphs is not None and paragraphs > limits.max_paragraphs:
        raise WorkLimitExceeded(f"{name}: {paragraphs:,} paragraphs; at most {limits.max_paragraphs:,} are taken")


def parse_within(source: str | bytes, fmt: str, name: str, limits: WorkLimits, encoding: str = "utf-8") -> Document:
    """``source`` (text, or a file's bytes) parsed as ``fmt``, or WorkLimitExceeded before the parse when it is
    over a limit (and after it, for the characters a PDF or DOCX gives)."""
    if isinstance(source, bytes) and fmt in BINARY_PARSERS:
        (_check_pdf if fmt == "pdf" else _check_docx)(source, name, limits)
        doc = parse_bytes(source, fmt, name)
    else:
        text = source if isinstance(source, str) else decode_bytes(source, name, encoding)
        check_chars(len(text), name, limits)
        doc = parse_document(text, fmt, name)
    check_chars(len(doc.text), name, limits)
    return doc
