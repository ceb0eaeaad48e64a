"""Text as the numbering and layout rules read it: one spelling for characters that look alike.

Documents spell the same cue in several ways: "第 1 章" with no-break spaces
(U+00A0) or ideographic spaces (U+3000), "１．２" in full-width digits, "Ｎｏｔｅ："
in full-width letters and punctuation. A rule written for one spelling misses
the others, and so does a model that learned from one. ``fold`` maps every
such character to its plain ASCII form, one character for one, so offsets
into the folded text are offsets into the original: a rule can match on the
folded text and cut the original at the same place.

What it folds (NFKC's mapping where it gives one character):

* every Unicode space (no-break, ideographic, en/em/thin spaces...) and the
  zero-width space and byte-order mark -> " ";
* full-width ASCII forms U+FF01-U+FF5E (digits, Latin letters, punctuation
  such as "．", "：", "（", "）") -> their ASCII characters;
* half-width CJK punctuation (U+FF61-U+FF64) -> the full-width forms.

It leaves everything else alone: CJK punctuation without an ASCII twin ("。",
"、", "「"), letters with accents, line breaks and tabs.

``fold_spaces`` folds the spaces only: what a model reads keeps its
punctuation as written (Chinese text is full of "，" and "：" that a model
learns as they are), while a no-break space means nothing an ASCII one does not.
"""

from __future__ import annotations

import re
import unicodedata

_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\u200b\ufeff"


def _table() -> dict[int, str]:
    table = {ord(c): " " for c in _SPACES}
    for code in (*range(0xFF01, 0xFF5F), *range(0xFF61, 0xFF65)):
        folded = unicodedata.normalize("NFKC", chr(code))
        if len(folded) == 1:
            table[code] = folded
    return table


_TABLE = _table()
_SPACE_TABLE = {ord(c): " " for c in _SPACES}
# most text has nothing to fold: one scan in C finds out before any translation
_FOLDABLE = re.compile("[" + "".join(map(chr, sorted(_TABLE))) + "]")
_SPACE = re.compile(f"[{_SPACES}]")
# a character that stays visible once folded: not whitespace, and not a space that folds to " "
_VISIBLE = re.compile(rf"[^\s{_SPACES}]")


def fold(text: str) -> str:
    """``text`` with look-alike spaces, digits, letters and punctuation in one plain form; same length."""
    return text if text.isascii() or not _FOLDABLE.search(text) else text.translate(_TABLE)


def first_visible(text: str) -> str:
    """The first character of ``fold(text).lstrip()`` ("" when there is none), without folding all of ``text``:
    rules that need a line to open with a given mark skip most lines on it."""
    m = _VISIBLE.search(text)
    return "" if m is None else fold(m.group())


def fold_spaces(text: str) -> str:
    """``text`` with every Unicode space as an ASCII space; same length."""
    return text if text.isascii() or not _SPACE.search(text) else text.translate(_SPACE_TABLE)
