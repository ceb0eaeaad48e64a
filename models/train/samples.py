"""Training samples for split-point models, following the paper's recipe.

A structured document gives labels for free: its sentences (``split_sentences``,
a heading line is one sentence) are the model's lines, and a heading line is a
chunk start of its level. The model input hides the heading markers and is
truncated as at inference, and each line keeps its layout (whole line, blank
lines around, indentation) as the engine reports it. Augmentation: sibling
sections shuffled, section bodies cut short (content deletion), heading numbers
stripped on a share of documents (real headings are often unnumbered), blank
lines or the whole layout hidden on a few (text without blank lines between
paragraphs, callers that pass no layout). Long documents are cut into
windows the way the engine cuts them at inference (REFERENCE.md §1), with residual lines
from the current level-1 segment in front; residual lines are context only (no loss).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from hichunk.document import Document, parse_document
from hichunk.engine.residual import residual_units
from hichunk.engine.units import Unit, model_units
from hichunk.engine.windows import LineCounter, fill_window
from hichunk.models.train.corpus.corpus import CorpusDoc
from hichunk.numbering import strip_heading_number
from hichunk.protocol import LineLayout
from hichunk.sentences import split_sentences

IGNORE = -100  # label of lines that carry no loss (residual context)


@dataclass(frozen=True)
class LabelledDoc:
    """A document as model lines with their labels (0: no chunk starts, k: a level-k heading)."""

    id: str
    corpus: str
    lang: str
    texts: tuple[str, ...]
    levels: tuple[int, ...]
    layout: tuple[LineLayout, ...] = ()  # one per line, or empty when unknown


@dataclass(frozen=True)
class Sample:
    """One training window: lines (residual first) and a label per line (``IGNORE`` on residual lines)."""

    texts: tuple[str, ...]
    labels: tuple[int, ...]
    n_residual: int
    first: int = 0  # document index of the first new line
    layout: tuple[LineLayout, ...] = ()
    changes: tuple[int, ...] = ()  # per line: level change from the previous heading in the window (``IGNORE``: none)
    index: tuple[int, ...] = ()  # document index of every line (residual lines first)


def labelled_units(doc: Document) -> tuple[list[Unit], list[int]]:
    """The units a model is shown (``hichunk.engine.model_units``) and each one's heading level (0 if none)."""
    sentences = split_sentences(doc)
    units = model_units(doc, sentences)
    return units, [doc.lines[sentences[u.sentence].line].heading or 0 for u in units]


def model_lines(doc: Document) -> tuple[list[str], list[int]]:
    """Model-input text of every shown sentence and its heading level (0 if none)."""
    units, levels = labelled_units(doc)
    return [u.text for u in units], levels


def labelled(cdoc: CorpusDoc) -> LabelledDoc:
    """A corpus document's lines, layout and labels."""
    units, levels = labelled_units(parse_document(cdoc.markdown, "markdown", cdoc.id))
    return LabelledDoc(cdoc.id, cdoc.corpus, cdoc.lang, tuple(u.text for u in units), tuple(levels),
                       tuple(u.layout for u in units))


def labelled_with_truth(doc: Document, at: dict[int, int], doc_id: str, corpus: str, lang: str) -> LabelledDoc:
    """A loaded document's model lines labelled from placed ground truth (clean offset of a heading's first
    visible character -> level; ``hichunk.models.train.corpus.truth``): a rendering or a real PDF, as a user loads it."""
    from hichunk.models.train.corpus.truth import first_visible

    sentences = split_sentences(doc)
    units = model_units(doc, sentences)
    levels, seen_lines = [], set()
    for u in units:  # a heading labels the first unit of its line
        line = sentences[u.sentence].line
        levels.append(0 if line in seen_lines else at.get(first_visible(doc.clean, doc.lines[line].clean_start), 0))
        seen_lines.add(line)
    return LabelledDoc(doc_id, corpus, lang, tuple(u.text for u in units), tuple(levels), tuple(u.layout for u in units))


# -- augmentation --------------------------------------------------------------

def denumber(doc: LabelledDoc) -> LabelledDoc:
    """Heading numbers stripped ("3.2 Setup" -> "Setup", "第二章 总则" -> "总则")."""
    texts = tuple(strip_heading_number(t) if lv else t for t, lv in zip(doc.texts, doc.levels))
    return replace(doc, texts=texts)


def _blocks(levels: tuple[int, ...], start: int, end: int, level: int) -> list[tuple[int, int]]:
    """[start, end) cut before every heading of ``level`` (the first piece may be a preamble)."""
    cuts = [i for i in range(start, end) if levels[i] == level]
    edges = [start, *[c for c in cuts if c > start], end]
    return [(a, b) for a, b in zip(edges, edges[1:]) if b > a]


def shuffle_sections(doc: LabelledDoc, rng: random.Random) -> LabelledDoc:
    """Shuffle sibling sections of the shallowest level that has at least two, inside each parent."""
    present = sorted({lv for lv in doc.levels if lv})
    level = next((lv for lv in present if sum(1 for x in doc.levels if x == lv) >= 2), None)
    if level is None:
        return doc
    order: list[int] = []
    # parents: pieces between headings shallower than ``level``
    parent_cuts = [i for i, lv in enumerate(doc.levels) if 0 < lv < level]
    edges = [0, *[c for c in parent_cuts if c > 0], len(doc.levels)]
    for a, b in zip(edges, edges[1:]):
        blocks = _blocks(doc.levels, a, b, level)
        head = [blk for blk in blocks if doc.levels[blk[0]] != level]
        body = [blk for blk in blocks if doc.levels[blk[0]] == level]
        rng.shuffle(body)
        for x, y in head + body:
            order.extend(range(x, y))
    return _select(doc, order)


