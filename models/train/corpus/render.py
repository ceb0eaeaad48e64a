"""Labelled documents from a corpus: each document rendered as plain text, Markdown or PDF.

A labelled document is a file plus its ground-truth headings. ``render_corpus`` writes

    OUT/text/<split>/*.txt  OUT/markdown/<split>/*.md  OUT/pdf/<split>/*.pdf  OUT/real/...
    OUT/labels.jsonl        one labelled document per line, sorted by id
    OUT/manifest.json       parameters, counts, the corpus' content hash, real sources

Each line of ``labels.jsonl``: ``{"id", "source_id", "split", "lang", "corpus", "kind", "style",
"path", "real", "headings": [{"level", "title", "offset", "page"}]}``. ``offset`` is the char
offset of the heading's first line in the file's decoded text (text and Markdown; null for
PDF), ``page`` the 1-based page of a PDF heading (null otherwise); ``title`` is the heading's
text as written in the file (its number included, its Markdown marks not). A rendering keeps
its source document's split, so test documents never reach training.

Rendering is deterministic: every random choice comes from ``random.Random`` seeded with the
seed, the kind and the document id.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import textwrap
from dataclasses import dataclass, field

from hichunk.document.markdown import parse_markdown
from hichunk.models.train.corpus.corpus import SPLITS, CorpusDoc
from hichunk.models.train.corpus.normalise import heading_title
from hichunk.models.train.corpus.styles import CALLOUT_BOXES, CALLOUTS, CAPTIONS, HeadingText, Numberer, Profile, draw_profile

KINDS = ("markdown", "text", "pdf")
BOOK_WORDS = (50_000, 120_000)  # English book sizes, whitespace words
BOOK_CHARS = (80_000, 200_000)  # Chinese book sizes, non-space characters


@dataclass
class Block:
    """A heading (level, title) or a body paragraph/code block of a corpus document."""

    level: int = 0  # 0: body
    text: str = ""
    code: bool = False
    lines: list[str] = field(default_factory=list)  # body: the paragraph's lines


def blocks_of(doc_markdown: str, level_shift: int = 0) -> list[Block]:
    """Headings and paragraphs of corpus Markdown (code fences kept as code blocks)."""
    parsed = parse_markdown(doc_markdown)
    heads = dict(parsed.headings)
    lines = doc_markdown.split("\n")
    out: list[Block] = []
    para: list[str] = []
    code: list[str] | None = None

    def flush() -> None:
        if para:
            out.append(Block(lines=list(para)))
            para.clear()

    for i, line in enumerate(lines):
        if code is not None:
            if line.lstrip().startswith("```"):
                out.append(Block(code=True, lines=code))
                code = None
            else:
                code.append(line)
            continue
        if i in heads:
            flush()
            out.append(Block(level=heads[i] + level_shift, text=heading_title(line)))
            continue
        if line.lstrip().startswith("```"):
            flush()
            code = []
            continue
        if not line.strip():
            flush()
            continue
        stripped = line.lstrip(" ")
        if stripped.startswith("\\"):  # corpus escapes of look-alike headings
            line = line[: len(line) - len(stripped)] + stripped[1:]
        para.append(line)
    flush()
    if code is not None:
        out.append(Block(code=True, lines=code))
    return out


@dataclass
class Labelled:
    """One labelled document, ready for labels.jsonl."""

    id: str
    source_id: str
    split: str
    lang: str
    corpus: str
    kind: str
    style: dict
    path: str
    headings: list[dict]
    real: bool = False
    source_ids: list[str] | None = None

    def to_dict(self) -> dict:
        d = {"id": self.id, "source_id": self.source_id, "split": self.split, "lang": self.lang,
             "corpus": self.corpus, "kind": self.kind, "style": self.style, "path": self.path, "real": self.real,
             "headings": self.headings}
        if self.source_ids:
            d["source_ids"] = self.source_ids
        return d


def file_name(doc_id: str, ext: str) -> str:
    """A safe, unique file name for a document id."""
    tail = re.sub(r"[^A-Za-z0-9._-]+", "_", doc_id)[-60:].strip("_.")
    return f"{hashlib.sha1(doc_id.encode('utf-8')).hexdigest()[:10]}-{tail}{ext}"


def rng_for(seed: int, kind: str, doc_id: str) -> random.Random:
    return random.Random(f"{seed}\0{kind}\0{doc_id}")


# -- plain text ----------------------------------------------------------------------


def _wrap(text: str, width: int, lang: str, indent: str) -> list[str]:
    if width <= 0:
        return [indent + text]
    if lang == "zh":  # break between CJK characters or at spaces, never inside a Latin word
        lines, cur, used = [], indent, _cols(indent)
        for tok in re.findall(r"[^\s\u3000-\u9fff\uff00-\uffef]+|\s+|.", text):
            w = _cols(tok)
            if used + w > width and cur.strip():
                lines.append(cur.rstrip())
                cur, used = "", 0
                if tok.isspace():
                    continue
            cur += tok
            used += w
        if cur.strip():
            lines.append(cur.rstrip())
        return lines or [""]
    return textwrap.wrap(text, width=width, initial_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [""]


def _cols(text: str) -> int:
    """Display columns (CJK and full-width characters count 2)."""
    return sum(2 if "\u3000" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef" else 1 for c in text)


def _heading_lines(title: str, form: str, lang: str) -> list[str]:
    if form == "caps" and lang == "en":
        return [title.upper()]
    if form.startswith("setext:"):
        ch = form[-1]
        return [title, ch * max(3, _cols(title))]
    return [title]


class _Writer:
    """Lines written so far, the char offset of the next one, and the headings found."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.pos = 0
        self.heads: list[dict] = []

    def emit(self, line: str) -> None:
        self.out.append(line + "\n")
        self.pos += len(line) + 1


