"""Checks on a query before any work is done: one clear error instead of a wasted search."""

from __future__ import annotations

from hichunk.errors import InputError

MAX_QUERY_CHARS = 8192


def check_query(query: object, max_chars: int = MAX_QUERY_CHARS) -> str:
    """The query as text, or InputError for empty, over-long or binary input."""
    if isinstance(query, (bytes, bytearray)):
        try:
            query = bytes(query).decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("the query is not UTF-8 text (binary data?)") from None
    if not isinstance(query, str):
        raise InputError(f"a query must be text, not {type(query).__name__}")
    if not query.strip():
        raise InputError("the query is empty")
    if len(query) > max_chars:
        raise InputError(f"the query is too long ({len(query)} characters; at most {max_chars})")
    controls = sum(1 for ch in query if ord(ch) < 32 and ch not in "\t\n\r")
    if "\x00" in query or controls > max(2, len(query) // 20) or query.count("\ufffd") > max(2, len(query) // 20):
        raise InputError("the query looks like binary data (NUL, control or undecodable characters)")
    return query
