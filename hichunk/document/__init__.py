"""Documents: raw text, a clean Markdown view, lines with heading hints, offsets."""

from hichunk.document.decode import decode_bytes, looks_binary
from hichunk.document.load import detect_format, load_document, parse_document
from hichunk.document.model import MAX_LEVEL, Document, Line, LineStyle, OffsetMap

__all__ = [
    "MAX_LEVEL",
    "Document",
    "Line",
    "LineStyle",
    "OffsetMap",
    "decode_bytes",
    "detect_format",
    "load_document",
    "looks_binary",
    "parse_document",
]
