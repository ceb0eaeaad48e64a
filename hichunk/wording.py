"""Counts in words for messages and views: "1 leaf", "3 leaves", never "1 leaves"."""

from __future__ import annotations


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` and the noun in the right number (``plural`` defaults to ``singular + "s"``)."""
    return f"{n} {singular if n == 1 else plural or singular + 's'}"
