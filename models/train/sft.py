"""Fine-tuning data for generative split-point models, in the engine's exact input format.

Every example is a window the engine could show the model: the instruction,
then numbered lines (residual lines first, heading markers hidden, heading
numbers stripped on a share of documents, sections shuffled or cut short on
others: ``samples.augment``), filled up to the window size in the target
model's own tokens and cut, restarted and given residual lines by the engine's
functions (``samples.windows``). The answer is in the HiChunk format
(``hichunk.models.prompt.format_answer``): one ``"{i}, Level N, True"`` line per
heading the window shows; every labelled start is a heading, so the title flag
is always True, as in the reference training data.

One deliberate difference from the reference data: the answer also names
starts on residual lines. The engine drops them anyway, and a small model
cannot tell residual lines from new ones (nothing marks them), so leaving them
out would teach it to ignore headings at the top of some windows but not
others. It costs a few answer tokens per continued window.

Documents are taken round-robin over the corpus's sub-corpora (each shuffled
with the seed), at most ``windows_per_doc`` random windows per document, so a
short run still sees every kind of document; after the last document the
round starts again with fresh augmentation.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

from hichunk.models.prompt import build_prompt, format_answer
from hichunk.models.train.corpus.corpus import CorpusDoc
from hichunk.models.train.samples import AugmentPolicy, LabelledDoc, Sample, augment, labelled, windows
from hichunk.protocol import MAX_LEVEL, ChunkStart


@dataclass(frozen=True)
class SFTExample:
    """One fine-tuning window: its lines (residual first) and the answer the model should give."""

    doc: str
    corpus: str
    lang: str
    first: int  # document index of the first new line
    n_residual: int
    lines: tuple[str, ...]
    answer: str

    def record(self, instruction: str | None = None) -> dict:
        """The example as an ``instruction``/``output`` record (no chat template: fine-tuning tools add their own)."""
        prompt = build_prompt(self.lines) if instruction is None else build_prompt(self.lines, instruction)
        meta = {k: v for k, v in asdict(self).items() if k not in ("lines", "answer")}
        return {"instruction": prompt, "output": self.answer, "meta": meta}


def window_answer(doc: LabelledDoc, sample: Sample) -> str:
    """The answer for one window: every heading it shows, residual lines included, at its level."""
    starts = [ChunkStart(k, min(doc.levels[i], MAX_LEVEL), True) for k, i in enumerate(sample.index) if doc.levels[i]]
    return format_answer(starts)


def examples_of(doc: LabelledDoc, budget: int, count_tokens: Callable[[str], int]) -> list[SFTExample]:
    """Every window of ``doc`` as the engine would show it, with its answer."""
    return [SFTExample(doc.id, doc.corpus, doc.lang, w.first, w.n_residual, w.texts, window_answer(doc, w))
            for w in windows(doc, budget, count_tokens)]


def round_robin(docs: list[CorpusDoc], rng: random.Random) -> Iterator[CorpusDoc]:
    """Documents alternating over sub-corpora (each in a seeded random order), cycling forever."""
    groups: dict[str, list[CorpusDoc]] = {}
    for d in docs:
        groups.setdefault(d.corpus, []).append(d)
    order = []
    for name in sorted(groups):
        members = sorted(groups[name], key=lambda d: d.id)
        rng.shuffle(members)
        order.append(members)
    interleaved = [d for row in itertools.zip_longest(*order) for d in row if d is not None]
    if not interleaved:
        return iter(())
    return itertools.cycle(interleaved)


def select_examples(docs: list[CorpusDoc], n: int, budget: int, count_tokens: Callable[[str], int], seed: int = 0,
                    windows_per_doc: int = 2, policy: AugmentPolicy | None = None) -> list[SFTExample]:
    """``n`` examples from ``docs``, reproducibly: the same documents, seed and settings give the same list."""
    policy = AugmentPolicy() if policy is None else policy
    rng = random.Random(seed)
    out: list[SFTExample] = []
    labelled_docs: dict[str, LabelledDoc] = {}
    empty_run = 0
    for cdoc in round_robin(docs, rng):
        if len(out) >= n or empty_run > len(docs):
            break
        base = labelled_docs.get(cdoc.id)
        if base is None:
            base = labelled_docs[cdoc.id] = labelled(cdoc)
        candidates = examples_of(augment(base, rng, policy), budget, count_tokens) if base.texts else []
        empty_run = 0 if candidates else empty_run + 1
        picked = sorted(rng.sample(range(len(candidates)), min(windows_per_doc, len(candidates))))
        out.extend(candidates[i] for i in picked[: n - len(out)])
    return out


def write_jsonl(examples: list[SFTExample], path: str, instruction: str | None = None) -> None:
    """``instruction``/``output`` records, one JSON object a line (plus ``meta``: document, window, residual lines)."""
    with open(path, "w", encoding="utf-8") as fh:
        for ex in examples:
            fh.write(json.dumps(ex.record(instruction), ensure_ascii=False) + "\n")
