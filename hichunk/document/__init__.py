"""Documents: raw text, a clean Markdown view, lines with heading hints and typography, offsets, pages."""

from hichunk.document.decode import decode_bytes, looks_binary
from hichunk.document.load import detect_format, load_document, parse_bytes, parse_document
from hichunk.document.model import MAX_LEVEL, Document, Line, LineStyle, OffsetMap
from hichunk.document.pdf import OutlineEntry, pdf_outline

__all__ = [
    "MAX_LEVEL",
    "Document",
    "Line",
    "LineStyle",
    "OffsetMap",
    "OutlineEntry",
    "decode_bytes",
    "detect_format",
    "load_document",
    "looks_binary",
    "parse_bytes",
    "parse_document",
    "pdf_outline",
]
