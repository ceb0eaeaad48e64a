"""Evidence recall (ERec): how much of a question's evidence the retrieved context holds.

Semantics of the HiCBench scorer:

* an evidence sentence ``e`` is first stripped of a leading run of ``#`` and
  spaces, and ``". "`` is turned into ``"."`` (leaves may glue sentences);
* text is normalised in this order: lower-case, delete ASCII punctuation
  (``string.punctuation``), replace the whole words a/an/the by a space,
  collapse whitespace to single spaces;
* ``e`` is a hit when its normalised form is a substring of the normalised context;
* a question's recall is ``sum(hit(e) * len(e)) / sum(len(e))`` with ``len`` the
  character length of the raw evidence string; a dataset's is the mean over questions.

One deviation, on by default (``glue_context=True``): ``". "`` is turned into
``"."`` in the context too. The reference needed the evidence-side replacement
because its leaves glue sentences without a space; our contexts keep the
source's spaces, so without the same step on the context an evidence sentence
with ``". "`` inside ("See Table 8.6. It ...", "e.g. the") would never match.
For evidence that occurs verbatim in the context the step can only turn a miss
into a hit. ``glue_context=False`` gives the reference exactly.

Only ASCII punctuation is removed by default, as in the reference, so Chinese
punctuation stays in both texts; since Chinese evidence is matched against the
same characters of the source that does not change hits, but ``punctuation="unicode"``
(every Unicode punctuation character removed) is available for other data.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ASCII_PUNCT = str.maketrans("", "", string.punctuation)
EPS = 1e-20
PUNCTUATION_MODES = ("ascii", "unicode")


def _drop_unicode_punct(text: str) -> str:
    text = text.translate(_ASCII_PUNCT)  # ASCII symbols such as $ + < are not category P
    return "".join(c for c in text if not unicodedata.category(c).startswith("P"))


def normalize(text: str, punctuation: str = "ascii") -> str:
    """Lower-case, no punctuation, no articles, single spaces (in that order)."""
    if punctuation not in PUNCTUATION_MODES:
        raise ValueError(f"punctuation must be one of {PUNCTUATION_MODES} (got {punctuation!r})")
    text = text.lower()
    text = text.translate(_ASCII_PUNCT) if punctuation == "ascii" else _drop_unicode_punct(text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def prepare_evidence(evidence: str) -> str:
    """The form of an evidence sentence that is looked up: heading marks gone, ``'. '`` glued."""
    return evidence.lstrip("# ").replace(". ", ".")


@dataclass(frozen=True)
class EvidenceResult:
    """One question's evidence recall against one context."""

    recall: float
    hits: int
    total: int

    @property
    def all_found(self) -> bool:
        return self.total > 0 and self.hits == self.total


class EvidenceScorer:
    """Scores one question's evidence against many contexts (the evidence is normalised once)."""

    def __init__(self, evidences: Sequence[str], punctuation: str = "ascii", glue_context: bool = True):
        self.punctuation = punctuation
        self.glue_context = glue_context
        self.weights = [len(e) for e in evidences]
        self.keys = [normalize(prepare_evidence(e), punctuation) for e in evidences]
        self.total_weight = sum(self.weights)

    def score(self, context: str) -> EvidenceResult:
        norm = normalize(context.replace(". ", ".") if self.glue_context else context, self.punctuation)
        hits = [key in norm for key in self.keys]
        got = sum(w for w, h in zip(self.weights, hits) if h)
        return EvidenceResult(got / (self.total_weight + EPS), sum(hits), len(hits))


def evidence_recall(evidences: Sequence[str], context: str, punctuation: str = "ascii", glue_context: bool = True) -> float:
    """Character-weighted share of ``evidences`` found in ``context`` (0.0 for no evidence)."""
    return EvidenceScorer(evidences, punctuation, glue_context).score(context).recall
