"""Line features for the encoder model: hashed character n-grams, text cues, layout and numbering context.

Each model-input line becomes (a) a bag of hashed character n-grams of its
lower-cased text, framed by start/end markers so that "how a line begins and
ends" is visible, and (b) a vector of cues: what the text gives away (length,
final punctuation, numbering style and depth such as ``3.2``, ``第2章``,
``一、``, ``（一）``, case, code-likeness), where the line sits in the
document's layout (a whole source line, blank lines around it, indentation:
``hichunk.protocol.LineLayout``) and how its numbering relates to the other
numbered heading-like lines of the window ("2." after "1.2" is as shallow as
"1."; the first numbering style met is the top one).

The n-gram hash is a fixed polynomial over Unicode code points (never Python's
salted ``hash``), so features, and therefore predictions, are identical from
run to run and machine to machine. Chinese and English are handled alike:
characters are the unit, no tokenizer or vocabulary is needed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter, itemgetter

import numpy as np

from hichunk.numbering import PATTERNS, number_pattern
from hichunk.protocol import LineLayout
from hichunk.sentences import is_chinese

NGRAM_SIZES = (1, 2, 3, 4)
NGRAM_CHARS = 96  # n-grams come from the first this-many characters of a line (plus its last few)
TAIL_CHARS = 12
_FRAME_START, _FRAME_END = "\x02", "\x03"  # around every line, so n-grams see where it begins and ends
_MULT = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)

NUMBER_STYLES = tuple(name for name, _ in PATTERNS)
_END_MARKS = (".", "。", ":", "：", ",", "，", ";", "；", "?", "？", "!", "！", ")", "）")
_SENTENCE_END = (".", "。", ";", "；", ",", "，", "!", "！", "?", "？")
# outline numbers: "3", "3.2", "3.2.1.", "J.3.1." (appendix letters), followed by a space or the end
_OUTLINE = re.compile(r"^(?:[0-9０-９]{1,3}|[A-Z](?=[.．]))((?:[.．][0-9０-９]{1,3})*)[.．]?(?:\s|$)")
_BULLET = re.compile(r"^\s*(?:[-*+•·▪◦‣]|\d{1,3}[.)]|[a-z][.)])\s")
_CODE = re.compile(r"[{}()\[\]=<>;_/\\$@|`]")
_URL = re.compile(r"https?://|www\.")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_ASCII_WORD = re.compile(r"[A-Za-z]+")  # _WORD on ASCII text, read faster
_ALNUM = re.compile(r"[\w\u3400-\u9fff]")  # read on a line's last character only
_ASCII_LOWER = re.compile(r"[a-z]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
HEADING_CHARS = 100  # longer lines are never taken as numbered heading candidates
RANKS = 4  # numbering relations are one-hot over 0, 1, 2, 3+
# Box titles that open a note inside a section, never a section: "Note", "Warning:", "注意", "提示：".
_CALLOUT = re.compile(r"^(?:note|notes|warning|caution|tip|tips|hint|important|danger|attention|example|see also|"
                      r"注意|提示|警告|小心|说明|注|技巧|重要|危险|示例|例如|参见)\s*[:：.。!！]?$", re.I)
# A table-of-contents entry: leader dots (or a long gap) before a trailing page number.
_TOC_ENTRY = re.compile(r"(?:\.\s?){3,}\s*[0-9ivxlcdm]+\s*$|\S\s{3,}[0-9]{1,4}\s*$", re.I)
_TOC_END = re.compile(r"[0-9ivxlcdm]", re.I)  # how a stripped entry must end: a cheap test before the search
UNDERLINES = ("=", "-", "~", "*", "^", "#")  # then one slot for any other rule character
# The layout fields the version-2 model reads, in its order; later fields feed the typography block.
LAYOUT_V2 = ("starts_line", "ends_line", "blank_before", "blank_after", "indented")
_LAYOUT_V2_FIELDS = attrgetter(*LAYOUT_V2)


@dataclass(frozen=True, slots=True)
class LineFeatures:
    """Features of a window's lines: n-gram bags (flat ids + offsets) and a dense cue matrix."""

    ngram_ids: np.ndarray  # int64, all lines' n-gram bucket ids, line after line
    ngram_offsets: np.ndarray  # int64, where each line's ids start in ngram_ids
    cues: np.ndarray  # float32 [n_lines, N_CUES]


def _framed(text: str) -> str:
    low = text.lower()
    if len(low) > NGRAM_CHARS + TAIL_CHARS:
        low = low[:NGRAM_CHARS] + " " + low[-TAIL_CHARS:]
    return f"{_FRAME_START}{low}{_FRAME_END}"


