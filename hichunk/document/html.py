"""HTML: structure becomes Markdown first, then tags go, then entities are decoded.

The order matters (REFERENCE.md section 6): decoding entities before the tags
are gone would turn escaped text such as ``&lt;h1&gt;`` into markup. So the
scanner tokenises the raw HTML once, and only text between tags is ever
entity-decoded, as it is copied into the clean view.

What the clean view contains:

* ``<h1>``..``<h6>`` become ``#`` .. ``######`` heading lines (the only heading
  hints); a heading ends at its closing tag, another heading, or a block such
  as ``<p>``, ``<li>``, ``<pre>`` or ``<table>`` (so an unclosed ``<h2>`` cannot
  swallow the page).
* ``<li>`` becomes a ``- `` item (indented two spaces per nested list);
  table cells on one row are joined with `` | ``.
* Block tags break lines; paragraph-level blocks leave a blank line between.
* ``<pre>`` keeps its lines verbatim inside a fenced code block, so a line such
  as ``# install`` there can never read as a heading.
* Whitespace elsewhere collapses as a browser does.
* Dropped with their content: ``<head>`` (and ``<title>`` anywhere), script,
  style, noscript, template and svg; comments and declarations.
* Boilerplate dropped with its content (``boilerplate=True``, the default):
  ``<nav>``, ``<aside>``, ``<header>``/``<footer>`` that are not inside
  ``<article>``/``<main>``/``<section>``, any element with role navigation,
  search, banner, contentinfo or complementary, and elements with the class
  ``headerlink`` (Sphinx's pilcrow links), ``sphinxsidebar``, ``nav``,
  ``navheader``/``navfooter`` (DocBook). Callers may add ids and classes.
  When such an element is never closed only its tag is dropped, never the
  rest of the page.

The ``<title>`` is not turned into a heading (it usually repeats the ``<h1>``
plus a site name); ``html_title`` returns it as metadata.

Offsets: copied text maps exactly; inserted text (``## ``, ``- ``, fences,
newlines) and decoded entities map to a boundary; a line's start maps to where
its markup begins (the first opening tag after the previous line), so a chunk
cut there carries its opening tags and the previous chunk keeps its closing tags.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable
from dataclasses import dataclass

from hichunk.document.cleanview import CleanBuilder
from hichunk.document.model import Document

_TOKEN = re.compile(
    r"<(?:!--(?P<comment>.*?)-->"
    r"|!\[CDATA\[(?P<cdata>.*?)\]\]>"
    r"|![^>]*>|\?[^>]*>"
    r"|(?P<close>/?)(?P<name>[A-Za-z][^\s/>]*)(?:(?:[^>\"']|\"[^\"]*\"|'[^']*')*>|[^>]*>))",
    re.S,
)
_ATTR = re.compile(r"([^\s=/>\"']+)(?:\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+))?")
_ENTITY = re.compile(r"&(?:#[0-9]{1,8};?|#[xX][0-9a-fA-F]{1,8};?|[A-Za-z][A-Za-z0-9]{0,31};?)")
# whitespace a browser would collapse, other than a lone space; and entities
_SPECIAL = re.compile(r"[ \t\n\r\f]{2,}|[\t\n\r\f]|" + _ENTITY.pattern)
_PRE_SPECIAL = re.compile(r"\r\n|[\r\n]|" + _ENTITY.pattern)
_WS = " \t\n\r\f"

VOID = frozenset(
    "area base br col embed hr img input keygen link meta param source track wbr".split()
)
RAWTEXT = frozenset("script style title textarea xmp".split())
DROP = frozenset("script style noscript template title svg".split())
STRONG = frozenset(
    """address article aside blockquote body center details dialog div dl fieldset figure
    footer form h1 h2 h3 h4 h5 h6 header hgroup hr html main menu nav ol p pre section
    table ul""".split()
)
WEAK = frozenset("br caption dd dt figcaption legend li option summary tbody tfoot thead tr".split())
CELLS = frozenset(("td", "th"))
LISTS = frozenset(("ul", "ol", "menu", "dir"))
HEADINGS = {f"h{i}": i for i in range(1, 7)}
# opening one of these ends an unclosed heading
HEADING_ENDERS = frozenset("p pre table ul ol dl blockquote section article li tr".split())
CONTAINERS = frozenset(("article", "main", "section"))
HEAD_ONLY = frozenset("title meta link style script base noscript template".split())
BOILERPLATE_TAGS = frozenset(("nav", "aside"))
BOILERPLATE_ROLES = frozenset(("navigation", "search", "banner", "contentinfo", "complementary"))
BOILERPLATE_CLASSES = frozenset(("headerlink", "sphinxsidebar", "nav", "navheader", "navfooter"))
_MAX_INDENT = 4


@dataclass(slots=True)
class _Tok:
    kind: str  # "text", "tag", "skip" (comment/declaration), "cdata", "raw" (rawtext content)
    start: int
    end: int
    name: str = ""
    close: bool = False
    selfclose: bool = False
    inner: int = 0  # for cdata: start of the content


def _tokenize(text: str) -> list[_Tok]:
    """Tokens covering the text in order; rawtext element content is one token.

    A ``<`` that starts no tag, comment or declaration stays in the text.
    """
    toks: list[_Tok] = []
    append = toks.append
    pos, n = 0, len(text)
    search = _TOKEN.search
    while pos < n:
        m = search(text, pos)
        if m is None:
            append(_Tok("text", pos, n))
            break
        start, end = m.span()
        if start > pos:
            append(_Tok("text", pos, start))
        pos = end
        name = m.group("name")
        if name is None:
            if m.group("cdata") is not None:
                append(_Tok("cdata", start, end, inner=m.start("cdata")))
            else:
                append(_Tok("skip", start, end))
            continue
        name = name.lower()
        close = bool(m.group("close"))
        selfclose = text[end - 2] == "/"
        append(_Tok("tag", start, end, name, close, selfclose))
        if name in RAWTEXT and not close and not selfclose:
            end_tag = re.compile(rf"</{re.escape(name)}[\s/>]", re.I).search(text, pos)
            if end_tag:
                append(_Tok("raw", pos, end_tag.start()))
                pos = end_tag.start()
    return toks


def _match_closes(toks: list[_Tok]) -> dict[int, int]:
    """Index of each opening tag -> index of its closing tag (unclosed ones absent)."""
    stacks: dict[str, list[int]] = {}
    match: dict[int, int] = {}
    for i, t in enumerate(toks):
        if t.kind != "tag" or t.name in VOID or t.selfclose:
            continue
        if t.close:
            stack = stacks.get(t.name)
            if stack:
                match[stack.pop()] = i
        else:
            stacks.setdefault(t.name, []).append(i)
    return match


def _attrs(text: str, tok: _Tok) -> dict[str, str]:
    inside = text[tok.start + 1 + len(tok.name) : tok.end - 1]
    out: dict[str, str] = {}
    for m in _ATTR.finditer(inside):
        value = m.group(2) or ""
        if value[:1] in "\"'":
            value = value[1:-1]
        out.setdefault(m.group(1).lower(), _html.unescape(value))
    return out


def html_title(text: str) -> str | None:
    """The document's ``<title>`` text (entities decoded, whitespace collapsed), or None."""
    m = re.search(r"<title(?:\s[^>]*)?>(.*?)</title\s*>", text, re.I | re.S)
    if not m:
        return None
    title = " ".join(_html.unescape(re.sub(r"<[^>]*>", "", m.group(1))).split())
    return title or None


