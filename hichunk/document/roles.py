"""What a clean line is for when it is not running text or a section heading.

Three kinds of lines look like headings and are not, or not alone:

* **Tables of contents** (``TOC``): entries with a dotted leader and a page
  number, runs of entries with page numbers in a column, and the block under a
  "Contents" / "目录" title. They list headings; they never start a section.
* **Asides** (``ASIDE``): callouts and admonitions ("Note", "TIP Finding a
  mirror", "Warning: ...", "注意：...") and figure, table and example captions
  ("Figure 9.5. ...", "Table 2: ...", "图 3-1 ..."), and the directive and
  link-target lines of reST sources read as text (".. function:: setup(args)",
  ".. versionadded:: 3.11", ".. _label:"). A box, a caption or a directive sits
  inside a section and never ends it. Plural section names ("NOTES",
  "EXAMPLES", "WARNINGS" of a man page), "SEE ALSO", and headings that merely
  begin with such a word ("Note about time stamps") are not asides.
* **Two-line headings**: a label line ("Chapter 3", "Part II", "Appendix A",
  "第 1 章") with its title on the next line, and a heading wrapped onto a
  second line. ``heading_continuation`` finds the line that completes them, so
  the engine shows them to a model as one unit and the tree titles the chunk
  with both lines.

Every rule reads text through ``hichunk.textnorm.fold`` and looks only at the
text and the lines around it, never at markup (except that a line with explicit
heading markup is never joined to another), so it holds the same with explicit
headings shown or hidden. Lines longer than ``ROLE_CHARS`` play none of these
roles, which also keeps the rules linear on huge lines.
"""

from __future__ import annotations

import re
import unicodedata

from hichunk.document.model import Document
from hichunk.numbering import is_label
from hichunk.textnorm import fold

TOC, ASIDE = "toc", "aside"
HEADING_CHARS = 120  # a longer line is no heading
ROLE_CHARS = 240  # a longer line is running text: no entry, label or title
MIN_WRAP_COLUMNS = 40  # a line shorter than this did not wrap: hard-wrapped text runs to 60-80 columns
MIN_TOC_RUN = 3  # untitled entries with page numbers: this many in a row make a table of contents

_SENTENCE_END = (".", "。", "!", ";", ",", ":")  # folded text: "！" reads "!"
_RULE = re.compile(r"^\s*([=\-~*^#+_.:'\"`])(?:\s*\1){2,}\s*$")
_TRAILING_MARKS = re.compile(r"\s+#+$")
# a sentence ends inside the text: its end mark, a space, and a capital (or CJK) opening the next one
_INNER_END = re.compile(r"[.!?;。][\"')\]]*\s+[A-Z\u3400-\u9fff]|[。!?;](?=.)")


def plain_text(text: str) -> str | None:
    """A line as these rules read it: folded, stripped, Markdown heading marks dropped; None when too long to matter."""
    if len(text) > ROLE_CHARS:
        return None
    s = fold(text).strip()
    if s.startswith("#"):
        s = s.lstrip("#").lstrip()
    if s.endswith("#"):
        s = _TRAILING_MARKS.sub("", s)
    return s


# -- tables of contents ---------------------------------------------------------------------

_LEADER = r"(?:(?:[.·‧⋯_]\s*){4,}|(?:…\s*){2,})"
_LEADER_HINT = re.compile(r"\. ?\.|[·‧⋯…]|_ ?_")  # a cheap sign of a leader before the full pattern
_PAGE = r"(?:\d{1,4}|[ivxlcdm]{1,7})"
_TOC_ENTRY = re.compile(r"^.*?\S\s*" + _LEADER + r"\s*" + _PAGE + "$", re.I)
# an entry whose page number ends the line after a letter and a space (PDF pages of leader lines)
TRAILING_NUMBER = re.compile(r"^.*?[^\W\d_].*?\S\s+(?:\d{1,4}|[ivxlc]{1,7})$", re.I)
# plain text sets page numbers in a column: two or more spaces before the number
_COLUMN_TAIL = re.compile(r"\S\s{2,}\d{1,4}$")
_LETTER = re.compile(r"[^\W\d_]")
_PAGE_AT_END = re.compile(_LEADER + r"\s*" + _PAGE + r"$|\s{2,}" + _PAGE + "$", re.I)
TOC_TITLE = re.compile(r"^(?:table\s+of\s+)?contents:?$|^目\s*录$|^目\s*次$", re.I)
_WORDS = re.compile(r"[^\W_]+")


def is_toc_entry(text: str) -> bool:
    """A title, a dotted leader and a page number (the cheap tests first)."""
    s = fold(text).strip()
    return len(s) <= ROLE_CHARS and s[-1:].isalnum() and _LEADER_HINT.search(s) is not None and bool(_TOC_ENTRY.match(s))