def _phrase(text: str, lang: str, rng: random.Random) -> str:
    """A few words of a paragraph, as the title of a callout box or a caption."""
    if lang == "zh":
        run = re.search(r"[\u4e00-\u9fff]{2,}", text)
        if run:
            return run.group(0)[: rng.randint(4, 12)]
    words = [w.strip("'-") for w in re.findall(r"[A-Za-z][\w'-]*", text)[: rng.randint(2, 6)]]
    phrase = " ".join(w for w in words if w) or ("概述" if lang == "zh" else "Overview")
    return phrase[:1].upper() + phrase[1:]


def callout_line(profile: Profile, text: str, rng: random.Random) -> str:
    """A callout line: a bare label ("Note:") or a box label with a title ("TIP Selecting a mirror")."""
    if not profile.callout_titles:
        return rng.choice(CALLOUTS[profile.lang])
    label = rng.choice(CALLOUT_BOXES[profile.lang])
    sep = " " if profile.lang == "en" or label.isascii() else "" if label.endswith("】") else rng.choice(["：", "：", " "])
    return f"{label}{sep}{_phrase(text, profile.lang, rng)}"


class Captions:
    """Numbered figure, table and example captions, counted per chapter ("Figure 9.5.", "表 2-1")."""

    def __init__(self, profile: Profile, rng: random.Random) -> None:
        self.p, self.rng = profile, rng
        self.formats = {kind: rng.choice(forms) for kind, forms in CAPTIONS[profile.lang].items()}
        self.chapter, self.counts = 0, {}

    def line(self, kind: str, chapter: int, text: str) -> str:
        if chapter != self.chapter:
            self.chapter, self.counts = chapter, {}
        self.counts[kind] = self.counts.get(kind, 0) + 1
        label = self.formats[kind].format(c=max(chapter, 1), k=self.counts[kind])
        phrase = _phrase(text, self.p.lang, self.rng)
        if kind == "figure" and self.p.lang == "en" and self.rng.random() < 0.4:
            phrase = f"The {phrase[:1].lower() + phrase[1:]} {self.rng.choice(['window', 'dialog', 'screen', 'view'])}"
        return f"{label} {phrase}"


