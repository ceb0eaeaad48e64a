"""Invariants every parsed Document must satisfy (shared by the parser tests)."""

from __future__ import annotations

from hichunk.document.model import Document


def check_structure(doc: Document) -> None:
    """Lines cover the clean view, one '\\n' apart; the offset map is monotone and total."""
    clean = doc.clean
    assert doc.lines, "a document has at least one line"
    assert doc.lines[0].clean_start == 0
    assert doc.lines[-1].clean_end == len(clean)
    for line in doc.lines:
        assert line.text == clean[line.clean_start : line.clean_end]
        assert "\n" not in line.text
        assert line.heading is None or 1 <= line.heading <= 10
    for a, b in zip(doc.lines, doc.lines[1:]):
        assert b.clean_start == a.clean_end + 1
        assert clean[a.clean_end] == "\n"
    assert doc.raw_offset(0) == 0
    if clean:  # an empty clean view has a single offset, 0
        assert doc.raw_offset(len(clean)) == len(doc.text)
    prev = 0
    for c in range(len(clean) + 1):
        r = doc.raw_offset(c)
        assert prev <= r <= len(doc.text), (c, prev, r)
        prev = r


def is_subsequence(needle: str, hay: str) -> bool:
    it = iter(hay)
    return all(ch in it for ch in needle)


def line_spans(doc: Document) -> list[tuple[int, int]]:
    """Raw span of each line: from its start to the next line's start."""
    starts = [doc.raw_offset(line.clean_start) for line in doc.lines] + [len(doc.text)]
    return list(zip(starts, starts[1:]))


def check_line_text_in_span(doc: Document, visible, ignore: str = "") -> None:
    """Each line's characters (minus whitespace and inserted marker chars) occur, in order,
    in ``visible(raw span)``."""
    for line, (s, e) in zip(doc.lines, line_spans(doc)):
        want = "".join(ch for ch in line.text if not ch.isspace() and ch not in ignore)
        have = "".join(ch for ch in visible(doc.text[s:e]) if not ch.isspace())
        assert is_subsequence(want, have), (line.text, doc.text[s:e])
