"""Evidence-dense questions made from document structure, without an LLM (HiCBench T1/T2-like).

* **T1**: the evidence is every body sentence of one section (its heading down
  to the next heading of the same or a higher level, sub-sections included)
  whose body holds 512-4096 words.
* **T2**: the evidence is every body sentence of 2-3 sibling sections (same
  parent heading) of 256-2048 words each, 4096 words at most in total.

The question is built from the document title and the heading path, e.g.
``In "Django settings", what does the section "Core settings > CACHES"
explain?`` (``What does "<title>" explain?`` when the section is the whole
document). Heading lines are never evidence, nor are sentences shorter than 10
normalised characters (5 for Chinese): a code fence or a lone ``void`` would be
found in almost any context.

Size rule for Chinese: a "word" is a CJK character or a whitespace-separated
run of other characters, and the ranges are multiplied by
``ZH_UNITS_PER_WORD`` (1.5, about the characters one English word becomes in
translation), so a Chinese T1 section holds 768-6144 such units.

These questions come from headings, so they favour chunkers that follow the
structure; reports say so.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from hichunk.bench.metrics.evidence import normalize
from hichunk.document.model import Document
from hichunk.sentences import split_sentences
from hichunk.tree.build import heading_title

T1_WORDS = (512, 4096)
T2_WORDS = (256, 2048)
T2_TOTAL_WORDS = 4096
T2_SECTIONS = (2, 3)
ZH_UNITS_PER_WORD = 1.5
# evidence shorter than this once normalised ("void", "}", a code fence) would match almost any context
MIN_EVIDENCE_CHARS = {"en": 10, "zh": 5}
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def count_words(text: str, lang: str) -> int:
    """Whitespace words (English) or CJK characters plus other whitespace words (Chinese)."""
    if lang == "zh":
        return len(_CJK.findall(text)) + len(_CJK.sub(" ", text).split())
    return len(text.split())


def scaled(bounds: tuple[int, int], lang: str) -> tuple[int, int]:
    factor = ZH_UNITS_PER_WORD if lang == "zh" else 1.0
    return round(bounds[0] * factor), round(bounds[1] * factor)


@dataclass
class Section:
    """A heading and everything under it."""

    index: int  # position among the document's headings
    level: int
    title: str
    line: int
    parent: int | None  # index of the parent section, None at the top
    path: list[str] = field(default_factory=list)  # titles from the top section down to this one
    sentences: list[str] = field(default_factory=list)  # body sentences (evidence candidates)
    words: int = 0
    children: list[int] = field(default_factory=list)


def document_sections(doc: Document, lang: str) -> list[Section]:
    """Sections of a parsed Markdown document, with their body sentences and sizes."""
    heads = doc.headings
    sections: list[Section] = []
    stack: list[int] = []
    for k, (line, level) in enumerate(heads):
        while stack and sections[stack[-1]].level >= level:
            stack.pop()
        parent = stack[-1] if stack else None
        title = heading_title(doc.lines[line].text)
        path = (sections[parent].path if parent is not None else []) + [title]
        sections.append(Section(k, level, title, line, parent, path))
        if parent is not None:
            sections[parent].children.append(k)
        stack.append(k)
    if not sections:
        return sections
    # each sentence belongs to the innermost open section and to all its ancestors
    heading_lines = {line: k for k, (line, _) in enumerate(heads)}
    current: int | None = None
    for sent in split_sentences(doc):
        if sent.line in heading_lines:
            current = heading_lines[sent.line]
            continue
        text = doc.clean[sent.start : sent.end].strip()
        if current is None or len(normalize(text)) < MIN_EVIDENCE_CHARS.get(lang, 10):
            continue
        n = count_words(text, lang)
        k: int | None = current
        while k is not None:
            sections[k].sentences.append(text)
            sections[k].words += n
            k = sections[k].parent
    return sections


@dataclass
class Question:
    """A structure-derived question: text, evidence, type and the sections it comes from."""

    qid: str
    doc_id: str
    type: str  # "T1" | "T2"
    input: str
    evidences: list[str]
    sections: list[list[str]]  # heading paths
    words: int


EN_T1 = (
    'In "{title}", what does the section "{path}" explain?',
    'According to "{title}", what is described under "{path}"?',
    'Summarise what the section "{path}" of "{title}" says.',
)
EN_DOC = ('What does "{title}" explain?', 'Summarise what "{title}" says.')
EN_T2 = (
    'In "{title}", what do the sections {names} under "{parent}" cover, and how do they differ?',
    'Compare the sections {names} of "{parent}" in "{title}": what does each describe?',
)
EN_T2_TOP = (
    'In "{title}", what do the sections {names} cover, and how do they differ?',
    'Compare the sections {names} of "{title}": what does each describe?',
)
ZH_T1 = ("《{title}》中“{path}”一节讲了什么？", "根据《{title}》，“{path}”部分介绍了哪些内容？")
ZH_DOC = ("《{title}》讲了什么？", "概括《{title}》的内容。")
ZH_T2 = (
    "《{title}》的“{parent}”部分中，{names}分别讲了什么？有何不同？",
    "比较《{title}》中“{parent}”下的{names}：各自介绍了什么？",
)
ZH_T2_TOP = ("《{title}》中，{names}分别讲了什么？有何不同？", "比较《{title}》中的{names}：各自介绍了什么？")
TEMPLATES = {
    "en": {"T1": EN_T1, "doc": EN_DOC, "T2": EN_T2, "T2_top": EN_T2_TOP},
    "zh": {"T1": ZH_T1, "doc": ZH_DOC, "T2": ZH_T2, "T2_top": ZH_T2_TOP},
}


def _path_text(path: list[str], title: str) -> str:
    """The heading path without a top heading that repeats the document title ('' when nothing is left)."""
    parts = path[1:] if path and path[0] == title else path
    return " > ".join(parts)


def _names(titles: list[str], lang: str) -> str:
    if lang == "zh":
        quoted = [f"“{t}”" for t in titles]
        return "、".join(quoted[:-1]) + "和" + quoted[-1]
    quoted = [f'"{t}"' for t in titles]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _t1_query(rng: random.Random, title: str, sec: Section, lang: str) -> str:
    path = _path_text(sec.path, title)
    templates = TEMPLATES[lang]["T1" if path else "doc"]
    return rng.choice(templates).format(title=title, path=path)


def _t2_query(rng: random.Random, title: str, parent: Section | None, secs: list[Section], lang: str) -> str:
    parent_text = _path_text(parent.path, title) if parent is not None else ""
    templates = TEMPLATES[lang]["T2" if parent_text else "T2_top"]
    return rng.choice(templates).format(title=title, parent=parent_text, names=_names([s.title for s in secs], lang))


def _overlaps(a: Section, b: Section, sections: list[Section]) -> bool:
    """True when one section contains the other."""
    def ancestors(s: Section) -> set[int]:
        out, k = set(), s.parent
        while k is not None:
            out.add(k)
            k = sections[k].parent
        return out

    return a.index == b.index or a.index in ancestors(b) or b.index in ancestors(a)


def t1_sections(sections: list[Section], lang: str, rng: random.Random, per_doc: int) -> list[Section]:
    """Up to ``per_doc`` sections of T1 size, none inside another, in document order."""
    lo, hi = scaled(T1_WORDS, lang)
    candidates = [s for s in sections if lo <= s.words <= hi]
    rng.shuffle(candidates)
    chosen: list[Section] = []
    for sec in candidates:
        if len(chosen) < per_doc and not any(_overlaps(sec, c, sections) for c in chosen):
            chosen.append(sec)
    return sorted(chosen, key=lambda s: s.index)


def t1_questions(doc_id: str, title: str, sections: list[Section], lang: str, rng: random.Random,
                 per_doc: int) -> list[Question]:
    return [Question(f"{doc_id}#T1-{sec.index}", doc_id, "T1", _t1_query(rng, title, sec, lang), list(sec.sentences),
                     [sec.path], sec.words) for sec in t1_sections(sections, lang, rng, per_doc)]


def t2_questions(doc_id: str, title: str, sections: list[Section], lang: str, rng: random.Random,
                 per_doc: int) -> list[Question]:
    lo, hi = scaled(T2_WORDS, lang)
    total_max = scaled((T2_TOTAL_WORDS, T2_TOTAL_WORDS), lang)[0]
    groups: dict[int | None, list[Section]] = {}
    for s in sections:
        if lo <= s.words <= hi:
            groups.setdefault(s.parent, []).append(s)
    parents = [p for p, g in groups.items() if len(g) >= T2_SECTIONS[0]]
    rng.shuffle(parents)
    out: list[Question] = []
    for p in parents[:per_doc]:
        group = groups[p]
        k = min(len(group), rng.randint(*T2_SECTIONS))
        picked = sorted(rng.sample(group, k), key=lambda s: s.index)
        while len(picked) > T2_SECTIONS[0] and sum(s.words for s in picked) > total_max:
            picked.remove(max(picked, key=lambda s: s.words))
        if sum(s.words for s in picked) > total_max:
            continue
        parent = sections[p] if p is not None else None
        qid = f"{doc_id}#T2-" + "-".join(str(s.index) for s in picked)
        evidence = [e for s in picked for e in s.sentences]
        out.append(Question(qid, doc_id, "T2", _t2_query(rng, title, parent, picked, lang), evidence,
                            [s.path for s in picked], sum(s.words for s in picked)))
    return sorted(out, key=lambda q: q.qid)


def structure_questions(doc_id: str, title: str, doc: Document, lang: str, seed: int = 0,
                        t1_per_doc: int = 3, t2_per_doc: int = 2) -> list[Question]:
    """T1 and T2 questions of one document; the same inputs and seed give the same questions."""
    sections = document_sections(doc, lang)
    rng = random.Random(f"{seed}\0{doc_id}")
    return t1_questions(doc_id, title, sections, lang, rng, t1_per_doc) + t2_questions(doc_id, title, sections, lang, rng, t2_per_doc)
