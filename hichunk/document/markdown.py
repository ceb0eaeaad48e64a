"""Plain text and Markdown: the clean view is the raw text itself.

Markdown headings (ATX ``#`` lines, and setext ``===``/``---`` underlines) become
heading hints; setext headings are rewritten to ATX in the clean view so every
heading looks the same to later stages. Lines inside fenced code blocks are
never headings, so a shell comment ``# install`` in a code block stays body
text; nor are the lines of a YAML or TOML front matter block that opens the file.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate, repeat
from operator import add

from hichunk.document.model import MAX_LEVEL, Document, Line, OffsetMap

_ATX = re.compile(rf"^ {{0,3}}(#{{1,{MAX_LEVEL}}})(?=[ \t]|$)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# The start of every line (but the first) that FENCE, _ATX or SETEXT may match: the only lines the scan reads.
_MARKED_LINE = re.compile(r"\n {0,3}[`~#=-]")
BOM = "\ufeff"
_YAML_KEY = re.compile(r"^[A-Za-z_][\w.-]*[ \t]*:(?:[ \t]|$)")
_TOML_KEY = re.compile(r"^(?:[A-Za-z_][\w.-]*[ \t]*=|\[)")


def split_raw_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line's content in ``text``; end excludes ``\\n`` and a ``\\r`` before it."""
    starts, ends, _ = _raw_lines(text)
    return list(zip(starts, ends))


def _raw_lines(text: str) -> tuple[list[int], list[int], list[str]]:
    """``split_raw_lines``'s starts and ends, and each line's content (``text[start:end]``), found for all
    lines at once."""
    contents = text.split("\n")
    lengths = list(map(len, contents))
    starts = list(accumulate(map((1).__add__, lengths[:-1]), initial=0))
    ends = list(map(add, starts, lengths))
    if "\r" in text:
        for i, line in enumerate(contents):
            if line.endswith("\r"):
                contents[i] = line[:-1]
                ends[i] -= 1
    return starts, ends, contents


def _lines(starts: list[int], ends: list[int], texts: list[str], headings: list[int | None]) -> list[Line]:
    """``[Line(*fields, None) for fields in zip(starts, ends, texts, headings)]``, without a Python call per line."""
    return list(map(tuple.__new__, repeat(Line), zip(starts, ends, texts, headings, repeat(None))))


def parse_text(text: str, name: str = "<text>") -> Document:
    """Plain text: one Line per raw line, no heading hints."""
    skip = 1 if text.startswith(BOM) else 0
    clean = text[skip:]
    starts, ends, contents = _raw_lines(clean)
    lines = _lines(starts, ends, contents, [None] * len(starts))
    return Document(name, "text", text, clean, lines, _shifted_identity(len(clean), skip))


def _shifted_identity(clean_len: int, skip: int) -> OffsetMap:
    return OffsetMap([(0, 0, skip)], clean_len, clean_len + skip)


def markdown_heading_level(line: str) -> int | None:
    """Level of an ATX heading line, or None."""
    m = _ATX.match(line)
    return len(m.group(1)) if m else None


def parse_markdown(text: str, name: str = "<text>") -> Document:
    """Markdown: heading hints from ATX/setext headings outside code fences."""
    skip = 1 if text.startswith(BOM) else 0
    body = text[skip:]
    starts, ends, contents = _raw_lines(body)
    levels, setext_under = _scan_headings(body, starts, contents)
    if not setext_under:
        headings: list[int | None] = [None] * len(starts)
        for i, level in levels.items():
            headings[i] = level
        lines = _lines(starts, ends, contents, headings)
        return Document(name, "markdown", text, body, lines, _shifted_identity(len(body), skip))
    return _rewrite_setext(text, body, skip, name, list(zip(starts, ends)), levels, setext_under)


