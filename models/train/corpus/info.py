"""GNU info manuals: plain text whose headings are underlined, the character giving the level.

``makeinfo`` underlines a chapter with ``*``, a section with ``=``, a subsection with
``-`` and a subsubsection with ``.``, the underline exactly as wide as the title. The
manual's title (the ``Top`` node's heading) is also underlined with ``*``; it is read
as level 0, above the chapters. Node separators (``\\x1f``), the ``File: ..., Node: ...``
header lines and the tag tables are navigation, not text. FAQs converted by bfnnconv
underline nothing: their "Section N" and "Question N.M" nodes open with the heading.

A manual may be split over ``NAME.info.gz`` (the index) and ``NAME.info-1.gz``, ``-2``...;
``read_manual`` joins the parts in order.
"""

from __future__ import annotations

import glob
import gzip
import os
import re
import unicodedata

UNDERLINE_LEVELS = {"*": 1, "=": 2, "-": 3, ".": 4}
_PART = re.compile(r"\.info-(\d+)(?:\.gz)?$")


def manual_parts(main_path: str) -> list[str]:
    """The main file of a manual and its numbered parts, in order."""
    base = re.sub(r"\.info(?:\.gz)?$", "", main_path)
    parts = [p for p in glob.glob(glob.escape(base) + ".info-*") if _PART.search(p)]
    parts.sort(key=lambda p: int(_PART.search(p).group(1)))
    return [main_path] + parts


def _read(path: str) -> str:
    with open(path, "rb") as fh:
        data = fh.read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def read_manual(main_path: str) -> str:
    """The whole text of a (possibly split) info manual."""
    return "".join(_read(p) for p in manual_parts(main_path))


def manual_name(path: str) -> str:
    """``R-intro`` for ``.../R-intro.info.gz``."""
    return re.sub(r"\.info(?:-\d+)?(?:\.gz)?$", "", os.path.basename(path))


def width(text: str) -> int:
    """Display width (East Asian wide characters count 2), as makeinfo measures underlines."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def underline_char(title: str, under: str) -> str | None:
    """The underline character when ``under`` underlines ``title`` exactly, else None."""
    if not under or not title.strip() or title[0].isspace() or under[0] not in UNDERLINE_LEVELS:
        return None
    if under != under[0] * len(under) or len(under) < 2:
        return None
    if width(title.rstrip()) != len(under):
        return None
    return under[0]


_MARKER = re.compile(r"\x00\x08\[.*?\x00\x08\]", re.S)  # images, the index mark


def nodes(text: str) -> list[tuple[str, list[str]]]:
    """(node name, body lines) of every node, without the header line; tag tables, preamble and image
    markers (``\\0\\b[image src="x.png"\\0\\b]``, which LilyPond's and Asymptote's manuals are full of) skipped."""
    out = []
    for chunk in _MARKER.sub("", text).split("\x1f")[1:]:
        lines = chunk.lstrip("\n").split("\n")
        head = lines[0] if lines else ""
        if head.startswith("Tag Table:") or head.startswith("Indirect:") or head.startswith("End Tag Table"):
            continue
        m = re.search(r"Node:\s*([^,\t]+)", head)
        if not head.startswith("File:") or not m:
            continue
        body = lines[1:]
        if body and body[-1].startswith("\x0c"):
            body = body[:-1]
        out.append((m.group(1).strip(), [ln.replace("\x0c", "").replace("\x7f", "") for ln in body]))
    return out


_FAQ_NODE = re.compile(r"(Section|Question) \d+(?:\.\d+)*$")


def _scan(node: str, lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index of the title, raw level, title) of the headings in a node's lines."""
    found = []
    for i in range(len(lines) - 1):
        ch = underline_char(lines[i], lines[i + 1].rstrip())
        if ch and (i == 0 or not lines[i - 1].strip() or (found and found[-1][0] == i - 2)):
            level = 0 if (node == "Top" and ch == "*") else UNDERLINE_LEVELS[ch]
            found.append((i, level, lines[i].strip()))
    if not found and _FAQ_NODE.match(node):
        return _faq_heading(node, lines)
    return found


def _faq_heading(node: str, lines: list[str]) -> list[tuple[int, int, str]]:
    """FAQs converted by bfnnconv (Asymptote's) underline nothing: a "Section N" node opens with its title, a
    "Question N.M" node with its question ("Question 2.2.  Why do I get...", wrapped over lines up to a blank)."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return []
    end = next((i for i in range(first, len(lines)) if not lines[i].strip()), len(lines))
    title = " ".join(" ".join(line.split()) for line in lines[first:end])
    if node.startswith("Question") and not title.startswith(node):
        return []
    return [(first, 1 if node.startswith("Section") else 2, title)]


def _title_lines(lines: list[str], i: int) -> int:
    """How many lines the heading at line ``i`` takes: one and its underline, or a wrapped FAQ question."""
    if i + 1 < len(lines) and underline_char(lines[i], lines[i + 1].rstrip()):
        return 2
    end = next((k for k in range(i, len(lines)) if not lines[k].strip()), len(lines))
    return max(end - i, 1)


def info_items(text: str) -> list:
    """Corpus items of a manual: headings with levels from their underlines, body text, no menus."""
    items: list = []
    for name, lines in nodes(text):
        heads = {i: (lv, t) for i, lv, t in _scan(name, lines)}
        skip = set()
        for i in heads:
            skip.update(range(i + 1, i + _title_lines(lines, i)))
        for i, line in enumerate(lines):
            if line.startswith("* Menu:"):
                break  # a node's menu runs to its end
            if i in skip:
                continue
            items.append(heads[i] if i in heads else line.rstrip())
        items.append("")
    return items


def info_plain_text(text: str) -> tuple[str, list[tuple[int, str, int]]]:
    """A manual as the plain text a reader keeps (menus stay, navigation goes) and its headings.

    Returns (text, [(level, title, char offset of the title line)]), levels made relative
    (the manual's title 1, chapters 2, ...).
    """
    from hichunk.models.train.corpus.normalise import relative_levels

    out: list[str] = []
    pos = 0
    heads: list[tuple[int, str, int]] = []
    for name, lines in nodes(text):
        while lines and not lines[-1].strip():
            lines = lines[:-1]
        found = {i: (lv, t if i + 1 < len(lines) and underline_char(lines[i], lines[i + 1].rstrip()) else
                     lines[i].strip()) for i, lv, t in _scan(name, lines)}  # a wrapped title: its first line
        if out:
            out.append("\n")
            pos += 1
        for i, line in enumerate(lines):
            if i in found:
                heads.append((found[i][0], found[i][1], pos))
            line = line.rstrip() + "\n"
            out.append(line)
            pos += len(line)
    levels = relative_levels([lv for lv, _, _ in heads])
    return "".join(out), [(lv, t, off) for lv, (_, t, off) in zip(levels, heads)]