def _page_column(s: str) -> bool:
    """A title, two or more spaces and a page number."""
    if not s[-1:].isdigit() or "  " not in s:
        return False
    m = _COLUMN_TAIL.search(s)
    return m is not None and _LETTER.search(s, 0, m.start() + 1) is not None


def _entry_shaped(s: str | None) -> bool:
    """Short enough for a contents entry (or a heading) and not ending like a sentence."""
    return bool(s) and len(s) <= HEADING_CHARS and not s.endswith(_SENTENCE_END) and not _RULE.match(s)


def _entry_key(s: str) -> str:
    """An entry's words without leader and page number, to recognise the same title in the body."""
    return " ".join(_WORDS.findall(_PAGE_AT_END.sub("", s).casefold()))


def _titled_block(plain: list[str | None], title: int) -> list[int]:
    """The entries under a "Contents" title at line ``title``: the run of entry-shaped lines after it.

    The run ends at a paragraph, at a second blank line in a row, or where its
    first entry comes again (the body begins). When the last group of entries
    (after a blank line) leads straight into a paragraph, it is the body's first
    heading, not an entry.
    """
    entries: list[int] = []
    groups: list[int] = []  # where each blank-separated group of entries starts (index into entries)
    blanks = 0
    first_key = None
    for i in range(title + 1, len(plain)):
        s = plain[i]
        if s == "":
            blanks += 1
            if blanks >= 2 and entries:
                return entries
            continue
        if s is not None and _RULE.match(s) and not entries:
            continue  # the title's underline
        if not _entry_shaped(s) and not (s and is_toc_entry(s)):
            if len(groups) > 1 and len(entries) - groups[-1] <= 2:
                del entries[groups[-1] :]
            return entries
        key = _entry_key(s)
        if key == first_key:
            return entries
        first_key = key if first_key is None else first_key
        if blanks or not entries:
            groups.append(len(entries))
        blanks = 0
        entries.append(i)
    return entries


def toc_lines(doc: Document) -> set[int]:
    """Indexes of the document's table-of-contents lines (rules in the module docstring)."""
    plain = [plain_text(line.text) for line in doc.lines]
    out = {i for i, s in enumerate(plain) if s and s[-1].isalnum() and is_toc_entry(s)}
    run: list[int] = []
    gap = False
    for i, s in enumerate([*plain, None]):
        if s and (i in out or _page_column(s)):
            run.append(i)
            gap = False
            continue
        if s == "" and run and not gap:  # one blank line may part the groups of a run
            gap = True
            continue
        if len(run) >= MIN_TOC_RUN:
            out.update(run)
        run, gap = [], False
    for i, s in enumerate(plain):
        if s and TOC_TITLE.match(s):
            entries = _titled_block(plain, i)
            if len(entries) >= 2:
                out.add(i)
                out.update(entries)
    return out


# -- asides: callouts, admonitions, captions ------------------------------------------------

_ADMONITIONS = ("note", "tip", "hint", "warning", "caution", "important", "danger", "attention", "n.b.")
_EN = "|".join(re.escape(w) for w in _ADMONITIONS)
_ZH = "注意|提示|警告|小心|说明|注|技巧|重要|危险|小贴士|备注|注释|参见"
_CLOSE = r"(?:\*\*|__|\*|_)?\]?"  # the end of Markdown dressing: "**Note**", "[!NOTE]"
_DRESS = re.compile(r"^(?:>\s*)*(?:!!!\s*)?(?:\*\*|__|\*|_)?\[?!?")  # its start: "> ", "**", "[!", "!!! "
_BARE_EN = re.compile(rf"^(?:{_EN}){_CLOSE}\s*[:.!]?$|^example{_CLOSE}\s*:$", re.I)
_BARE_ZH = re.compile(rf"^(?:{_ZH}){_CLOSE}\s*:?$")
_COLON = re.compile(rf"^(?:{_EN}|see\s+also|{_ZH}){_CLOSE}\s*:(?:\s*\S|$)", re.I)
_CAPS_LABEL = re.compile(rf"^(?:{_EN}){_CLOSE}\s+(?=\S)", re.I)
# the first words an aside can begin with (a cheap test before the patterns)
_FIRST_WORDS = frozenset(["n", *(w.split()[0].rstrip(".") for w in _ADMONITIONS), "see", "example", "figure", "fig",
                          "table", "tab", "listing", "exhibit", "chart", "diagram", "illustration", "plate", "screenshot"])