class _HtmlScanner:
    """One pass over the tokens, feeding a CleanBuilder."""

    def __init__(
        self,
        text: str,
        boilerplate: bool,
        drop_ids: frozenset[str],
        drop_classes: frozenset[str],
        plain_heading_classes: frozenset[str] = frozenset(),
    ):
        self.text = text
        self.plain_classes = plain_heading_classes
        self.plain_until = -1  # token index up to which headings are plain text
        self.index = 0
        self.b = CleanBuilder(text)
        self.boilerplate = boilerplate
        self.drop_ids = drop_ids
        self.drop_classes = drop_classes | (BOILERPLATE_CLASSES if boilerplate else frozenset())
        # cheap test: could this tag's attributes ask for a drop at all?
        words = sorted(self.drop_classes | self.drop_ids) + (["role"] if boilerplate else [])
        self._attr_hint = re.compile("|".join(re.escape(w) for w in words), re.I) if words else None
        self.pending = 0  # line break wanted before the next text: 0 none, 1 newline, 2 blank line
        self.cand: int | None = None  # raw start of the next line's markup
        self.space: int | None = None  # raw offset of collapsed whitespace awaiting the next word
        self.heading = 0  # level of the heading being read
        self.prefix = ""  # "- " list marker for the next line
        self.cell = False  # a table cell opened on a line that has text
        self.cell_at = 0
        self.list_depth = 0
        self.containers = 0
        self.item_end = False  # a </li> was the last structure seen: the next item follows directly

    # -- text --------------------------------------------------------------
    def _start_line_if_needed(self, at: int) -> None:
        b = self.b
        if self.pending or not b.started:
            start = self.cand if self.cand is not None else at
            if b.started:
                if self.pending >= 2:
                    b.new_line(start)
                b.new_line(start, self.heading or None)
            else:
                b.new_line(start, self.heading or None)
            self.pending = 0
            self.cand = None
            self.space = None
            self.cell = False
            self.item_end = False
            if self.heading:
                b.insert("#" * self.heading + " ", start)
            elif self.prefix:
                b.insert(self.prefix, start)
            self.prefix = ""

    def _word_gap(self, at: int) -> None:
        """Emit the pending separator (collapsed space or cell bar) before a word."""
        b = self.b
        if self.cell and b.line_has_text:
            b.insert(" | ", self.cell_at)
            self.space = None
        elif self.space is not None and b.line_has_text:
            if self.text[self.space] == " " and self.space + 1 == at:
                b.copy(self.space, at)
            else:
                b.insert(" ", self.space)
        self.cell = False
        self.space = None

    def _visible(self, s: int, e: int) -> None:
        """Copy raw[s:e]: no special whitespace inside, maybe one space at either end."""
        if s >= e:
            return
        if self.text[s] == " ":
            if self.space is None:
                self.space = s
            s += 1
        trail = e > s and self.text[e - 1] == " "
        if trail:
            e -= 1
        if s < e:
            self._start_line_if_needed(s)
            self._word_gap(s)
            self.b.copy(s, e)
        if trail and self.space is None:
            self.space = e

    def _decoded(self, value: str, s: int, e: int) -> None:
        if not value.strip(_WS):
            if self.space is None:
                self.space = s
            return
        self._start_line_if_needed(s)
        self._word_gap(s)
        if value == self.text[s:e]:
            self.b.copy(s, e)
        else:
            self.b.insert(value.replace("\n", " ").replace("\r", " "), s)

    def text_run(self, s: int, e: int) -> None:
        pos = s
        for m in _SPECIAL.finditer(self.text, s, e):
            self._visible(pos, m.start())
            tok = m.group()
            if tok[0] == "&":
                self._decoded(_html.unescape(tok), m.start(), m.end())
            elif self.space is None:
                self.space = m.start()
            pos = m.end()
        self._visible(pos, e)

    # -- pre -----------------------------------------------------------------
    def _pre_events(self, toks: list[_Tok]) -> Iterable[tuple[str, int, int, str]]:
        """("chars"|"newline"|"decoded", raw start, raw end, value) events of <pre> content."""
        text = self.text
        for t in toks:
            if t.kind == "tag":
                if t.name == "br":
                    yield "newline", t.start, t.end, "\n"
                continue
            if t.kind not in ("text", "cdata", "raw"):
                continue
            s, e = (t.inner, t.end - 3) if t.kind == "cdata" else (t.start, t.end)
            pos = s
            for m in _PRE_SPECIAL.finditer(text, s, e):
                if pos < m.start():
                    yield "chars", pos, m.start(), ""
                tok = m.group()
                value = _html.unescape(tok) if tok[0] == "&" else "\n"
                if value in ("\n", "\r", "\r\n"):
                    yield "newline", m.start(), m.end(), "\n"
                elif value == tok:
                    yield "chars", m.start(), m.end(), ""
                else:
                    yield "decoded", m.start(), m.end(), value
                pos = m.end()
            if pos < e:
                yield "chars", pos, e, ""

    def pre_block(self, pre: _Tok, inner: list[_Tok], close_at: int) -> None:
        """Emit the content of a <pre> element as fenced lines, verbatim."""
        text = self.text
        body = "".join(
            text[t.inner : t.end - 3] if t.kind == "cdata" else text[t.start : t.end]
            for t in inner
            if t.kind in ("text", "raw", "cdata")
        )
        decoded = _html.unescape(body)
        if not decoded.strip():
            return
        longest = max((len(r) for r in re.findall(r"`+", decoded)), default=0)
        fence = "`" * max(3, longest + 1)
        self.heading = 0
        self.prefix = ""
        self._start_line_if_needed(pre.start)
        b = self.b
        b.insert(fence, pre.start)
        next_line: int | None = pre.end  # where the next content line starts, if one is due
        first = True
        for kind, s, e, value in self._pre_events(inner):
            if kind == "newline":
                if first:
                    next_line = e  # a newline right after <pre> is not content
                else:
                    if next_line is not None:
                        b.new_line(next_line)
                    next_line = e
                first = False
                continue
            first = False
            if next_line is not None:
                b.new_line(next_line)
                next_line = None
            if kind == "chars":
                b.copy(s, e)
            else:
                b.insert(value.replace("\r", " "), s)
        b.new_line(close_at)
        b.insert(fence, close_at)
        self.pending = 2
        self.cand = None
        self.space = None

    # -- tags ------------------------------------------------------------------
    def is_boilerplate(self, tok: _Tok) -> bool:
        if tok.name in VOID:
            return False
        if tok.name in BOILERPLATE_TAGS and self.boilerplate:
            return True
        if tok.name in ("header", "footer") and self.boilerplate and not self.containers:
            return True
        if self._attr_hint is None or not self._attr_hint.search(self.text, tok.start, tok.end):
            return False
        attrs = _attrs(self.text, tok)
        if self.boilerplate and attrs.get("role", "").strip().lower() in BOILERPLATE_ROLES:
            return True
        if self.drop_ids and attrs.get("id", "").strip() in self.drop_ids:
            return True
        if self.drop_classes and "class" in attrs and not self.drop_classes.isdisjoint(attrs["class"].split()):
            return True
        return False

    def block(self, tok: _Tok, strength: int) -> None:
        if self.prefix and not tok.close:
            strength = min(strength, 1)  # <li><p>: the paragraph opens the item, no blank line
        self.pending = max(self.pending, strength) if self.b.started else 0
        if self.pending and not tok.close and self.cand is None:
            self.cand = tok.start
        if tok.close:
            self.cand = None

    def run(self) -> Document:
        text = self.text
        toks = _tokenize(text)
        match = _match_closes(toks)
        n = len(toks)
        in_head = False
        i = 0
        while i < n:
            t = toks[i]
            if t.kind == "text":
                if in_head:
                    if not text[t.start : t.end].strip(_WS):
                        i += 1
                        continue
                    in_head = False
                self.text_run(t.start, t.end)
            elif t.kind == "cdata":
                self.text_run(t.inner, t.end - 3)
            elif t.kind == "tag":
                name = t.name
                if in_head and (t.close and name == "head" or not t.close and name not in HEAD_ONLY):
                    in_head = False
                    if name == "head":
                        i += 1
                        continue
                if not t.close and name == "head":
                    in_head = True
                elif not t.close and not t.selfclose and (name in DROP or self.is_boilerplate(t)):
                    j = match.get(i)
                    if name in RAWTEXT and j is None and i + 1 < n and toks[i + 1].kind == "raw":
                        j = i + 2 if i + 2 < n else None
                    if j is not None:
                        if name not in ("a", "span"):
                            self.block(t, 2)
                            self.block(toks[j], 2)
                        i = j + 1
                        continue
                elif not t.close and name == "pre":
                    j = match.get(i, n)
                    self.block(t, 2)
                    self.pre_block(t, toks[i + 1 : j], toks[j].start if j < n else len(text))
                    i = j + 1
                    continue
                else:
                    if self.plain_classes and not t.close and "class" in text[t.start : t.end].lower():
                        classes = _attrs(text, t).get("class", "").split()
                        if not self.plain_classes.isdisjoint(classes):
                            self.plain_until = max(self.plain_until, match.get(i, -1))
                    self.index = i
                    self.tag(t)
            elif t.kind == "raw":
                self.text_run(t.start, t.end)  # textarea/xmp content: text, not markup
            i += 1
        return self.b.finish("", "html")

    def tag(self, t: _Tok) -> None:
        name = t.name
        if name in CONTAINERS:
            self.containers = max(0, self.containers + (-1 if t.close else 1))
        level = HEADINGS.get(name)
        if level and self.index < self.plain_until:
            level = None  # e.g. the "Note" title of an admonition: a plain line
            self.heading = 0
            self.block(t, 2)
            return
        if level:
            self.heading = 0
            self.block(t, 2)
            if not t.close:
                self.heading = level
                self.prefix = ""
            return
        if self.heading:
            if not t.close and name in HEADING_ENDERS:
                self.heading = 0
            elif name in STRONG or name in WEAK or name in CELLS:
                if self.space is None:
                    self.space = t.start
                return
            else:
                return
        if name in LISTS:
            self.list_depth = max(0, self.list_depth + (-1 if t.close else 1))
            nested = self.list_depth > (0 if t.close else 1)
            self.block(t, 1 if nested else 2)
            self.item_end = False
        elif name == "li" and t.close:
            self.block(t, 1)
            self.item_end = True
        elif name == "li":
            if self.item_end and self.b.started:
                self.pending = 1  # items of one list sit on consecutive lines
            self.block(t, 1)
            indent = "  " * min(max(self.list_depth - 1, 0), _MAX_INDENT)
            self.prefix = indent + "- "
        elif name in CELLS:
            if not t.close and self.b.line_has_text and not self.pending:
                self.cell = True
                self.cell_at = t.start
        elif name in STRONG:
            self.block(t, 2)
        elif name in WEAK:
            self.block(t, 1)
        elif not t.close and self.pending and self.cand is None:
            self.cand = t.start  # an inline tag opening the next line
        elif t.close and self.pending:
            self.cand = None


def parse_html(
    text: str,
    name: str = "<text>",
    *,
    boilerplate: bool = True,
    drop_ids: Iterable[str] = (),
    drop_classes: Iterable[str] = (),
    plain_heading_classes: Iterable[str] = (),
) -> Document:
    """Parse HTML into a Markdown clean view with heading hints and exact offsets.

    ``boilerplate=False`` keeps navigation elements; ``drop_ids``/``drop_classes``
    drop further elements (with their content) by id or class token;
    ``<hN>`` inside an element with one of ``plain_heading_classes`` (such as
    DocBook's ``note`` boxes, titled "Note") is a plain line, not a heading.
    """
    scanner = _HtmlScanner(
        text, boilerplate, frozenset(drop_ids), frozenset(drop_classes), frozenset(plain_heading_classes)
    )
    doc = scanner.run()
    doc.name = name
    return doc