def hash_ngrams(lines: Sequence[str], buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """Bucket ids of every character n-gram (sizes ``NGRAM_SIZES``) of every line, and per-line offsets."""
    if not lines:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    framed = [_framed(t) for t in lines]
    lengths = np.fromiter(map(len, framed), dtype=np.int64, count=len(framed))
    chars = np.frombuffer("".join(framed).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    line_of = np.repeat(np.arange(len(lines), dtype=np.int64), lengths)
    ids, owners = [], []
    with np.errstate(over="ignore"):
        for n in NGRAM_SIZES:
            if len(chars) < n:
                continue
            h = np.full(len(chars) - n + 1, np.uint64(n) * _MIX, dtype=np.uint64)
            for k in range(n):
                h = h * _MULT + chars[k : len(chars) - n + 1 + k]
            same_line = line_of[: len(h)] == line_of[n - 1 :]
            h = h[same_line]
            h ^= h >> np.uint64(29)
            h *= _MIX
            h ^= h >> np.uint64(32)
            ids.append((h % np.uint64(buckets)).astype(np.int64))
            owners.append(line_of[: len(same_line)][same_line])
    flat = np.concatenate(ids)
    owner = np.concatenate(owners)
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=len(lines))
    offsets = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    return flat[order], offsets


def outline_depth(text: str) -> int:
    """Depth of an outline number at the start of ``text`` ("3" and "3." 1, "3.2" 2, "J.3.1." 3), else 0."""
    m = _OUTLINE.match(text)
    if not m:
        return 0
    return 1 + m.group(1).count(".") + m.group(1).count("．")


def _heading_like(text: str) -> bool:
    """Short enough for a heading and not ending like a sentence."""
    s = text.strip()
    return bool(s) and len(s) <= HEADING_CHARS and not s.endswith(_SENTENCE_END)


@lru_cache(maxsize=1 << 14)
def numbering_key(text: str) -> str | None:
    """How a heading-like line is numbered ("outline-2", "zh-chapter"...), or None for other lines.

    Heading-like: numbered, at most ``HEADING_CHARS`` long, not ending like a
    sentence. Lines with equal keys are numbered the same way.
    """
    s = text.strip()
    if not _heading_like(s):
        return None
    depth = outline_depth(s)
    style = number_pattern(s)
    if depth and style in (None, "decimal", "letter"):
        return f"outline-{depth}"
    return style


_NO_END = (0.0,) * len(_END_MARKS)
_END_ONE_HOT = {m: tuple(float(m == x) for x in _END_MARKS) for m in _END_MARKS}
_NO_STYLE = (0.0,) * len(NUMBER_STYLES)
_STYLE_ONE_HOT = {name: tuple(float(name == x) for x in NUMBER_STYLES) for name in NUMBER_STYLES}


def _all_caps(s: str) -> float:
    """1.0 when ``s`` has a letter and none of its ASCII letters is lower-case ("NOTE", "API 参考")."""
    if _ASCII_LOWER.search(s):
        return 0.0
    if s.isascii():
        return float(_ASCII_LETTER.search(s) is not None)
    return float(any(c.isalpha() for c in s))


_FIRST_CHAR = itemgetter(0)


@lru_cache(maxsize=1 << 14)
def text_cues(text: str) -> tuple[float, ...]:
    """Cues of one line's text alone (cached: residual lines recur from window to window)."""
    s = text.strip()
    n = len(s)
    ascii_only = s.isascii()
    words = (_ASCII_WORD if ascii_only else _WORD).findall(s)
    style = number_pattern(s) if s else None
    last, first = s[-1:], s[:1]
    cues = [
        math.log1p(n) / 7.0,
        math.log1p(len(words)) / 5.0,
        float(n <= 40),
        float(n <= 80),
        float(not ascii_only and is_chinese(s)),  # no ASCII text is Chinese
        float(first.isupper()),
        float(first.islower()),
        sum(map(str.isupper, map(_FIRST_CHAR, words))) / len(words) if words else 0.0,  # title-cased words
        _all_caps(s),
        float(first.isdigit()),
        min(outline_depth(s), 4) / 4.0,
        float(numbering_key(s) is not None),
        float(bool(_BULLET.match(s))),
        min(len(_CODE.findall(s)) / max(n, 1) * 5.0, 1.0),
        float(s.startswith(("```", "~~~"))),
        float(bool(_URL.search(s))),
        float(_ALNUM.match(last) is not None),  # ends with a letter, digit or CJK character
    ]
    return (*cues, *_END_ONE_HOT.get(last, _NO_END), *_STYLE_ONE_HOT.get(style, _NO_STYLE))


_TYPOGRAPHY = attrgetter("size", "bold", "italic", "gap", "underline")


@lru_cache(maxsize=1 << 10)
def _typography_cues(typography: tuple) -> tuple[float, ...]:
    """``typography_cues`` of a layout's ``_TYPOGRAPHY`` fields (cached on them: a document has few distinct
    ones, and a tuple is hashed and compared faster than a ``LineLayout``)."""
    size, bold, italic, gap, underline = typography
    rule = [float(underline == c) for c in UNDERLINES] + [float(bool(underline) and underline not in UNDERLINES)]
    return (
        float(size != 1.0 or bold or italic or gap > 0),  # typography known
        min(max(size - 1.0, -0.5), 1.5),
        float(size >= 1.12),
        float(bold),
        float(italic),
        min(gap, 4.0) / 4.0,
        *rule,
    )


def typography_cues(layout: LineLayout) -> tuple[float, ...]:
    """The layout half of ``style_cues``: type size, weight and style, space above, underline."""
    return _typography_cues(_TYPOGRAPHY(layout))


@lru_cache(maxsize=1 << 14)
def label_cues(text: str) -> tuple[float, ...]:
    """The text half of ``style_cues``: callout, table-of-contents and capitalised lines (cached per line)."""
    s = text.strip()
    return (
        float(bool(_CALLOUT.match(s))),
        float(_TOC_END.match(s[-1:]) is not None and _TOC_ENTRY.search(s) is not None),
        float(len(s) <= HEADING_CHARS and not _ASCII_LOWER.search(s) and len(_ASCII_LETTER.findall(s)) >= 3),
    )


def style_cues(text: str, layout: LineLayout) -> tuple[float, ...]:
    """Cues of model version 3: typography, underlines, callout and table-of-contents lines."""
    return typography_cues(layout) + label_cues(text)


N_TEXT_CUES = len(text_cues("x"))
N_LAYOUT_CUES = 1 + len(LAYOUT_V2)  # "layout known" + the version-2 layout fields
N_WINDOW_CUES = 4 + N_LAYOUT_CUES + 2 * RANKS + 3 + 1 + 2
N_CUES_V2 = N_TEXT_CUES + N_WINDOW_CUES
N_TYPOGRAPHY_CUES = len(typography_cues(LineLayout()))
N_STYLE_CUES = N_TYPOGRAPHY_CUES + len(label_cues("x"))
N_CUES = N_CUES_V2 + N_STYLE_CUES  # version 3; a version-2 network reads the first N_CUES_V2 columns


def _numbering_relations(keys: Sequence[str | None], out: np.ndarray) -> None:
    """Fill each numbered heading-like line's relation to the others of the window into ``out`` [n, 2 * RANKS + 4].

    Columns: rank of its style in order of first appearance (one-hot); outline
    depth relative to the shallowest outline number in the window (one-hot);
    shallower / same / deeper than the previous numbered line; same key as it.
    """
    depths = [int(k[8:]) for k in keys if k and k.startswith("outline-")]
    top = min(depths, default=0)
    order: dict[str, int] = {}
    prev_key, prev_depth = None, 0
    for i, key in enumerate(keys):
        if key is None:
            continue
        rank = order.setdefault(key, len(order))
        out[i, min(rank, RANKS - 1)] = 1.0
        depth = int(key[8:]) if key.startswith("outline-") else 0
        if depth:
            out[i, RANKS + min(depth - top, RANKS - 1)] = 1.0
        if prev_key is not None:
            if depth and prev_depth:
                out[i, 2 * RANKS + (0 if depth < prev_depth else 1 if depth == prev_depth else 2)] = 1.0
            out[i, 2 * RANKS + 3] = float(key == prev_key)
        prev_key, prev_depth = key, depth


ROW_CACHE = 1 << 14  # lines whose cue rows are kept (as many as ``text_cues`` keeps)


class RowCache:
    """Float32 rows of per-line cues, kept per line text: a window's rows are joined from the cache, not
    converted from tuples of Python floats window after window (residual lines come back in the next window).
    Lines not seen before are converted together, once, as the whole window's tuples were: each value is cast
    the same way. Bounded: emptied when full."""

    def __init__(self, row: Callable[[str], tuple[float, ...]], size: int = ROW_CACHE):
        self.row = row
        self.size = size
        self.rows: dict[str, np.ndarray] = {}

    def __call__(self, lines: Sequence[str]) -> np.ndarray:
        """The rows of ``lines`` [len(lines), row size] (``lines`` not empty)."""
        cache = self.rows
        rows = list(map(cache.get, lines))
        missing = list(dict.fromkeys(t for t, r in zip(lines, rows) if r is None))
        if missing:
            block = np.array(list(map(self.row, missing)), dtype=np.float32).reshape(len(missing), -1)
            block.flags.writeable = False
            fresh = dict(zip(missing, block))
            rows = [fresh[t] if r is None else r for t, r in zip(lines, rows)]
            if len(cache) + len(fresh) > self.size:
                cache.clear()
            cache.update(fresh)
        return np.concatenate(rows).reshape(len(rows), -1)


def _text_label_cues(text: str) -> tuple[float, ...]:
    return (*text_cues(text), *label_cues(text))


_text_label_rows = RowCache(_text_label_cues)


@lru_cache(maxsize=1 << 10)
def _layout_row(layout: LineLayout) -> np.ndarray:
    """The version-2 layout fields and ``typography_cues`` of a layout as one float32 row (a document
    has few distinct layouts)."""
    row = np.array((*_LAYOUT_V2_FIELDS(layout), *typography_cues(layout)), dtype=np.float32)
    row.flags.writeable = False
    return row


_ROWS_BY_ID: dict[int, tuple[LineLayout, np.ndarray]] = {}  # layout object -> its row: no dataclass hash per line


def _layout_rows(layout: Sequence[LineLayout]) -> np.ndarray:
    """``_layout_row`` of every layout, stacked. Model units share one object per distinct layout, so a row is
    found by the object's identity first (the entry holds the object: an id is never reused while it is there)."""
    by_id = _ROWS_BY_ID
    if len(by_id) > 1 << 12:
        by_id.clear()
    rows = []
    for x in layout:
        hit = by_id.get(id(x))
        if hit is None or hit[0] is not x:
            hit = by_id[id(x)] = (x, _layout_row(x))
        rows.append(hit[1])
    return np.concatenate(rows).reshape(len(rows), -1)


def window_cues(lines: Sequence[str], n_residual: int, layout: Sequence[LineLayout] = (),
                text_rows: np.ndarray | None = None) -> np.ndarray:
    """Dense cue matrix of a window: text cues, position, layout and numbering relations of each line.

    ``text_rows`` may bring the lines' ``text_cues`` already computed (training keeps them per line).
    """
    n = len(lines)
    out = np.zeros((n, N_CUES), dtype=np.float32)
    if not n:
        return out
    if text_rows is None:
        rows = _text_label_rows(lines)
        out[:, :N_TEXT_CUES] = rows[:, :N_TEXT_CUES]
        out[:, N_CUES - N_STYLE_CUES + N_TYPOGRAPHY_CUES :] = rows[:, N_TEXT_CUES:]
    else:
        out[:, :N_TEXT_CUES] = text_rows
        out[:, N_CUES - N_STYLE_CUES + N_TYPOGRAPHY_CUES :] = list(map(label_cues, lines))
    col = N_TEXT_CUES
    idx = np.arange(n)
    out[:, col] = idx < n_residual
    out[:, col + 1] = idx == n_residual
    out[:, col + 2] = idx == 0
    out[:, col + 3] = np.minimum(idx, 50) / 50.0
    col += 4
    if layout:
        out[:, col] = 1.0
        layout_rows = _layout_rows(layout)
        out[:, col + 1 : col + N_LAYOUT_CUES] = layout_rows[:, : len(LAYOUT_V2)]
        out[:, N_CUES - N_STYLE_CUES : N_CUES - N_STYLE_CUES + N_TYPOGRAPHY_CUES] = layout_rows[:, len(LAYOUT_V2) :]
    col += N_LAYOUT_CUES
    whole = [x.starts_line and x.ends_line for x in layout] if layout else [True] * n
    keys = [numbering_key(t) if w else None for t, w in zip(lines, whole)]
    _numbering_relations(keys, out[:, col : col + 2 * RANKS + 4])
    col += 2 * RANKS + 4
    # how numbered the window's heading-like lines are: in a numbered document, an unnumbered term is no heading
    alone = [x.blank_before and x.blank_after for x in layout] if layout else whole
    candidates = [k for t, a, k in zip(lines, alone, keys) if a and _heading_like(t)]
    numbered = sum(k is not None for k in candidates)
    out[:, col] = numbered / len(candidates) if candidates else 0.0
    out[:, col + 1] = min(numbered, 8) / 8.0
    col += 2
    if not layout:
        out[:, col : col + N_TYPOGRAPHY_CUES] = typography_cues(LineLayout())
    return out


def featurize(lines: Sequence[str], n_residual: int, buckets: int, layout: Sequence[LineLayout] = ()) -> LineFeatures:
    """All features of one window of model-input lines (edge whitespace ignored)."""
    lines = [t.strip() for t in lines]
    ids, offsets = hash_ngrams(lines, buckets)
    return LineFeatures(ids, offsets, window_cues(lines, n_residual, layout))
