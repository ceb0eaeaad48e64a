"""The encoder's fast feature code equals its straightforward reference, value for value (hypothesis).

The model's outputs must not move when feature code gets faster: each reference below is the plain
way of computing the same thing (the code before it was made faster), and random lines mix Chinese
and English, outline numbers, chapter labels, full-width forms and odd spaces.
"""

from __future__ import annotations

import math
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hichunk.models.encoder import features as F
from hichunk.models.encoder import features_v4 as F4
from hichunk.models.encoder.numpy_net import BAG_BLOCK, _bag_mean
from hichunk.numbering import number_pattern
from hichunk.protocol import LineLayout
from hichunk.sentences import is_chinese
from hichunk.textnorm import fold

PIECES = ["第 1 章", "第\u00a01\u00a0章", "第一章", "（一）", "(2)", "一、", "2.3.1", "1.", "3)", "１２．３", "Ａｂｃ", "A.", "IV.",
          "ii)", "§ 4", "Chapter 3", "CHAPTER IV", "Figure 9.5.", "图 3.1", "NOTE", "Note:", "TIP", "How do", "Q:", "问：",
          "?", "？", "......", ". . .", "  12", "xii", "XII", "ı", "İ", "K", "http://x.org", "www.a.b", "{x}", "a_b", "```",
          "~~~", "Introduction", "the", "Install", "安装", "系统配置", "。", "，", "：", ":", ";", "!", ")", "）", "\u00a0",
          "\u3000", "\u2009", "\t", " ", "  ", "\x1c", "\u200b", "\ufeff", "-", "*", "•", "=", "0", "٣", "²", "½", "ǅ", "\n"]
toc_entries = st.tuples(st.sampled_from(PIECES), st.sampled_from(["......", ". . . ", "    ", " "]),
                        st.sampled_from(["12", "XII", "iv", "İ", "ı", "K", "x", "١٢"])).map("".join)
lines = st.one_of(st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
                  st.lists(st.sampled_from(PIECES), max_size=12).map(" ".join),
                  toc_entries, st.text(max_size=60))
layouts = st.builds(LineLayout, starts_line=st.booleans(), ends_line=st.booleans(), blank_before=st.booleans(),
                    blank_after=st.booleans(), indented=st.booleans(), underline=st.sampled_from(["", "=", "-", "+", "#"]),
                    size=st.sampled_from([1.0, 1, 0.4, 0.9, 1.12, 1.3, 3.0]), bold=st.booleans(), italic=st.booleans(),
                    gap=st.sampled_from([0.0, 0, 0.5, 2, 7.5]), role=st.sampled_from(["", "toc", "aside"]))


def ref_text_cues(text: str) -> tuple[float, ...]:
    s = text.strip()
    n = len(s)
    words = re.findall(r"[^\W\d_]+", s)
    style = number_pattern(s) if s else None
    last, first = s[-1:], s[:1]
    cues = [math.log1p(n) / 7.0, math.log1p(len(words)) / 5.0, float(n <= 40), float(n <= 80),
            float(is_chinese(s)) if s else 0.0, float(first.isupper()), float(first.islower()),
            sum(w[:1].isupper() for w in words) / len(words) if words else 0.0, F._all_caps(s), float(first.isdigit()),
            min(F.outline_depth(s), 4) / 4.0, float(F.numbering_key(s) is not None), float(bool(F._BULLET.match(s))),
            min(len(F._CODE.findall(s)) / max(n, 1) * 5.0, 1.0), float(s.startswith(("```", "~~~"))),
            float(bool(F._URL.search(s))), float(bool(re.search(r"[\w\u3400-\u9fff]$", s)))]
    return (*cues, *F._END_ONE_HOT.get(last, F._NO_END), *F._STYLE_ONE_HOT.get(style, F._NO_STYLE))