def delete_content(doc: LabelledDoc, rng: random.Random, keep_min: int = 1, keep_max: int = 25) -> LabelledDoc:
    """Cut each section body (lines after a heading, up to the next one) to its first few lines."""
    order: list[int] = []
    heads = [i for i, lv in enumerate(doc.levels) if lv]
    edges = [0, *[h for h in heads if h > 0], len(doc.levels)]
    for a, b in zip(edges, edges[1:]):
        keep = rng.randint(keep_min, keep_max)
        first_body = a + 1 if doc.levels[a] else a
        order.extend(range(a, min(b, first_body + keep)))
    return _select(doc, order)


def _select(doc: LabelledDoc, order: list[int]) -> LabelledDoc:
    return replace(doc, texts=tuple(doc.texts[i] for i in order), levels=tuple(doc.levels[i] for i in order),
                   layout=tuple(doc.layout[i] for i in order) if doc.layout else ())


def with_preamble(doc: LabelledDoc, rng: random.Random, max_lines: int = 4) -> LabelledDoc:
    """Body lines of the document put before its first line: text that opens a document is not its title."""
    body = [i for i, lv in enumerate(doc.levels) if not lv]
    if not body:
        return doc
    start = rng.choice(body)
    picked = [i for i in range(start, min(start + rng.randint(1, max_lines), len(doc.levels))) if not doc.levels[i]]
    return _select(doc, [*picked, *range(len(doc.levels))])


def without_blank_lines(doc: LabelledDoc) -> LabelledDoc:
    """The layout of the same text written without blank lines between paragraphs."""
    return replace(doc, layout=tuple(replace(x, blank_before=False, blank_after=False) for x in doc.layout))


@dataclass(frozen=True)
class AugmentPolicy:
    """Shares of documents that get each augmentation."""

    denumber: float = 0.35
    shuffle: float = 0.3
    delete: float = 0.3
    no_blank_lines: float = 0.1
    no_layout: float = 0.05
    preamble: float = 0.2


def augment(doc: LabelledDoc, rng: random.Random, policy: AugmentPolicy) -> LabelledDoc:
    """A randomly augmented copy of ``doc`` (possibly ``doc`` itself)."""
    if rng.random() < policy.shuffle:
        doc = shuffle_sections(doc, rng)
    if rng.random() < policy.delete:
        doc = delete_content(doc, rng)
    if rng.random() < policy.denumber:
        doc = denumber(doc)
    if rng.random() < policy.preamble:
        doc = with_preamble(doc, rng)
    r = rng.random()
    if r < policy.no_layout:
        doc = replace(doc, layout=())
    elif r < policy.no_layout + policy.no_blank_lines:
        doc = without_blank_lines(doc)
    return doc


# -- engine-like windows ---------------------------------------------------------

def residual_indices(levels: tuple[int, ...], next_start: int, window: int) -> list[int]:
    """Lines carried into the next window, by the engine's rule (``hichunk.engine.residual_units``).

    ``levels`` gives each line's chunk-start level (0: none); a window is
    counted in lines, and the residual lines must take less than half of it.
    """
    points = {i: (lv, True) for i, lv in enumerate(levels[:next_start]) if lv}
    return residual_units(points, next_start, (window - 1) // 2, len)


def level_changes(levels: list[int], n_residual: int) -> tuple[int, ...]:
    """Each new heading's level minus the previous heading's in the window (``IGNORE`` elsewhere)."""
    out, prev = [], 0
    for k, lv in enumerate(levels):
        out.append(lv - prev if lv and prev and k >= n_residual else IGNORE)
        prev = lv or prev
    return tuple(out)


def windows(doc: LabelledDoc, budget: int, count_tokens: Callable[[str], int] | None = None) -> list[Sample]:
    """The windows the engine would show for ``doc``, assuming it predicts the true labels.

    ``budget`` is what the numbered lines of a window may cost: lines when
    ``count_tokens`` is None (each line costs one: the encoder's line-count
    windows), else tokens of the rendered lines ``"{i} @ {text}\\n"`` (a
    generative model's window size minus its fixed overhead). Windows are
    filled, restarted and given residual lines by the engine's own functions
    (``hichunk.engine``).
    """
    n = len(doc.texts)
    counter = LineCounter(count_tokens or _one, doc.texts)
    points = {i: (lv, True) for i, lv in enumerate(doc.levels) if lv}
    out: list[Sample] = []
    start, residual = 0, []
    while start < n:
        filled = fill_window(start, n, residual, budget, counter)
        new = list(range(start, start + filled.n_new))
        idx = [*filled.residual, *new]
        r = len(filled.residual)
        labels = [IGNORE] * r + [doc.levels[i] for i in new]
        layout = tuple(doc.layout[i] for i in idx) if doc.layout else ()
        out.append(Sample(tuple(doc.texts[i] for i in idx), tuple(labels), r, start, layout,
                          level_changes([doc.levels[i] for i in idx], r), tuple(idx)))
        if new[-1] == n - 1:
            break
        level1 = [i for i in new if doc.levels[i] == 1]
        if len(level1) >= 2:
            start, residual = level1[-1], []
        else:
            start = new[-1] + 1
            residual = residual_units(points, start, (budget - 1) // 2, counter.lines)
    return out


def _one(_text: str) -> int:
    return 1
