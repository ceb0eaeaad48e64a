"""Exact token counts of any span of a text, from one tokenisation of the whole text.

Chunkers ask for many sizes per document (sentences, leaves, merges, every cut
they try); counting each span anew tokenised the text two or three times over.
A ``TokenTable`` tokenises the text once.

Why a span's count can be derived: a tokenizer that splits on whitespace before
segmenting (``whitespace_split``, true of the offline default, a SentencePiece
model) gives a whitespace-delimited word the same tokens wherever it stands, and
a text tokenised alone is the concatenation of its words' tokens. So the count of
``text[a:b]`` alone is the number of the whole text's tokens whose visible part
begins inside the words that lie wholly in the span, plus the counts of the (at
most two) words cut by the span's ends, tokenised alone. The rule needs every
character of the span to be either plain whitespace (space, tab, newline, CR) or
one the tokenizer keeps as text (the Unicode spaces that NFKC turns into a
space, such as no-break spaces, count as whitespace): a span holding another
space character, a control or format character or an ignorable filler (which a
tokenizer may normalise into whitespace or into nothing), or one that such a
character just precedes, is counted directly, as is every span of a tokenizer
without ``whitespace_split``. Counts are therefore always exactly
``tokenizer.count(text[a:b])``; the tests compare them on random spans.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from functools import lru_cache

import numpy as np

from hichunk.cores import map_in_threads
from hichunk.tokens import Tokenizer

# Whitespace that whitespace-splitting tokenizers split on and drop: ASCII blanks and the spaces NFKC maps to " ".
PLAIN_SPACE = " \t\n\r\xa0\u3000\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f"
_PLAIN_SPACE_RE = re.compile("[" + PLAIN_SPACE + "]")
_PLAIN_LOOKUP = np.zeros(0x3001, dtype=bool)  # code point -> plain whitespace (the largest is U+3000)
_PLAIN_LOOKUP[[ord(c) for c in PLAIN_SPACE]] = True
_PRINTABLE_ASCII = frozenset(chr(c) for c in range(0x20, 0x7F)) | frozenset(PLAIN_SPACE)
_LAST_WORD = re.compile("[^" + PLAIN_SPACE + "]+\\Z")
# Characters that Unicode marks as default-ignorable but gives a letter category (Hangul fillers and the like).
_IGNORABLE = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0} | set(range(0x180B, 0x1810))
# Texts are tokenised in parts of about this many characters, each ending after a newline, in threads
# (``map_in_threads``). Parts depend only on the text, never on the cores, so the tokens are the same
# everywhere; a part with no newline near its end grows up to ``_MAX_PART_CHARS`` (then ends after a
# space, or there), which bounds memory on one giant line.
_PART_CHARS = 1 << 13
_MAX_PART_CHARS = 1 << 20


@lru_cache(maxsize=1 << 16)
def _unsafe(c: str) -> bool:
    """True for a character a tokenizer may turn into whitespace or nothing."""
    if c in PLAIN_SPACE:
        return False
    return c.isspace() or ord(c) in _IGNORABLE or unicodedata.category(c)[0] in "CZ" or 0xFE00 <= ord(c) <= 0xFE0F


def _parts(text: str) -> list[tuple[int, int]]:
    """(start, end) spans covering ``text``, cut after newlines where there are any (spans, not copies:
    each part is sliced only while it is tokenised, so memory stays near the text's own size)."""
    out: list[tuple[int, int]] = []
    start, n = 0, len(text)
    while start < n:
        end = min(n, start + _PART_CHARS)
        if end < n:
            cap = min(n, start + _MAX_PART_CHARS)
            nl = text.rfind("\n", start, end)
            if nl <= start:
                nl = text.find("\n", end, cap)
            if nl > start:
                end = nl + 1
            elif cap < n:
                space = text.rfind(" ", start, cap)
                end = space + 1 if space > start else cap
            else:
                end = n
        out.append((start, end))
        start = end
    return out


def visible_starts(piece: str, starts: np.ndarray) -> np.ndarray:
    """Each token start moved past the plain whitespace it absorbed (a start at the piece end stays there)."""
    if not len(starts):
        return starts
    codes = np.frombuffer(piece.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    space = _PLAIN_LOOKUP[np.minimum(codes, len(_PLAIN_LOOKUP) - 1)] & (codes < len(_PLAIN_LOOKUP))
    nxt = np.where(space, len(piece), np.arange(len(piece), dtype=np.int64))
    nxt = np.minimum.accumulate(nxt[::-1])[::-1]
    return np.append(nxt, len(piece))[np.clip(starts, 0, len(piece))]


class TokenTable:
    """Token counts and token starts of one text's spans (offsets into that text).

    ``count(a, b)`` equals ``tokenizer.count(text[a:b])`` exactly; ``starts(a, b)``
    gives where the text's tokens that begin in ``[a, b)`` begin, past any
    whitespace they absorbed (the places a size-based cut may fall). The text is
    tokenised once, on first use; ``ids`` are kept only when asked for.
    """

    def __init__(self, text: str, tokenizer: Tokenizer, keep_ids: bool = False):
        self.text = text
        self.tokenizer = tokenizer
        self.derived = bool(getattr(tokenizer, "whitespace_split", False))
        self.keep_ids = keep_ids
        self._starts: np.ndarray | None = None
        self._ids: np.ndarray | None = None
        self._unsafe: list[int] | None = None

    # -- the one tokenisation -------------------------------------------------
    def _encode(self) -> None:
        # int32 halves the memory of a huge text's table; searches pass keys of the same type (``key``),
        # since numpy would otherwise cast the whole array on every search
        dtype = np.int32 if len(self.text) < 2**31 else np.int64

        def encode_part(span: tuple[int, int]) -> tuple[np.ndarray, np.ndarray | None]:
            offset, end = span
            piece = self.text[offset:end]
            piece_ids, piece_starts = self.tokenizer.encode(piece)
            starts = (visible_starts(piece, np.asarray(piece_starts)) + offset).astype(dtype)
            return starts, np.asarray(piece_ids, dtype=np.int64) if self.keep_ids else None

        encoded = map_in_threads(encode_part, _parts(self.text))
        starts = [np.zeros(0, dtype=dtype), *(part_starts for part_starts, _ in encoded)]
        ids = [np.zeros(0, dtype=np.int64), *(part_ids for _, part_ids in encoded)] if self.keep_ids else []
        del encoded
        self._starts = np.concatenate(starts)
        self._ids = np.concatenate(ids) if self.keep_ids else None

    @property
    def all_starts(self) -> np.ndarray:
        """Visible start of every token of the text, in order."""
        if self._starts is None:
            self._encode()
        return self._starts

    @property
    def ids(self) -> np.ndarray:
        """Token ids of the whole text (only with ``keep_ids``)."""
        if not self.keep_ids:
            raise ValueError("this token table was made without keep_ids")
        if self._starts is None:
            self._encode()
        return self._ids

    def __len__(self) -> int:
        return len(self.all_starts)

    def _unsafe_positions(self) -> list[int]:
        if self._unsafe is None:
            bad = sorted(c for c in set(self.text) - _PRINTABLE_ASCII if _unsafe(c))
            pattern = re.compile("[" + "".join(re.escape(c) for c in bad) + "]") if bad else None
            self._unsafe = [m.start() for m in pattern.finditer(self.text)] if pattern else []
        return self._unsafe

    def _near_unsafe(self, a: int, b: int) -> bool:
        """True when ``text[a:b]``, or the character before the plain whitespace that precedes it, is unsafe
        (a token of the text may begin there and reach into the span's first word)."""
        unsafe = self._unsafe_positions()
        if not unsafe:
            return False
        while a > 0 and self.text[a - 1] in PLAIN_SPACE:
            a -= 1
        k = bisect_left(unsafe, a - 1)
        return k < len(unsafe) and unsafe[k] < b

    def _word_start(self, x: int, b: int) -> int:
        """Where the word that ``b`` cuts begins (not before ``x``), looking back as far as needed."""
        width = 64
        while True:
            lo = max(x, b - width)
            m = _LAST_WORD.search(self.text, lo, b)
            start = m.start() if m else b
            if start > lo or lo == x:
                return start
            width *= 8

    # -- queries --------------------------------------------------------------
    def key(self, offsets):
        """Offsets (a number or a sequence) as search keys of the table's own integer type."""
        dtype = self.all_starts.dtype
        return dtype.type(offsets) if np.isscalar(offsets) else np.asarray(offsets, dtype=dtype)

    def index(self, pos: int) -> int:
        """Number of tokens whose visible start is before ``pos``."""
        starts = self.all_starts
        return int(starts.searchsorted(starts.dtype.type(pos), side="left"))

    def indexes(self, offsets) -> np.ndarray:
        """``index`` of each of many offsets, in one search."""
        return self.all_starts.searchsorted(self.key(offsets), side="left")

    def starts(self, a: int, b: int) -> np.ndarray:
        """Visible starts of the tokens beginning in ``[a, b)`` (absolute offsets)."""
        s = self.all_starts
        return s[s.searchsorted(self.key(a), side="left") : s.searchsorted(self.key(b), side="left")]

    def span_counts(self, spans: list[tuple[int, int]]) -> list[int]:
        """``count(a, b)`` of each span; spans whose ends fall between words take one search for all."""
        if not spans:
            return []
        if not self.derived or self._unsafe_positions():
            return [self.count(a, b) for a, b in spans]
        text, n = self.text, len(self.text)

        def between_words(x: int) -> bool:
            return x <= 0 or x >= n or text[x - 1] in PLAIN_SPACE or text[x] in PLAIN_SPACE

        idx = self.indexes([x for span in spans for x in span]).reshape(-1, 2)
        fast = (idx[:, 1] - idx[:, 0]).tolist()
        return [m if b > a and between_words(a) and between_words(b) else self.count(a, b)
                for (a, b), m in zip(spans, fast)]

    def count(self, a: int, b: int) -> int:
        """Tokens of ``text[a:b]`` tokenised on its own (exactly ``tokenizer.count``)."""
        text = self.text
        if b <= a:
            return 0
        if not self.derived:
            return self.tokenizer.count(text[a:b])
        if self._near_unsafe(a, b):
            return self.tokenizer.count(text[a:b])
        x, y, extra = a, b, 0
        if a > 0 and text[a - 1] not in PLAIN_SPACE and text[a] not in PLAIN_SPACE:  # a cuts a word
            m = _PLAIN_SPACE_RE.search(text, a, b)
            if m is None:  # the span lies inside one word
                return self.tokenizer.count(text[a:b])
            x = m.start()
            extra += self.tokenizer.count(text[a:x])
        if b < len(text) and text[b - 1] not in PLAIN_SPACE and text[b] not in PLAIN_SPACE:  # b cuts a word
            y = self._word_start(x, b)
            extra += self.tokenizer.count(text[y:b])
        return self.index(y) - self.index(x) + extra