def ref_style_cues(text: str, layout: LineLayout) -> tuple[float, ...]:
    s = text.strip()
    rule = [float(layout.underline == c) for c in F.UNDERLINES]
    return (float(layout.size != 1.0 or layout.bold or layout.italic or layout.gap > 0), min(max(layout.size - 1.0, -0.5), 1.5),
            float(layout.size >= 1.12), float(layout.bold), float(layout.italic), min(layout.gap, 4.0) / 4.0, *rule,
            float(bool(layout.underline) and layout.underline not in F.UNDERLINES), float(bool(F._CALLOUT.match(s))),
            float(bool(F._TOC_ENTRY.search(s))),
            float(len(s) <= F.HEADING_CHARS and not re.search("[a-z]", s) and len(re.findall("[A-Za-z]", s)) >= 3))


def ref_terms(text: str) -> frozenset[str]:
    low = text.lower()
    terms = set(re.findall(r"[a-z][a-z0-9_]{2,}", low))
    for run in re.findall(r"[\u3400-\u9fff]+", low):
        terms.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(terms)


def ref_overlap_cues(texts: list[str]) -> np.ndarray:
    terms = [ref_terms(t) for t in texts]
    out = np.zeros((len(texts), 2), dtype=np.float32)
    for i, own in enumerate(terms):
        if own:
            after = frozenset().union(*terms[i + 1 : i + 1 + F4.OVERLAP_SPAN])
            before = frozenset().union(*terms[max(0, i - F4.OVERLAP_SPAN) : i])
            out[i] = len(own & after) / len(own), len(own & before) / len(own)
    return out


def _same(a, b) -> bool:
    """Equal to the bit: floats compared by their bytes (so 0.0 and -0.0 differ)."""
    return np.asarray(a, dtype=np.float64).tobytes() == np.asarray(b, dtype=np.float64).tobytes()


@settings(max_examples=400, deadline=None)
@given(lines)
def test_line_cues_equal_their_references(text):
    norm = F4.normalise_line(text)
    assert norm == re.sub(r"\s+", " ", fold(text)).strip()
    for t in (text, norm):
        assert _same(F.text_cues.__wrapped__(t), ref_text_cues(t))
        assert F4._terms.__wrapped__(t) == ref_terms(t)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(lines, layouts), min_size=1, max_size=12), st.integers(0, 4))
def test_window_cues_equal_their_references(rows, n_residual):
    texts = [F4.normalise_line(t) for t, _ in rows]
    layout = [x for _, x in rows]
    cues = F.window_cues(texts, n_residual, layout)
    style = [ref_style_cues(t, x) for t, x in zip(texts, layout)]
    assert _same(cues[:, F.N_CUES - F.N_STYLE_CUES :], np.asarray(style, dtype=np.float32))
    assert _same([F.style_cues(t, x) for t, x in zip(texts, layout)], style)
    col = F.N_TEXT_CUES + 4 + 1
    v2 = [[getattr(x, f) for f in F.LAYOUT_V2] for x in layout]
    assert _same(cues[:, col : col + len(F.LAYOUT_V2)], np.asarray(v2, dtype=np.float32))
    neutral = F.window_cues(texts, n_residual)[:, F.N_CUES - F.N_STYLE_CUES :]
    assert _same(neutral, np.asarray([ref_style_cues(t, LineLayout()) for t in texts], dtype=np.float32))
    assert _same(F4.overlap_cues(texts), ref_overlap_cues(texts))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 400), min_size=1, max_size=3 * BAG_BLOCK), st.integers(0, 2**32 - 1))
def test_bag_means_equal_one_reduceat_to_the_bit(sizes, seed):
    """Bags longer than numpy's pairwise block (128) and more bags than one block of ``BAG_BLOCK``."""
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((1000, 8)).astype(np.float16).astype(np.float32)
    ids = rng.integers(0, len(table), sum(sizes))
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    want = np.add.reduceat(np.take(table, ids, axis=0), offsets, axis=0) / np.asarray(sizes, dtype=np.float32)[:, None]
    got = _bag_mean(table, ids, offsets)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
