"""A parsed Document to corpus Markdown in which '#' at a line start means a heading.

Training labels come from headings, so the Markdown must carry exactly the
document's real headings and nothing that merely looks like one:

* heading levels are made relative (a heading's level is its depth among the
  open headings above it, so the top level present is 1 and gaps close);
* empty headings are dropped;
* any other line that Markdown would read as a heading - ``# comment`` outside a
  code fence, or a ``---``/``===`` line under text (a setext underline) - gets
  a backslash in front;
* runs of blank lines collapse to one, headings get a blank line around them;
* a YAML or TOML front matter block that opens the file stays as written.

``to_markdown`` checks the result by re-parsing it with
``hichunk.document.markdown.parse_markdown``: the heading set must come back
exactly, or the document is rejected with ``InputError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import takewhile

from hichunk.document.markdown import FENCE, SETEXT, front_matter_end, markdown_heading_level, parse_markdown
from hichunk.document.model import Document
from hichunk.errors import InputError

_ATX_PREFIX = re.compile(r"^( {0,3})(#+)")
_HEADING_MARK = re.compile(r"^[ \t]*#{1,10}(?=[ \t]|$)")
_CLOSING_MARK = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")


@dataclass(frozen=True, slots=True)
class MarkdownDoc:
    """Corpus Markdown with its headings as (line index, level, title)."""

    markdown: str
    headings: list[tuple[int, int, str]]

    @property
    def max_depth(self) -> int:
        return max((level for _, level, _ in self.headings), default=0)


def heading_title(line_text: str) -> str:
    """Title of a clean-view heading line ('## Title ##' -> 'Title'), whitespace collapsed."""
    title = _HEADING_MARK.sub("", line_text, count=1)
    return " ".join(_CLOSING_MARK.sub("", title).split())


def relative_levels(levels: list[int]) -> list[int]:
    """Depth of each heading among the open headings before it (top level 1, no gaps)."""
    stack: list[int] = []
    out = []
    for level in levels:
        while stack and stack[-1] >= level:
            stack.pop()
        stack.append(level)
        out.append(len(stack))
    return out


def _escape(line: str) -> str:
    """Backslash before the first non-space character."""
    stripped = line.lstrip(" ")
    return line[: len(line) - len(stripped)] + "\\" + stripped


def _layout(doc: Document) -> tuple[list[str | tuple[int, str]], list[int]]:
    """Items (body text or (raw level, title)) with blank runs collapsed, and raw levels."""
    items: list[str | tuple[int, str]] = []
    raw_levels: list[int] = []
    for line in doc.lines:
        if line.heading:
            title = heading_title(line.text)
            if not title:
                continue
            items.append((line.heading, title))
            raw_levels.append(line.heading)
        else:
            items.append(line.text.rstrip())
    return items, raw_levels


def _render(items, levels: list[int], honour_fences: bool) -> tuple[list[str], list[tuple[int, int, str]]]:
    out: list[str] = []
    headings: list[tuple[int, int, str]] = []
    fence: str | None = None
    k = 0

    def blank() -> None:
        if out and out[-1] != "":
            out.append("")

    leading = list(takewhile(lambda item: isinstance(item, str), items))
    matter = front_matter_end(leading) + 1  # a front matter block stays as written, never escaped
    out.extend(leading[:matter])
    for item in items[matter:]:
        if isinstance(item, tuple):
            if fence is not None:  # a heading cannot sit in a fence: the fence was not one
                raise _FenceBroken
            level, title = levels[k], item[1]
            k += 1
            blank()
            headings.append((len(out), level, title))
            out.append("#" * level + " " + title)
            out.append("")
            continue
        line = item
        if not line.strip():
            if fence is None:
                blank()
            else:
                out.append("")
            continue
        m = FENCE.match(line)
        if fence is not None:
            out.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end() :].strip():
                fence = None
            continue
        if m:
            if honour_fences:
                fence = m.group(1)
                out.append(line)
            else:
                out.append(_escape(line))
            continue
        if markdown_heading_level(line):
            line = _ATX_PREFIX.sub(lambda mm: mm.group(1) + "\\" + mm.group(2), line, count=1)
        elif SETEXT.match(line) and out and out[-1] != "":
            line = _escape(line)
        out.append(line)
    if fence is not None and honour_fences:
        out.append(fence)  # close a fence left open so nothing after it hides
    while out and out[-1] == "":
        out.pop()
    return out, headings


class _FenceBroken(Exception):
    pass


def to_markdown(doc: Document) -> MarkdownDoc:
    """Corpus Markdown of ``doc``; headings round-trip through ``parse_markdown`` exactly."""
    items, _ = _layout(doc)
    return items_to_markdown(items, doc.name)


def items_to_markdown(items: list, name: str = "<text>") -> MarkdownDoc:
    """Corpus Markdown from body lines (str) and headings ((raw level, title)); levels made relative.

    Converters of other markup (LaTeX, info, DocBook, AsciiDoc) produce such items; titles are
    whitespace-collapsed and empty ones dropped, as for parsed documents.
    """
    clean: list = []
    raw_levels: list[int] = []
    for item in items:
        if isinstance(item, tuple):
            title = " ".join(item[1].split())
            if not title:
                continue
            clean.append((item[0], title))
            raw_levels.append(item[0])
        else:
            clean.extend(item.rstrip().split("\n") if "\n" in item else [item.rstrip()])
    items = clean
    levels = relative_levels(raw_levels)
    for honour_fences in (True, False):
        try:
            out, headings = _render(items, levels, honour_fences)
        except _FenceBroken:
            continue
        markdown = "\n".join(out)
        if parse_markdown(markdown).headings == [(i, level) for i, level, _ in headings]:
            return MarkdownDoc(markdown, headings)
    raise InputError(f"{name}: headings do not survive the Markdown round trip")


def split_items(items: list, max_size: int, size=None) -> list[list]:
    """Cut a long document into parts at its top-level headings (one part when it is small).

    A single top heading over everything (a manual's title) is dropped first, so that its
    chapters become the parts; text before the first part heading goes with the first part.
    A part still over twice ``max_size`` is cut again the same way.
    ``size`` measures a list of items (default: whitespace words plus CJK characters).
    """
    size = size or _size
    if size(items) <= max_size:
        return [items]
    heads = [i for i, it in enumerate(items) if isinstance(it, tuple) and it[1].strip()]
    if not heads:
        return [items]
    top = min(items[i][0] for i in heads)
    tops = [i for i in heads if items[i][0] == top]
    if len(tops) == 1 and len(heads) > 1:
        rest = [it for k, it in enumerate(items) if k != tops[0]]
        return split_items(rest, max_size, size)
    parts = []
    for n, start in enumerate(tops):
        end = tops[n + 1] if n + 1 < len(tops) else len(items)
        part = items[(0 if n == 0 else start):end]
        # a part still twice too long is cut again at its own sections
        # (only when its sections have sections of their own, so the pieces keep two levels)
        levels = {it[0] for it in part[1:] if isinstance(it, tuple) and it[1].strip() and it[0] > top}
        deep = len(levels) >= 2
        parts.extend(split_items(part, max_size, size) if deep and size(part) > 2 * max_size else [part])
    return parts


def _size(items: list) -> int:
    n = 0
    for it in items:
        text = it[1] if isinstance(it, tuple) else it
        n += len(text.split()) + sum(1 for c in text if "\u3400" <= c <= "\u9fff")
    return n


def denumber_markdown(markdown: str) -> str:
    """The same Markdown with numbering stripped from every heading title."""
    from hichunk.numbering import strip_heading_number

    doc = parse_markdown(markdown)
    lines = markdown.split("\n")
    for i, level in doc.headings:
        title = heading_title(lines[i])
        lines[i] = "#" * level + " " + strip_heading_number(title)
    return "\n".join(lines)
