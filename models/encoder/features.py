"""Line features for the encoder model: hashed character n-grams plus cheap layout cues.

Each model-input line becomes (a) a bag of hashed character n-grams of its
lower-cased text, framed by start/end markers so that "how a line begins and
ends" is visible, and (b) a short vector of hand-made cues that headings give
away: length, final punctuation, numbering style and depth (``3.2``, ``第2章``,
``一、``, ``（一）``), case, code-likeness, position in the window.

The n-gram hash is a fixed polynomial over Unicode code points (never Python's
salted ``hash``), so features, and therefore predictions, are identical from
run to run and machine to machine. Chinese and English are handled alike:
characters are the unit, no tokenizer or vocabulary is needed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hicbench.data.numbering import PATTERNS, number_pattern
from hichunk.sentences import is_chinese

NGRAM_SIZES = (1, 2, 3, 4)
NGRAM_CHARS = 160  # n-grams come from the first this-many characters of a line (plus its last few)
TAIL_CHARS = 12
_START, _END = 0x02, 0x03
_MULT = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)

NUMBER_STYLES = tuple(name for name, _ in PATTERNS)
_END_MARKS = (".", "。", ":", "：", ",", "，", ";", "；", "?", "？", "!", "！", ")", "）")
_DECIMAL = re.compile(r"^\s*[0-9０-９]{1,3}((?:[.．][0-9０-９]{1,3})*)")
_BULLET = re.compile(r"^\s*(?:[-*+•·▪◦‣]|\d{1,3}[.)]|[a-z][.)])\s")
_CODE = re.compile(r"[{}()\[\]=<>;_/\\$@|`]")
_URL = re.compile(r"https?://|www\.")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_ENDS_ALNUM = re.compile(r"[\w\u3400-\u9fff]$")


@dataclass(frozen=True, slots=True)
class LineFeatures:
    """Features of a window's lines: n-gram bags (flat ids + offsets) and a dense cue matrix."""

    ngram_ids: np.ndarray  # int64, all lines' n-gram bucket ids, line after line
    ngram_offsets: np.ndarray  # int64, where each line's ids start in ngram_ids
    cues: np.ndarray  # float32 [n_lines, N_CUES]


def _codepoints(text: str) -> np.ndarray:
    low = text.lower()
    if len(low) > NGRAM_CHARS + TAIL_CHARS:
        low = low[:NGRAM_CHARS] + " " + low[-TAIL_CHARS:]
    arr = np.frombuffer(low.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    return np.concatenate(([_START], arr, [_END])).astype(np.uint64)


def hash_ngrams(lines: list[str], buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """Bucket ids of every character n-gram (sizes ``NGRAM_SIZES``) of every line, and per-line offsets."""
    if not lines:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pieces = [_codepoints(t) for t in lines]
    lengths = np.array([len(p) for p in pieces], dtype=np.int64)
    chars = np.concatenate(pieces)
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


@lru_cache(maxsize=1 << 16)
def _cue_vector(text: str) -> tuple[float, ...]:
    s = text.strip()
    n = len(s)
    words = _WORD.findall(s)
    zh = is_chinese(s) if s else False
    style = number_pattern(s) if s else None
    dec = _DECIMAL.match(s) if style == "decimal" else None
    depth = (dec.group(1).count(".") + dec.group(1).count("．") + 1) if dec else (1 if style else 0)
    last = s[-1:] if s else ""
    caps = [w for w in words if w[:1].isupper()]
    alpha = [c for c in s if c.isalpha()]
    cues = [
        np.log1p(n) / 7.0,
        np.log1p(len(words)) / 5.0,
        float(n <= 40),
        float(n <= 80),
        float(zh),
        float(bool(s) and s[0].isupper()),
        len(caps) / len(words) if words else 0.0,
        float(bool(alpha) and all(c.isupper() for c in alpha if c.isascii())) if alpha else 0.0,
        float(bool(s) and s[0].isdigit()),
        min(depth, 4) / 4.0,
        float(bool(_BULLET.match(s))),
        min(len(_CODE.findall(s)) / max(n, 1) * 5.0, 1.0),
        float(bool(_URL.search(s))),
        float(bool(_ENDS_ALNUM.search(s))),
    ]
    cues.extend(float(last == m) for m in _END_MARKS)
    cues.extend(float(style == name) for name in NUMBER_STYLES)
    return tuple(cues)


N_CUES = len(_cue_vector("x")) + 4  # + position cues added per window


def window_cues(lines: list[str], n_residual: int) -> np.ndarray:
    """Dense cue matrix of a window: per-line cues plus where each line sits in the window."""
    n = len(lines)
    out = np.zeros((n, N_CUES), dtype=np.float32)
    for i, text in enumerate(lines):
        row = _cue_vector(text)
        out[i, : len(row)] = row
    if n:
        idx = np.arange(n)
        out[:, -4] = idx < n_residual
        out[:, -3] = idx == n_residual
        out[:, -2] = idx == 0
        out[:, -1] = np.minimum(idx, 50) / 50.0
    return out


def featurize(lines: list[str], n_residual: int, buckets: int) -> LineFeatures:
    """All features of one window of model-input lines (edge whitespace ignored)."""
    lines = [t.strip() for t in lines]
    ids, offsets = hash_ngrams(lines, buckets)
    return LineFeatures(ids, offsets, window_cues(lines, n_residual))