def _scan_headings(body: str, starts: list[int], contents: list[str]) -> tuple[dict[int, int], set[int]]:
    """Heading level by line index, and indexes of setext underline lines.

    Only the first line and lines that may be a fence, a heading or an underline are read (an eighth of
    the lines of our corpus): the lines between them change no fence, and a setext underline needs only
    to know whether the line just above it is a paragraph line.
    """
    levels: dict[int, int] = {}
    setext_under: set[int] = set()
    fence: str | None = None
    prev_paragraph = False
    last = front_matter_end(contents)  # the line read last: front matter is never read
    marked = [bisect_right(starts, m.start() + 1) - 1 for m in _MARKED_LINE.finditer(body)]
    for i in [0, *marked] if last < 0 else [j for j in marked if j > last]:
        if fence is None and last < i - 1:  # the line above is one of those not read: plain text
            prev_paragraph = _paragraph_line(contents[i - 1])
        last = i
        line = contents[i]
        m = FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end():].strip():
                fence = None
            prev_paragraph = False
            continue
        if m:
            fence = m.group(1)
            prev_paragraph = False
            continue
        level = markdown_heading_level(line)
        if level:
            levels[i] = level
            prev_paragraph = False
            continue
        under = SETEXT.match(line)
        if under and prev_paragraph and (i - 1) not in levels and i - 1 not in setext_under:
            levels[i - 1] = 1 if under.group(1)[0] == "=" else 2
            setext_under.add(i)
            prev_paragraph = False
            continue
        prev_paragraph = _paragraph_line(line)
    return levels, setext_under


def front_matter_end(contents: list[str]) -> int:
    """Index of the line closing a YAML (``---`` ... ``---`` or ``...``) or TOML (``+++``) front matter block
    that opens the document, or -1.

    Static site generators (Jekyll, Hugo, MkDocs, Docusaurus) put such a block first; its
    last line above the closing ``---`` is not a setext heading, nor is a ``# comment`` in it.
    The block counts only when its first non-blank line is a key (``title: x``, ``title = "x"``).
    """
    if not contents or contents[0].rstrip() not in ("---", "+++"):
        return -1
    closers = ("---", "...") if contents[0].rstrip() == "---" else ("+++",)
    key = _YAML_KEY if closers[0] == "---" else _TOML_KEY
    first = next((line for line in contents[1:] if line.strip()), "")
    if not key.match(first):
        return -1
    return next((i for i in range(1, len(contents)) if contents[i].rstrip() in closers), -1)


def _paragraph_line(line: str) -> bool:
    """A line that a setext underline below it turns into a heading (not blank, not indented code)."""
    return bool(line.strip()) and not line.startswith("    ")


def _rewrite_setext(text, body, skip, name, raw_spans, levels, setext_under) -> Document:
    """Clean view with setext headings as ATX lines; the underline is folded into the title."""
    clean_parts: list[str] = []
    points: list[tuple[int, int, int | None]] = []
    lines: list[Line] = []
    pos = 0  # clean length so far
    for i, (s, e) in enumerate(raw_spans):
        if i in setext_under:
            continue
        if lines:
            clean_parts.append("\n")
            points.append((pos, s + skip - 1, s + skip - 1))
            pos += 1
        start = pos
        if i + 1 in setext_under:
            prefix = "#" * levels[i] + " "
            points.append((pos, s + skip, None))
            clean_parts.append(prefix)
            pos += len(prefix)
            title = body[s:e].strip()
            lead = s + (len(body[s:e]) - len(body[s:e].lstrip()))
            points.append((pos, lead + skip, lead + skip))
            clean_parts.append(title)
            pos += len(title)
        else:
            points.append((pos, s + skip, s + skip))
            clean_parts.append(body[s:e])
            pos += e - s
        lines.append(Line(start, pos, "".join(clean_parts[-2:]) if i + 1 in setext_under else body[s:e], levels.get(i)))
    clean = "".join(clean_parts)
    return Document(name, "markdown", text, clean, lines, OffsetMap(points, len(clean), len(text)))