def _toc_lines(titles: list, profile: Profile, rng: random.Random) -> list[str]:
    """A plain-text table of contents: indented entries, with dotted leaders or page numbers or neither."""
    zh = profile.lang == "zh"
    lines = [profile.toc_title or ("目录" if zh else "Contents"), ""]
    page = 1
    for t in titles:
        if not t or t[0] > profile.toc_depth:
            continue
        page += rng.randint(0, 4)
        indent = "    " * (t[0] - 1)
        text = " ".join(t[1].text.split())
        if profile.forms[t[0] - 1] == "caps" and not zh:
            text = text.upper()
        if profile.toc_leaders:
            room = max(4, 68 - _cols(indent) - _cols(text))
            leader = profile.toc_leader * (room if profile.toc_leader == "." else room // 2)
            lines.append(f"{indent}{text} {leader} {page}")
        elif profile.toc_pages:
            lines.append(f"{indent}{text}{' ' * max(2, 72 - _cols(indent) - _cols(text) - len(str(page)))}{page}")
        else:
            lines.append(f"{indent}{text}")
    return lines + ["", ""]


def _title_lines(t: HeadingText, form: str, profile: Profile) -> list[str]:
    """The lines of a heading: a label line of its own, a title wrapped at ``heading_wrap`` columns, the form."""
    lines: list[str] = []
    text = t.text
    if profile.label_line and t.label:
        lines.append(t.label_text.upper() if form == "caps" and profile.lang == "en" else t.label_text)
        text = t.bare
    if profile.heading_wrap and _cols(text) > profile.heading_wrap and not form.startswith("setext"):
        wrapped = _wrap(text, profile.heading_wrap, profile.lang, "")
        return lines + [w.upper() if form == "caps" and profile.lang == "en" else w for w in wrapped]
    return lines + _heading_lines(text, form, profile.lang)


def render_text(blocks: list[Block], profile: Profile, rng: random.Random) -> tuple[str, list[dict]]:
    """A plain-text rendering and its headings (level, title as written, offset)."""
    numberer = Numberer(profile, sum(1 for b in blocks if b.level == 1))
    titles = [(b.level, numberer.parts(b.level, b.text)) if b.level else None for b in blocks]
    captions = Captions(profile, rng)
    w = _Writer()
    out, heads, emit = w.out, w.heads, w.emit

    if profile.toc and sum(1 for t in titles if t) >= 3:
        for line in _toc_lines(titles, profile, rng):
            emit(line)
    chapter = 0
    for i, (block, t) in enumerate(zip(blocks, titles)):
        if t:
            if out:
                for _ in range(profile.blank_before):
                    emit("")
            chapter += t[0] == 1
            form = profile.forms[t[0] - 1] if t[0] - 1 < len(profile.forms) else "plain"
            lines = _title_lines(t[1], form, profile)
            heads.append({"level": t[0], "title": lines[0], "offset": w.pos, "page": None})
            for line in lines:
                emit(line)
            for _ in range(profile.blank_after):
                emit("")
            continue
        if out and out[-1] != "\n" and not (heads and heads[-1]["offset"] + len(heads[-1]["title"]) + 1 >= w.pos
                                            and profile.blank_after == 0):
            emit("")
        text = " ".join(" ".join(block.lines).split()) if profile.lang == "en" else "".join(
            x.strip() for x in block.lines)
        if block.code:
            if profile.captions and rng.random() < profile.captions * 3:
                emit(captions.line("example", chapter, _context(blocks, i)))
            for line in block.lines:
                emit(("    " + line).rstrip())
            continue
        if profile.callouts and rng.random() < profile.callouts:
            emit(callout_line(profile, text, rng))
        if block.lines and block.lines[0].lstrip().startswith(("- ", "* ", "+ ")):
            if profile.captions and rng.random() < profile.captions:
                emit(captions.line("table", chapter, text.lstrip("-*+ ")))
            for line in block.lines:  # lists keep their lines
                emit(line.rstrip())
            continue
        for line in _wrap(text, profile.width, profile.lang, profile.indent_first):
            emit(line.rstrip())
        if profile.captions and rng.random() < profile.captions:
            emit("")
            emit(captions.line("figure", chapter, text))
    return "".join(out), heads


def _context(blocks: list[Block], i: int) -> str:
    """The words a caption of block ``i`` takes: the paragraph or heading before it, or its own first line."""
    for b in reversed(blocks[max(0, i - 3) : i]):
        if b.level:
            return b.text
        if not b.code:
            return " ".join(" ".join(b.lines).split())
    return blocks[i].lines[0] if blocks[i].lines else "Example"


# -- Markdown --------------------------------------------------------------------------


def render_markdown(blocks: list[Block], profile: Profile | None) -> tuple[str, list[dict]]:
    """Markdown with headings renumbered by ``profile`` (None: the corpus Markdown's own titles)."""
    numberer = Numberer(profile, sum(1 for b in blocks if b.level == 1)) if profile else None
    w = _Writer()
    out, heads, emit = w.out, w.heads, w.emit

    for block in blocks:
        if out:
            emit("")
        if block.level:
            title = numberer.title(block.level, block.text) if numberer else block.text
            heads.append({"level": block.level, "title": title, "offset": w.pos, "page": None})
            if profile and profile.md_setext and block.level <= 2:
                emit(title)
                emit(("=" if block.level == 1 else "-") * max(3, len(title)))
            else:
                emit("#" * (block.level + (profile.md_offset if profile else 0)) + " " + title)
            continue
        if block.code:
            emit("```")
            for line in block.lines:
                emit(line)
            emit("```")
            continue
        for line in block.lines:
            if _looks_like_heading(line):
                line = "\\" + line.lstrip(" ")
            emit(line)
    return "".join(out), heads


def _looks_like_heading(line: str) -> bool:
    s = line.lstrip(" ")
    return bool(re.match(r"#{1,10}(\s|$)", s)) or bool(re.match(r"(=+|-+)\s*$", s))


# -- books -----------------------------------------------------------------------------


def book_blocks(docs: list[CorpusDoc], part_every: int = 0) -> list[Block]:
    """Several documents as the chapters of one book: each starts with one level-1 heading; with ``part_every``,
    every that many chapters open a part (a level-1 heading named after its first chapter) and chapters
    move to level 2."""
    out: list[Block] = []
    for n, d in enumerate(docs):
        if part_every:
            if n % part_every == 0:
                out.append(Block(level=1, text=d.title))
            out.extend(Block(level=b.level + 1, text=b.text) if b.level else b for b in book_blocks([d]))
            continue
        blocks = blocks_of(d.markdown)
        levels = [b.level for b in blocks if b.level]
        single_root = levels and levels[0] == 1 and levels.count(1) == 1 and blocks[0].level == 1
        if single_root:
            out.extend(blocks)
        else:
            out.append(Block(level=1, text=d.title))
            out.extend(Block(level=b.level + 1, text=b.text) if b.level else b for b in blocks)
    return out


def plan_books(docs: list[CorpusDoc], seed: int, per_source: int) -> list[list[CorpusDoc]]:
    """Books of 50k-120k words (Chinese: 80k-200k characters) from documents of one corpus and split."""
    groups: dict[tuple[str, str, str], list[CorpusDoc]] = {}
    for d in docs:
        groups.setdefault((d.corpus, d.lang, getattr(d, "_split", "")), []).append(d)
    books = []
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda d: d.id)
        rng = random.Random(f"{seed}\0book\0{key}")
        made, i = 0, 0
        while i < len(members) and made < per_source:
            target = rng.randint(*BOOK_WORDS) if key[1] != "zh" else rng.randint(*BOOK_CHARS)
            book, size = [], 0
            while i < len(members) and size < target:
                book.append(members[i])
                size += members[i].n_words if key[1] != "zh" else members[i].n_chars
                i += 1
            if size >= target and len(book) >= 2:
                books.append(book)
                made += 1
    return books


