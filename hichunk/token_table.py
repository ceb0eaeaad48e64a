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

The same rule builds the one tokenisation: where a tokenizer takes a part of the
text in one piece (``piece_chars``) and the part holds no such character, its
tokens are its words' tokens, each word's kept in a bounded cache per tokenizer
(a word repeats: the dev corpus has 455k words, 71k distinct) and only unseen
words are tokenised, joined by spaces, in one call. Other parts, and every part
of another tokenizer, are tokenised as they stand; the tokens are the same.
"""

from __future__ import annotations

import re
import threading
import unicodedata
import weakref
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
_LAST_WORD = re.compile("[^" + PLAIN_SPACE + "]+\\Z")
# Characters that Unicode marks as default-ignorable but gives a letter category (Hangul fillers and the like).
_IGNORABLE = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0} | set(range(0x180B, 0x1810))
# Texts are tokenised in parts of about this many characters, each ending after a newline, in threads
# (``map_in_threads``). Parts depend only on the text, never on the cores, so the tokens are the same
# everywhere; a part with no newline near its end grows up to ``_MAX_PART_CHARS`` (then ends after a
# space, or there), which bounds memory on one giant line.
_PART_CHARS = 1 << 13
_MAX_PART_CHARS = 1 << 20
# A word cache is cleared when it holds more words, or characters of words, than these (some tens of MB at most;
# the dev corpus has 71k distinct words, 0.8M characters).
_MAX_CACHED_WORDS = 1 << 17
_MAX_CACHED_CHARS = 1 << 21


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


def _code_points(piece: str) -> np.ndarray:
    """The code points of ``piece`` (lone surrogates included), one per character."""
    return np.frombuffer(piece.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _plain(codes: np.ndarray) -> np.ndarray:
    """True at each code point that is plain whitespace."""
    return _PLAIN_LOOKUP[np.minimum(codes, len(_PLAIN_LOOKUP) - 1)] & (codes < len(_PLAIN_LOOKUP))


# ``_unsafe`` of the Basic Multilingual Plane's code points, filled as they are met (``_BMP_KNOWN``): a part's
# characters are then checked with one lookup, not one call per distinct character (Chinese parts have hundreds).
_BMP_UNSAFE = np.zeros(0x10000, dtype=bool)
_BMP_KNOWN = np.zeros(0x10000, dtype=bool)


def _unsafe_at(codes: np.ndarray) -> np.ndarray:
    """Positions of the unsafe characters among ``codes``."""
    odd_at = codes - 0x20 >= 0x5F  # below the space or past "~" (uint32 wraps): the only ones that can be unsafe
    odd = codes[odd_at]
    if not len(odd):
        return np.zeros(0, dtype=np.int64)
    if odd.max() < 0x10000:
        known = _BMP_KNOWN[odd]
        if not known.all():
            new = np.unique(odd[~known]).tolist()
            _BMP_UNSAFE[new] = [_unsafe(chr(c)) for c in new]  # the value first: a reader trusts a known one
            _BMP_KNOWN[new] = True
        bad_at = _BMP_UNSAFE[odd]
        return np.flatnonzero(odd_at)[bad_at] if bad_at.any() else np.zeros(0, dtype=np.int64)
    distinct = np.unique(odd).tolist()
    bad = [c for c in distinct if _unsafe(chr(c))]
    return np.flatnonzero(np.isin(codes, bad)) if bad else np.zeros(0, dtype=np.int64)


def visible_starts(piece: str, starts: np.ndarray) -> np.ndarray:
    """Each token start moved past the plain whitespace it absorbed (a start at the piece end stays there)."""
    if not len(starts):
        return starts
    space = _plain(_code_points(piece))
    nxt = np.where(space, len(piece), np.arange(len(piece), dtype=np.int64))
    nxt = np.minimum.accumulate(nxt[::-1])[::-1]
    return np.append(nxt, len(piece))[np.clip(starts, 0, len(piece))]


class _WordCache:
    """Each seen word's token ids and visible starts (relative to the word), for one tokenizer.

    Words map to slots; a slot's tokens lie at ``first[slot]:first[slot] + n[slot]`` of the flat
    arrays, which grow by doubling and are never written below their length, so arrays handed out
    stay valid while other threads add words (under the lock) or clear the cache.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self._clear()

    def _clear(self) -> None:
        self.slots: dict[str, int] = {}
        self.chars = self.n_tokens = 0
        self.first = np.zeros(1 << 12, dtype=np.int64)
        self.n = np.zeros(1 << 12, dtype=np.int64)
        self.ids = np.zeros(1 << 13, dtype=np.int32)
        self.rel = np.zeros(1 << 13, dtype=np.int32)

    def tokens(self, words: list[str], tokenizer: Tokenizer,
               with_ids: bool = True) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """Ids (None unless ``with_ids``) and visible starts (relative to their word's start) of the tokens of
        ``words``, and each word's count."""
        with self.lock:
            if len(self.slots) > _MAX_CACHED_WORDS or self.chars > _MAX_CACHED_CHARS:
                self._clear()
            try:
                slots = np.fromiter(map(self.slots.__getitem__, words), dtype=np.int64, count=len(words))
            except KeyError:
                self._add([w for w in dict.fromkeys(words) if w not in self.slots], tokenizer)
                slots = np.fromiter(map(self.slots.__getitem__, words), dtype=np.int64, count=len(words))
            first, n, ids, rel = self.first[slots], self.n[slots], self.ids, self.rel
        ends = np.cumsum(n)
        at = np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(first - ends + n, n)
        return (ids[at] if with_ids else None), rel[at], n

    def _add(self, words: list[str], tokenizer: Tokenizer) -> None:
        """Tokenise unseen words, joined by spaces in batches the tokenizer takes in one piece."""
        limit, batch, size = tokenizer.piece_chars, [], 0  # size: the batch's length joined, plus one
        for word in words:
            if batch and size + len(word) > limit:
                self._add_batch(batch, tokenizer)
                batch, size = [], 0
            batch.append(word)
            size += len(word) + 1
        if batch:
            self._add_batch(batch, tokenizer)

    def _add_batch(self, words: list[str], tokenizer: Tokenizer) -> None:
        joined = " ".join(words)
        ids, starts = tokenizer.encode(joined)
        starts = visible_starts(joined, np.asarray(starts))
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        word_starts = np.cumsum(lengths + 1) - lengths - 1
        owner = np.searchsorted(word_starts, starts, side="right") - 1
        k, t = len(self.slots), self.n_tokens
        self.first = _room(self.first, k + len(words))
        self.n = _room(self.n, k + len(words))
        self.ids = _room(self.ids, t + len(ids))
        self.rel = _room(self.rel, t + len(ids))
        counts = np.bincount(owner, minlength=len(words))
        self.n[k : k + len(words)] = counts
        self.first[k : k + len(words)] = t + np.cumsum(counts) - counts
        self.ids[t : t + len(ids)] = ids
        self.rel[t : t + len(ids)] = starts - word_starts[owner]
        self.slots.update(zip(words, range(k, k + len(words))))
        self.chars += int(lengths.sum())
        self.n_tokens = t + len(ids)