_FIRST_WORD = re.compile(r"[A-Za-z]+")
_ZH_FIRST = tuple(_ZH.split("|")) + ("图", "表", "例", "代码清单", "清单", "插图")
# a reST directive (".. name::", ".. function:: f()") or link target (".. _label:") line
_DIRECTIVE = re.compile(r"^\.\.\s+(?:[\w:-]+::|_[^:]+:\s*$)")
_CAPTION = re.compile(
    r"^(?:figure|fig\.|table|tab\.|example|listing|exhibit|chart|diagram|illustration|plate|screenshot)"
    r"\s*(?:\d+|[A-Z](?=[.\-–]\d))(?:[.\-–]\d+)*\s*(?:[.:)\-–—]|(?=\s)|$)"
    r"|^(?:图|表|例|代码清单|清单|插图)\s*\d+(?:[.\-–]\d+)*(?:\s|[.:、]|$)",
    re.I,
)


def is_aside(text: str, blank_after: bool = True) -> bool:
    """Whether a line (or a sentence that opens one) is a callout, an admonition, a caption or a reST directive.

    ``text`` is the line as a model reads it (heading marks hidden). A bare
    Chinese box word ("注意", "说明") is also a man page's section name, so it
    counts only with a colon or when its text follows on the next line
    (``blank_after`` False), as a box title's does.
    """
    s = fold(text[: ROLE_CHARS + 1]).strip()
    if _DIRECTIVE.match(s):
        return True
    if s[:1] in ">*_[!":
        s = _DRESS.sub("", s)
    first = _FIRST_WORD.match(s)
    if (first.group().lower() not in _FIRST_WORDS) if first else not s.startswith(_ZH_FIRST):
        return False
    if _CAPTION.match(s) or _COLON.match(s) or _BARE_EN.match(s):
        return True
    if _BARE_ZH.match(s):
        return not blank_after or s.endswith(":")
    caps = _CAPS_LABEL.match(s)
    # "TIP Finding a mirror", "NOTE The file...": a box word in capitals before a title; not "NOTE ABOUT X"
    return bool(caps) and not any(c.islower() for c in s[: caps.end()]) and any(c.islower() for c in s[caps.end() :])


# -- headings over two lines ---------------------------------------------------------------


def _width(s: str) -> int:
    """Display columns: wide (CJK) and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _is_blank(doc: Document, i: int) -> bool:
    return i < 0 or i >= len(doc.lines) or doc.lines[i].is_blank


def _ends_block(doc: Document, i: int) -> bool:
    """Line ``i`` is the last of its block: a blank line (or the end, or an underline and then a blank) follows."""
    if _is_blank(doc, i + 1):
        return True
    return bool(_RULE.match(doc.lines[i + 1].text)) and _is_blank(doc, i + 2)


def _title_line(s: str | None) -> bool:
    if not _entry_shaped(s):
        return False
    words = len(s.split()) if s.isascii() else len(s) // 2
    return words <= 20 and not is_label(s) and not is_toc_entry(s) and not is_aside(s)


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def heading_continuation(doc: Document, i: int) -> int | None:
    """The line that completes a heading begun on line ``i``, or None.

    * Label and title: line ``i`` is only a label ("Chapter 3", "第 1 章"), and
      the next non-blank line (at most two blank lines further) is a short
      title that ends its block.
    * A wrapped heading: lines ``i`` and ``i + 1`` form a block of their own
      with the same indentation, the first did have to wrap (it is long, and the
      second line's first word would not have fitted after it), neither ends
      like a sentence (a question may) nor holds the end of one, and together
      they are short enough for a heading. List items and indented code are not
      headings.

    Lines with explicit heading markup are never continued or continuations:
    the markup says where its heading ends.
    """
    lines = doc.lines
    if i + 1 >= len(lines) or lines[i].heading is not None:
        return None
    text = lines[i].text
    if len(text) <= 40 and is_label(text):
        j = i + 1
        while j < len(lines) and j - i <= 3 and lines[j].is_blank:
            j += 1
        if j >= len(lines) or j - i > 3 or lines[j].heading is not None:
            return None
        return j if _title_line(plain_text(lines[j].text)) and _ends_block(doc, j) else None
    nxt = lines[i + 1]
    if (not _is_blank(doc, i - 1) or nxt.heading is not None or nxt.is_blank or not _ends_block(doc, i + 1)
            or len(text) + len(nxt.text) > 2 * HEADING_CHARS or _indent(text) != _indent(nxt.text)
            or text.startswith(("\t", "    "))):
        return None
    first, second = plain_text(text), plain_text(nxt.text)
    if not first or not second or first.startswith(("- ", "* ", "+ ", "• ")) or _RULE.match(second) or is_label(second):
        return None
    joined = f"{first} {second}"
    if (first.endswith((*_SENTENCE_END, "?")) or not _entry_shaped(joined) or _INNER_END.search(joined)
            or is_toc_entry(second) or is_aside(first)):
        return None
    head = second.split()[0] if second.isascii() else second[:1]
    if _width(first) < MIN_WRAP_COLUMNS or _width(first) + 1 + _width(head) <= _width(second):
        return None  # the first line did not have to wrap
    return i + 1
