"""Rouge-L F as the HiCBench evaluation computes it (PyPI ``rouge==1.0.1``, summary level).

Written from the behaviour, not the package's code, so the published numbers
can be compared without installing it. Its quirks, kept on purpose:

* each text is cut into "sentences" at every ``.`` (``3.5`` is cut too), pieces
  of length 0 are dropped, whitespace inside a piece is collapsed; words are the
  pieces split on single spaces (a whitespace-only piece yields one empty word);
* no lower-casing, stemming or punctuation removal;
* m and n are the numbers of *distinct* words of reference and candidate; the
  overlap is the number of distinct words in the union, over every
  (reference sentence, candidate sentence) pair, of the words on one longest
  common subsequence of the pair, chosen by the package's backtracking order;
* ``F = 2PR / (P + R + 1e-8)``; an empty text on either side scores 0.0 (the
  reference wraps the call in a catch-all).

The reference scores each prediction against each ground-truth answer and keeps
the best (``max`` over answers). Chinese answers have no spaces, so for them
``cjk_chars=True`` makes every CJK character a word of its own (documented as our
choice; the reference used jieba for its Chinese datasets).
"""

from __future__ import annotations

import re
from typing import Sequence

_CJK = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")


def _sentences(text: str) -> list[str]:
    return [" ".join(piece.split()) for piece in text.split(".") if len(piece) > 0]


def _lcs_words(ref: list[str], cand: list[str]) -> set[str]:
    """Words on one LCS of ``ref`` and ``cand``, backtracking as the package does."""
    n, m = len(ref), len(cand)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        row, prev = table[i], table[i - 1]
        r = ref[i - 1]
        for j in range(1, m + 1):
            row[j] = prev[j - 1] + 1 if r == cand[j - 1] else max(prev[j], row[j - 1])
    out: set[str] = set()
    i, j = n, m
    while i > 0 and j > 0:
        if ref[i - 1] == cand[j - 1]:
            out.add(ref[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return out


def rouge_l(prediction: str, reference: str, cjk_chars: bool = False) -> float:
    """Summary-level Rouge-L F of one prediction against one reference answer."""
    if cjk_chars:
        prediction, reference = _CJK.sub(r" \1 ", prediction), _CJK.sub(r" \1 ", reference)
    cand, ref = _sentences(prediction), _sentences(reference)
    if not cand or not ref:
        return 0.0
    cand_words = [s.split(" ") for s in cand]
    ref_words = [s.split(" ") for s in ref]
    m = len({w for s in ref_words for w in s})
    n = len({w for s in cand_words for w in s})
    union: set[str] = set()
    for r in ref_words:
        for c in cand_words:
            union |= _lcs_words(r, c)
    recall, precision = len(union) / m, len(union) / n
    return 2.0 * precision * recall / (precision + recall + 1e-8)


def best_rouge_l(prediction: str, answers: Sequence[str], cjk_chars: bool = False) -> float:
    """The reference's per-question score: the best Rouge-L over the ground-truth answers."""
    prediction = prediction.replace("Answer: ", "")
    return max((rouge_l(prediction, a, cjk_chars) for a in answers), default=0.0)