def _room(arr: np.ndarray, size: int) -> np.ndarray:
    """``arr``, or a copy twice as long or more, to hold ``size`` items."""
    if size <= len(arr):
        return arr
    out = np.zeros(max(size, 2 * len(arr)), dtype=arr.dtype)
    out[: len(arr)] = arr
    return out


_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def _word_cache(tokenizer: Tokenizer) -> _WordCache | None:
    """The tokenizer's word cache; None for a tokenizer whose tokens are not its words' tokens."""
    if not getattr(tokenizer, "whitespace_split", False) or not getattr(tokenizer, "piece_chars", 0):
        return None
    with _CACHES_LOCK:
        cache = _CACHES.get(tokenizer)
        if cache is None:
            cache = _CACHES[tokenizer] = _WordCache()
        return cache


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
        cache = _word_cache(self.tokenizer)
        parts = _parts(self.text)
        unsafe: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        built: list[tuple[np.ndarray, np.ndarray] | None] = []
        for offset, end in parts:  # in this thread: word lookups hold the GIL, and most parts need nothing else
            if not self.derived:
                built.append(None)
                continue
            piece = self.text[offset:end]
            codes = _code_points(piece)
            unsafe.append(_unsafe_at(codes) + offset)
            by_words = cache is not None and not len(unsafe[-1]) and end - offset <= self.tokenizer.piece_chars
            built.append(self._from_words(piece, codes, offset, cache, dtype) if by_words else None)

        def tokenise(span: tuple[int, int]) -> tuple[np.ndarray | None, np.ndarray]:
            piece = self.text[span[0] : span[1]]
            piece_ids, piece_starts = self.tokenizer.encode(piece)
            starts = (visible_starts(piece, np.asarray(piece_starts)) + span[0]).astype(dtype)
            return (piece_ids if self.keep_ids else None), starts  # ids held only when kept: a huge text's peak

        direct = iter(map_in_threads(tokenise, [span for span, done in zip(parts, built) if done is None]))
        encoded = [done if done is not None else next(direct) for done in built]
        starts = [np.zeros(0, dtype=dtype), *(part_starts for _, part_starts in encoded)]
        ids = [np.zeros(0, dtype=np.int64), *(part_ids for part_ids, _ in encoded)] if self.keep_ids else []
        del encoded, built
        self._starts = np.concatenate(starts)
        self._ids = np.concatenate(ids) if self.keep_ids else None  # int64, whatever each part's ids are
        if self.derived:
            self._unsafe = np.concatenate(unsafe).tolist()

    def _from_words(self, piece: str, codes: np.ndarray, offset: int, cache: _WordCache,
                    dtype: type) -> tuple[np.ndarray | None, np.ndarray]:
        """Ids (only with ``keep_ids``) and visible starts of a part with no unsafe character, from its words'
        cached tokens."""
        words = piece.split()  # splits at plain whitespace exactly, there being no unsafe character
        space = _plain(codes)
        begins = np.flatnonzero(~space & np.concatenate(([True], space[:-1])))
        ids, rel, n = cache.tokens(words, self.tokenizer, self.keep_ids)
        return ids, (np.repeat(begins + offset, n) + rel).astype(dtype)

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
        """Where the text's unsafe characters are (found while tokenising; asked only with ``whitespace_split``)."""
        if self._unsafe is None:
            self._encode()
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
