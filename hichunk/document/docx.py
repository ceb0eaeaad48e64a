"""DOCX input (python-docx, extra ``docx``): paragraph text as the raw text, headings from styles.

* Raw text (``Document.text``): the body's paragraphs in document order, each
  as python-docx gives its text (runs and hyperlinks; tabs as ``\\t``, line
  breaks as ``\\n``), joined with ``\\n``; empty paragraphs are empty lines.
  Table cells are read row by row, cell by cell (a merged cell once), each
  cell's paragraphs in order, nested tables in place. Page headers, footers,
  footnotes, comments and text boxes are not part of it.
* Clean view: one line per non-empty paragraph with a blank line between
  paragraphs; a table row is one line with its cells joined by `` | ``, rows of
  a table on consecutive lines. Line breaks inside a paragraph become spaces.
* Headings: paragraphs styled ``Title`` or ``Heading N`` (also through a style
  based on one, or an outline level) are explicit headings, written ``#`` ..
  in the clean view like Markdown headings, so ``--hints use`` trusts them and
  ``--hints ignore`` hides them. ``Title`` is level 1 and pushes ``Heading N``
  to N + 1 when the document has one.
* ``Line.style``: size relative to the body size (the most common one,
  weighted by characters), bold and italic when most characters are, indent
  and space before from the paragraph format (styles inherited), ``page`` 0.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from hichunk.document.cleanview import CleanBuilder
from hichunk.document.model import MAX_LEVEL, Document, LineStyle
from hichunk.errors import InputError
from hichunk.extras import extra_message

_HEADING_STYLE = re.compile(r"^heading\s*(\d{1,2})$", re.I)
_PIECE = re.compile(r"[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")  # text between line breaks
_BODY_OUTLINE_LEVEL = 9  # w:outlineLvl 9 means body text


@dataclass(slots=True)
class _Para:
    text: str
    level: int | None  # heading level before the Title shift (0 for Title)
    size: float | None  # points (dominant over the runs)
    bold: bool
    italic: bool
    indent: float  # points
    space_before: float  # points
    row: int | None = None  # table row id for cell paragraphs


def _docx() -> Any:
    try:
        import docx
    except ImportError:  # an input error of this file, so a batch goes on with the others
        raise InputError(extra_message("docx", ["python-docx"], "reading .docx")) from None
    return docx


def _outline_level(element: Any) -> int | None:
    """``w:pPr/w:outlineLvl`` of a paragraph or style element (found directly: an XPath per paragraph is slow)."""
    from docx.oxml.ns import qn

    ppr = element.find(qn("w:pPr"))
    level = ppr.find(qn("w:outlineLvl")) if ppr is not None else None
    value = level.get(qn("w:val")) if level is not None else None
    return int(value) if value is not None and value.isdecimal() else None


@dataclass(frozen=True, slots=True)
class _StyleInfo:
    """What a paragraph inherits from its style (and the styles that one is based on)."""

    level: int | None  # 0 for Title, N for Heading N (by name or outline level), None for body text
    size: Any  # docx Length or None
    bold: bool
    italic: bool
    left_indent: Any
    first_line_indent: Any
    space_before: Any


MAX_STYLE_CHAIN = 32  # styles followed through "based on", at most (a loop in a damaged file ends here)


class _Styles:
    """Paragraph styles resolved once per document.

    python-docx finds a paragraph's style (and each style it is based on) by scanning
    every style of the document, for every paragraph and property: with a few hundred
    styles that is milliseconds per paragraph. Here each style is resolved once, its
    inherited properties remembered, and a paragraph only reads its own style id.
    """

    def __init__(self, document: Any):
        from docx.enum.style import WD_STYLE_TYPE

        self._paragraph = WD_STYLE_TYPE.PARAGRAPH
        self._by_id = {s.style_id: s for s in document.styles}
        self._default = document.styles.default(self._paragraph)
        self._resolved: dict[str | None, _StyleInfo] = {}

    def of(self, paragraph: Any) -> _StyleInfo:
        """The style info of ``paragraph`` (its style, or the default paragraph style, as python-docx picks)."""
        style_id = paragraph._p.style
        info = self._resolved.get(style_id)
        if info is None:
            style = self._by_id.get(style_id) if style_id is not None else None
            if style is None or style.type != self._paragraph:
                style = self._default
            info = self._resolved[style_id] = self._info(style)
        return info

    def _chain(self, style: Any) -> list[Any]:
        """``style`` and the styles it is based on, nearest first."""
        chain = []
        while style is not None and len(chain) < MAX_STYLE_CHAIN:
            chain.append(style)
            based = style.element.basedOn
            style = self._by_id.get(based.val) if based is not None else None
        return chain

    def _info(self, style: Any) -> _StyleInfo:
        chain = self._chain(style)

        def first(get: Callable[[Any], Any]) -> Any:
            return next((v for v in map(get, chain) if v is not None), None)

        return _StyleInfo(first(_style_level), first(lambda s: s.font.size), bool(first(lambda s: s.font.bold)),
                          bool(first(lambda s: s.font.italic)), first(lambda s: s.paragraph_format.left_indent),
                          first(lambda s: s.paragraph_format.first_line_indent),
                          first(lambda s: s.paragraph_format.space_before))


def _style_level(style: Any) -> int | None:
    name = (style.name or "").strip()
    if name.lower() == "title":
        return 0
    m = _HEADING_STYLE.match(name)
    if m:
        return int(m.group(1))
    level = _outline_level(style.element)
    return level + 1 if level is not None and level < _BODY_OUTLINE_LEVEL else None


def _heading_level(paragraph: Any, style: _StyleInfo) -> int | None:
    """0 for a Title, N for Heading N (by name or outline level, styles inherited), None for body text."""
    own = _outline_level(paragraph._p)
    if own is not None:
        return own + 1 if own < _BODY_OUTLINE_LEVEL else None
    return style.level


@lru_cache(maxsize=1)
def _tags() -> tuple[str, str, frozenset[str]]:
    from docx.oxml.ns import qn

    return qn("w:r"), qn("w:hyperlink"), frozenset(qn(t) for t in ("w:br", "w:cr", "w:noBreakHyphen", "w:ptab",
                                                                     "w:t", "w:tab"))


def _run(r: Any, paragraph: Any) -> Any:
    from docx.text.run import Run

    return Run(r, paragraph)


class _Unset:
    """A run or paragraph format that sets nothing (no w:rPr / w:pPr): every property is None."""

    size = bold = italic = left_indent = first_line_indent = space_before = None

    @property
    def font(self) -> _Unset:
        return self


_PLAIN = _PLAIN_FORMAT = _Unset()


def _runs(paragraph: Any) -> Iterator[tuple[Any, str]]:
    """(run element, its text) of a paragraph in order, hyperlinks' runs in place: python-docx's runs and run
    texts, found by walking the XML children instead of one XPath query per paragraph and per run."""
    run_tag, link_tag, text_tags = _tags()
    for child in paragraph._p:
        for r in (child,) if child.tag == run_tag else (c for c in child if c.tag == run_tag) if child.tag == link_tag else ():
            yield r, "".join(str(e) for e in r if e.tag in text_tags)


def _para(paragraph: Any, styles: _Styles, default_size: float | None, row: int | None = None) -> _Para:
    style = styles.of(paragraph)
    sizes: Counter[float] = Counter()
    visible = bold = italic = 0
    texts = []
    for r, text in _runs(paragraph):
        texts.append(text)  # the paragraph's text is its runs' (hyperlinks included)
        n = len(text.strip())
        if not n:
            continue
        run = _run(r, paragraph) if r.rPr is not None else _PLAIN  # most runs set nothing of their own
        size = run.font.size or style.size
        if size is not None:
            sizes[round(size.pt, 1)] += n
        elif default_size is not None:
            sizes[default_size] += n
        visible += n
        bold += n * (run.bold if run.bold is not None else style.bold)
        italic += n * (run.italic if run.italic is not None else style.italic)
    fmt = paragraph.paragraph_format if paragraph._p.pPr is not None else _PLAIN_FORMAT
    left = fmt.left_indent if fmt.left_indent is not None else style.left_indent
    first = fmt.first_line_indent if fmt.first_line_indent is not None else style.first_line_indent
    before = fmt.space_before if fmt.space_before is not None else style.space_before
    return _Para("".join(texts), _heading_level(paragraph, style),
                 min(sizes, key=lambda v: (-sizes[v], v)) if sizes else default_size,
                 visible > 0 and bold * 2 > visible, visible > 0 and italic * 2 > visible,
                 (left.pt if left is not None else 0.0) + (first.pt if first is not None else 0.0),
                 before.pt if before is not None else 0.0, row)


def _default_size(document: Any) -> float | None:
    """The document default font size (docDefaults), in points."""
    values = document.styles.element.xpath("./w:docDefaults/w:rPrDefault/w:rPr/w:sz/@w:val")
    try:
        return int(values[0]) / 2 if values else None
    except ValueError:
        return None


def _paragraphs(container: Any, styles: _Styles, default_size: float | None, rows: list[int]) -> Iterator[_Para]:
    """Paragraphs of a body or cell in order, table cells row by row (a merged cell once)."""
    from docx.table import Table

    for block in container.iter_inner_content():
        if not isinstance(block, Table):
            yield _para(block, styles, default_size)
            continue
        seen: dict[int, Any] = {}  # id -> cell element, kept alive so that ids are not reused
        for row in block.rows:
            rows[0] += 1
            for cell in row.cells:
                if id(cell._tc) in seen:
                    continue
                seen[id(cell._tc)] = cell._tc
                for p in _paragraphs(cell, styles, default_size, rows):
                    if p.row is None:
                        p.row = rows[0]
                    yield p


def _style(p: _Para, body: float | None) -> LineStyle:
    size = p.size / body if p.size and body else 1.0
    em = body or 11.0
    return LineStyle(page=0, size=round(size, 2), bold=p.bold, italic=p.italic, indent=round(p.indent / em, 2),
                     gap=round(p.space_before / (1.2 * em), 2))


def _copy_line(builder: CleanBuilder, text: str, start: int) -> None:
    """Copy one paragraph's visible text; its line breaks become spaces."""
    first = True
    for m in _PIECE.finditer(text):
        piece = m.group()
        a = m.start() + len(piece) - len(piece.lstrip())
        b = m.end() - (len(piece) - len(piece.rstrip()))
        if b <= a:
            continue
        if not first:
            builder.insert(" ", start + a)
        builder.copy(start + a, start + b)
        first = False


