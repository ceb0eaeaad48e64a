"""Controlled edits of a Markdown document, each knowing which new text is really new.

Kinds (``EDIT_KINDS``):

* ``null``: the same text again (the control: every method must recompute nothing);
* ``insert-top`` / ``insert-start`` / ``insert-middle`` / ``insert-end``: a new
  paragraph of about 1% of the document's characters (at least one sentence),
  made of sentences of another document, before the document's first line (its
  title, if it opens with one), before the first body paragraph, before the body
  paragraph nearest the middle, or after the last line;
* ``replace-sentence``: one body sentence (20+ characters) replaced by a
  sentence of another document;
* ``delete-paragraph``: one body paragraph (with the blank line after it) removed;
* ``move-section``: a section swapped with its next sibling (same parent,
  same level).

Positions come from a seeded generator, so a run is reproducible. An edit that
a document cannot take (no sibling sections, no body paragraph) returns None;
the runner counts those.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hichunk.document.markdown import parse_markdown
from hichunk.document.model import Document
from hichunk.sentences import split_sentences

EDIT_KINDS = ("null", "insert-top", "insert-start", "insert-middle", "insert-end", "replace-sentence", "delete-paragraph",
              "move-section")
INSERT_SHARE = 0.01
MIN_REPLACED_CHARS = 20


@dataclass
class Edit:
    kind: str
    old: str
    new: str
    changed: list[tuple[int, int]] = field(default_factory=list)  # spans of ``new`` that are new text
    where: int = 0  # offset of the edit in ``old``

    @property
    def changed_chars(self) -> int:
        return sum(b - a for a, b in self.changed)


def body_sentences(doc: Document) -> list[str]:
    """Body (non-heading) sentences, stripped, in order."""
    heads = {i for i, _ in doc.headings}
    return [doc.clean[s.start : s.end].strip() for s in split_sentences(doc) if s.line not in heads]


def _paragraph_starts(doc: Document) -> list[int]:
    """Line indexes that open a body paragraph (non-blank, non-heading, after a blank line or a heading)."""
    lines = doc.lines
    out = []
    for i, line in enumerate(lines):
        if line.is_blank or line.heading:
            continue
        if i == 0 or lines[i - 1].is_blank or lines[i - 1].heading:
            out.append(i)
    return out


def _paragraph_end(doc: Document, first: int) -> int:
    """Line index just past the paragraph that starts at ``first`` and the blank lines after it."""
    i = first
    n = len(doc.lines)
    while i < n and not doc.lines[i].is_blank and not (doc.lines[i].heading and i > first):
        i += 1
    while i < n and doc.lines[i].is_blank:
        i += 1
    return i


def _line_offset(doc: Document, i: int) -> int:
    return doc.lines[i].clean_start if i < len(doc.lines) else len(doc.clean)


def filler(sentences: list[str], chars: int, rng: random.Random, zh: bool) -> str:
    """Consecutive sentences of another text, at least ``chars`` characters (at least one sentence)."""
    pool = [s for s in sentences if len(s) >= MIN_REPLACED_CHARS] or sentences or ["Inserted text."]
    start = rng.randrange(len(pool))
    out: list[str] = []
    k = start
    while not out or sum(len(s) for s in out) < chars:
        out.append(pool[k % len(pool)])
        k += 1
        if k - start >= len(pool) and out:
            break
    return ("" if zh else " ").join(out)


def _insert(kind: str, text: str, doc: Document, para: str) -> Edit | None:
    starts = _paragraph_starts(doc)
    if kind == "insert-end":
        sep = "" if text.endswith("\n") else "\n"
        piece = sep + "\n" + para + "\n"
        return Edit(kind, text, text + piece, [(len(text) + len(sep) + 1, len(text) + len(sep) + 1 + len(para))], len(text))
    if kind == "insert-top":
        return Edit(kind, text, para + "\n\n" + text, [(0, len(para))], 0)
    if not starts:
        return None
    if kind == "insert-start":
        line = starts[0]
    else:
        middle = len(text) / 2
        line = min(starts, key=lambda i: abs(_line_offset(doc, i) - middle))
    pos = _line_offset(doc, line)
    piece = para + "\n\n"
    return Edit(kind, text, text[:pos] + piece + text[pos:], [(pos, pos + len(para))], pos)


def _replace_sentence(text: str, doc: Document, rng: random.Random, new_sentence: str) -> Edit | None:
    heads = {i for i, _ in doc.headings}
    cands = [s for s in split_sentences(doc) if s.line not in heads and len(doc.clean[s.start : s.end].strip()) >= MIN_REPLACED_CHARS]
    if not cands:
        return None
    s = rng.choice(cands)
    old_sentence = doc.clean[s.start : s.end]
    a = s.start + (len(old_sentence) - len(old_sentence.lstrip()))
    b = s.start + len(old_sentence.rstrip())
    if text[a:b] == new_sentence:
        return None
    return Edit("replace-sentence", text, text[:a] + new_sentence + text[b:], [(a, a + len(new_sentence))], a)


def _delete_paragraph(text: str, doc: Document, rng: random.Random) -> Edit | None:
    starts = _paragraph_starts(doc)
    if len(starts) < 2:  # deleting the only paragraph would leave headings alone
        return None
    first = rng.choice(starts)
    a, b = _line_offset(doc, first), _line_offset(doc, _paragraph_end(doc, first))
    return Edit("delete-paragraph", text, text[:a] + text[b:], [], a)


def _move_section(text: str, doc: Document, rng: random.Random) -> Edit | None:
    heads = doc.headings
    pairs = []  # (first heading line, its next sibling's line, line after the sibling or None)
    for k, (line, level) in enumerate(heads):
        nxt = next((j for j in range(k + 1, len(heads)) if heads[j][1] <= level), None)
        if nxt is None or heads[nxt][1] != level:
            continue
        after = next((j for j in range(nxt + 1, len(heads)) if heads[j][1] <= level), None)
        if after is None and not text.endswith("\n"):  # swapping would glue two lines
            continue
        pairs.append((line, heads[nxt][0], heads[after][0] if after is not None else None))
    if not pairs:
        return None
    first, second, after = rng.choice(pairs)
    a, m = _line_offset(doc, first), _line_offset(doc, second)
    b = _line_offset(doc, after) if after is not None else len(text)
    return Edit("move-section", text, text[:a] + text[m:b] + text[a:m] + text[b:], [], a)


def make_edit(kind: str, text: str, rng: random.Random, other_sentences: list[str], zh: bool = False) -> Edit | None:
    """One edit of ``text`` (Markdown); ``other_sentences`` supply new text; None if it does not apply."""
    doc = parse_markdown(text)
    if kind == "null":
        return Edit(kind, text, text, [], 0)
    if kind.startswith("insert-"):
        para = filler(other_sentences, max(1, round(INSERT_SHARE * len(text))), rng, zh)
        return _insert(kind, text, doc, para)
    if kind == "replace-sentence":
        return _replace_sentence(text, doc, rng, filler(other_sentences, 1, rng, zh))
    if kind == "delete-paragraph":
        return _delete_paragraph(text, doc, rng)
    if kind == "move-section":
        return _move_section(text, doc, rng)
    raise ValueError(f"unknown edit kind {kind!r}")