# -- one document ----------------------------------------------------------------------


def render_one(doc: CorpusDoc, split: str, kind: str, seed: int, out_dir: str, variant: str = "") -> Labelled:
    """Render a corpus document as ``kind`` into ``out_dir``; its label."""
    rng = rng_for(seed, kind + variant, doc.id)
    blocks = blocks_of(doc.markdown)
    if kind == "markdown":
        profile = None if variant == "original" else draw_profile(rng, doc.lang, "markdown")
        text, heads = render_markdown(blocks, profile)
        ext, style = ".md", ({"scheme": "original"} if profile is None else profile.to_dict())
    elif kind == "text":
        profile = draw_profile(rng, doc.lang, "text")
        text, heads = render_text(blocks, profile, rng)
        ext, style = ".txt", profile.to_dict()
    else:
        raise ValueError(kind)
    doc_id = f"{kind}{':' + variant if variant else ''}:{doc.id}"
    rel = os.path.join(kind, split, file_name(doc_id, ext))
    _write(os.path.join(out_dir, rel), text)
    return Labelled(doc_id, doc.id, split, doc.lang, doc.corpus, kind, style, rel, heads)


def render_book(book: list[CorpusDoc], split: str, n: int, seed: int, out_dir: str) -> Labelled:
    first = book[0]
    book_id = f"book:{first.corpus}:{first.lang}:{split}:{n:02d}"
    rng = rng_for(seed, "text-book", book_id)
    profile = draw_profile(rng, first.lang, "text")
    part_every = rng.choice([2, 3, 4]) if len(book) >= 4 and rng.random() < 0.3 else 0
    if part_every:
        profile.scheme = "part-chapter" if first.lang == "en" else "zh-part"
    elif profile.scheme in ("unnumbered", "original") and rng.random() < 0.5:
        profile.scheme = "chapter" if first.lang == "en" else "zh-chapter-decimal"
    text, heads = render_text(book_blocks(book, part_every), profile, rng)
    doc_id = f"text:{book_id}"
    rel = os.path.join("text", split, file_name(doc_id, ".txt"))
    _write(os.path.join(out_dir, rel), text)
    return Labelled(doc_id, book_id, split, first.lang, first.corpus, "text",
                    {**profile.to_dict(), "book": True, "part_every": part_every},
                    rel, heads, source_ids=[d.id for d in book])


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


def write_labels(out_dir: str, labelled: list[Labelled]) -> str:
    path = os.path.join(out_dir, "labels.jsonl")
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        for item in sorted(labelled, key=lambda x: x.id):
            fh.write(json.dumps(item.to_dict(), ensure_ascii=False, sort_keys=True) + "\n")
    os.replace(path + ".tmp", path)
    return path


def load_labels(out_dir: str) -> list[dict]:
    with open(os.path.join(out_dir, "labels.jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


__all__ = ["KINDS", "SPLITS", "Block", "Labelled", "blocks_of", "render_text", "render_markdown", "render_one",
           "render_book", "plan_books", "book_blocks", "write_labels", "load_labels"]