def parse_docx(data: bytes, name: str = "<docx>") -> Document:
    """A DOCX file's bytes as a Document (see the module docstring)."""
    docx = _docx()
    try:
        document = docx.Document(io.BytesIO(data))
        paras = list(_paragraphs(document, _Styles(document), _default_size(document), [0]))
    except InputError:
        raise
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{name}: cannot read DOCX: not a Word document, or damaged ({first[:120]})") from None
    text = "\n".join(p.text for p in paras)
    weights: Counter[float] = Counter()
    for p in paras:
        if p.size is not None and p.level is None:
            weights[p.size] += len(p.text.strip())
    body = min(weights, key=lambda v: (-weights[v], v)) if weights else None
    shift = 1 if any(p.level == 0 for p in paras) else 0
    builder = CleanBuilder(text)
    pos = 0
    last_row: int | None = None
    for p in paras:
        start, pos = pos, pos + len(p.text) + 1
        if not p.text.strip():
            continue
        if p.row is not None and p.row == last_row:
            if builder.line_has_text:
                builder.insert(" | ", start)
            _copy_line(builder, p.text, start)
            continue
        if builder.started and not (p.row is not None and last_row is not None):
            builder.new_line(start)  # blank line between paragraphs (rows of a table stay together)
        level = None if p.level is None else min(max(p.level + shift, 1), MAX_LEVEL)
        builder.new_line(start, level, _style(p, body))
        if level is not None:
            builder.insert("#" * level + " ", start)
        _copy_line(builder, p.text, start)
        last_row = p.row
    return builder.finish(name, "docx")
