"""groff man pages (man and, roughly, mdoc macros) to a Markdown clean view.

Headings: ``.TH NAME SECTION`` (mdoc ``.Dt``) gives the single level-1 heading
``# NAME(SECTION)``; ``.SH`` (``.Sh``) sections are level 2 and ``.SS``
(``.Ss``) subsections level 3. A ``.SH`` without arguments takes its title from
the next text line, as troff does.

Text: each source text line stays one clean line; font macros (``.B``, ``.I``,
``.BR`` ...) give their arguments as text; paragraph macros (``.PP``, ``.TP``,
``.IP`` ...) leave a blank line; no-fill regions (``.nf``/``.fi``, ``.EX``/
``.EE``) become fenced code blocks so that a line like ``# install`` inside can
never read as a heading. Escapes are decoded: fonts and sizes vanish, ``\\-``
is ``-``, ``\\e`` is a backslash, ``\\(em`` a dash and so on; an unknown named
character becomes nothing. Comments (``.\\"`` lines and ``\\"`` tails), macro
definitions and other requests that print nothing are dropped from the clean
view (the raw text keeps them). Text is copied as is, so Chinese pages come
through intact.

Offsets: copied text maps exactly; decoded escapes and inserted text (``## ``,
fences, joins between macro arguments) map to their raw position; each line
starts where its request or text line starts.
"""

from __future__ import annotations

import re

from hichunk.document.cleanview import CleanBuilder
from hichunk.document.markdown import BOM, split_raw_lines
from hichunk.document.model import Document

_ESCAPE = re.compile(
    r"\\(?:"
    r"(?P<font>f(?:\[[^\]\n]*\]|\(..|.))"
    r"|(?P<size>s(?:[-+]?\d{1,2}|[-+]?\(..|[-+]?\[[^\]\n]*\]|[-+]?'[^'\n]*'))"
    r"|\((?P<named2>..)"
    r"|\[(?P<named>[^\]\n]*)\]"
    r"|\*(?:\((?P<str2>..)|\[(?P<strn>[^\]\n]*)\]|(?P<str1>.))"
    r"|(?P<reg>[nkgmFYV](?:\(..|\[[^\]\n]*\]|.))"
    r"|(?P<arg>[hvwoxlLDbCNXZRSz])(?P<q>'[^'\n]*'|\[[^\]\n]*\]|.)?"
    r"|(?P<comment>[\"#].*)"
    r"|(?P<other>.)"
    r")"
)
NAMED = {
    "em": "\u2014", "en": "\u2013", "hy": "-", "bu": "\u2022", "co": "\u00a9", "rg": "\u00ae",
    "tm": "\u2122", "lq": "\u201c", "rq": "\u201d", "oq": "\u2018", "cq": "\u2019", "aq": "'",
    "dq": '"', "ga": "`", "aa": "\u00b4", "mi": "\u2212", "pl": "+", "mu": "\u00d7", "di": "\u00f7",
    "<=": "\u2264", ">=": "\u2265", "!=": "\u2260", "->": "\u2192", "<-": "\u2190", "de": "\u00b0",
    "ti": "~", "ha": "^", "rs": "\\", "sl": "/", "ba": "|", "br": "|", "sq": "\u25a1", "dg": "\u2020",
    "Fo": "\u00ab", "Fc": "\u00bb", "fo": "\u2039", "fc": "\u203a", "ul": "_", "ru": "_", "bv": "|",
    "lB": "[", "rB": "]", "lC": "{", "rC": "}", "la": "\u27e8", "ra": "\u27e9", "ss": "\u00df",
}
STRINGS = {"lq": "\u201c", "rq": "\u201d", "R": "\u00ae", "Tm": "\u2122", "S": "", "Lq": "\u201c", "Rq": "\u201d"}
SIMPLE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": "\t", ".": ".", "'": "\u00b4",
          "`": "`", "_": "_", "%": "", "&": "", "|": "", "^": "", ",": "", "/": "", ")": "", "c": "", "p": "",
          "a": "", "d": "", "u": "", "r": "", "{": "", "}": "", "!": "", "?": "", ":": "", "E": "\\"}
HEADING_LEVELS = {"TH": 1, "Dt": 1, "SH": 2, "Sh": 2, "SS": 3, "Ss": 3}
PARAGRAPH = frozenset("PP LP P Pp sp TP TQ IP HP RS RE Bl El Bd Ed It ne ti".split())
JOINED = frozenset("BR RB IR RI BI IB".split())
SPACED = frozenset("B I SM SB Nm Nd Ar Fl Cm Pa Op Xr Dq Sq Pq Ql Em Sy Li Ev Va Dv Fn Fa Ft Ic Er Tn Ad An Cd".split())
NOFILL_START = frozenset(("nf", "EX", "Vb"))
NOFILL_END = frozenset(("fi", "EE", "Ve"))
MDOC_CALLABLE = frozenset(
    "Ad An Ar Cd Cm Dv Er Ev Fa Fl Fn Ft Ic Li Nm Op Pa Sy Va Xr Dq Sq Pq Ql Qq Ns No Em Oo Oc Bq Brq Tn Ux Xo Xc".split()
)
_REQUEST = re.compile(r"[.'][ \t]*([^\s\\]{1,8}|\\\")?")
_ARG = re.compile(r'"((?:[^"]|"")*)"?|(\S+)')


def _decode_escape(m: re.Match) -> str:
    """Text an escape prints ('' for fonts, sizes, registers and unknown names)."""
    if m.group("named2") is not None:
        return NAMED.get(m.group("named2"), "")
    if m.group("named") is not None:
        name = m.group("named")
        if re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
            try:
                return chr(int(name[1:], 16))
            except ValueError:
                return ""
        return NAMED.get(name, "")
    for group in ("str2", "strn", "str1"):
        if m.group(group) is not None:
            return STRINGS.get(m.group(group), "")
    if m.group("other") is not None:
        return SIMPLE.get(m.group("other"), "")
    return ""


def _inline(b: CleanBuilder, raw: str, s: int, e: int) -> None:
    """Copy raw[s:e] with escapes decoded (a ``\\"`` comment ends the text)."""
    pos = s
    for m in _ESCAPE.finditer(raw, s, e):
        if pos < m.start():
            b.copy(pos, m.start())
        if m.group("comment") is not None:
            return
        value = _decode_escape(m)
        if value:
            b.insert(value, m.start())
        pos = m.end()
    if pos < e:
        b.copy(pos, e)


def _visible(raw: str, s: int, e: int) -> bool:
    """True when raw[s:e] prints something once escapes are decoded."""
    out = []
    pos = s
    for m in _ESCAPE.finditer(raw, s, e):
        out.append(raw[pos : m.start()])
        if m.group("comment") is not None:
            pos = e
            break
        out.append(_decode_escape(m))
        pos = m.end()
    out.append(raw[pos:e])
    return bool("".join(out).strip())


def _args(raw: str, s: int, e: int) -> list[tuple[int, int]]:
    """Raw spans of a request's arguments (quotes removed; a ``\\"`` comment ends them)."""
    cut = raw.find('\\"', s, e)
    if cut >= 0:
        e = cut
    spans = []
    for m in _ARG.finditer(raw, s, e):
        if m.group(1) is not None:
            spans.append((m.start(1), m.end(1)))
        else:
            spans.append((m.start(2), m.end(2)))
    return spans


class _GroffScanner:
    def __init__(self, text: str):
        self.text = text
        self.b = CleanBuilder(text)
        self.pending = 0
        self.nofill = False
        self.fence_open = False
        self.heading_next: int | None = None  # level for the next text line (.SH alone)

    def start_line(self, at: int, heading: int | None = None, fence: bool = False) -> None:
        b = self.b
        if b.started and self.pending >= 2 and (fence or not self.fence_open):
            b.new_line(at)
        b.new_line(at if b.started else 0, heading)
        self.pending = 1

    def emit_args(self, spans: list[tuple[int, int]], joiner: str, at: int, mdoc: bool) -> None:
        raw = self.text
        first = True
        for s, e in spans:
            word = raw[s:e]
            if mdoc and word in MDOC_CALLABLE:
                continue
            if not first and joiner:
                b_pos = s - 1 if s > 0 else s
                if raw[b_pos] == " " and joiner == " " and raw[b_pos - 1 : b_pos] not in ('"',):
                    self.b.copy(b_pos, s)
                else:
                    self.b.insert(joiner, s)
            _inline(self.b, raw, s, e)
            first = False

    def heading(self, level: int, spans: list[tuple[int, int]], at: int, macro: str) -> None:
        raw = self.text
        if not spans:
            self.heading_next = level
            return
        self.close_fence(at)
        self.nofill = False
        self.pending = 2
        self.start_line(at, level)
        self.b.insert("#" * level + " ", at)
        if level == 1 and macro in ("TH", "Dt"):
            s, e = spans[0]
            _inline(self.b, raw, s, e)
            if len(spans) > 1:
                self.b.insert("(", spans[1][0])
                _inline(self.b, raw, *spans[1])
                self.b.insert(")", spans[1][1])
        else:
            self.emit_args(spans, " ", at, mdoc=macro in ("Sh", "Ss"))
        self.pending = 2

    def open_fence(self, at: int) -> None:
        if not self.fence_open:
            self.pending = 2
            self.start_line(at, fence=True)
            self.b.insert("```", at)
            self.fence_open = True

    def close_fence(self, at: int) -> None:
        if self.fence_open:
            self.pending = 1
            self.start_line(at)
            self.b.insert("```", at)
            self.fence_open = False
            self.pending = 2

    def text_line(self, s: int, e: int, heading: int | None = None) -> None:
        if not _visible(self.text, s, e) and not self.nofill:
            if s == e:
                self.pending = 2  # a blank source line is a paragraph break
            return
        if self.nofill and not self.fence_open:
            self.open_fence(s)
        self.start_line(s, heading)
        if heading:
            self.b.insert("#" * heading + " ", s)
        _inline(self.b, self.text, s, e)
        if heading:
            self.pending = 2

    def run(self, name: str) -> Document:
        raw = self.text
        skip = 1 if raw.startswith(BOM) else 0
        spans = [(s + skip, e + skip) for s, e in split_raw_lines(raw[skip:])]
        in_macro_def = False
        in_table = 0  # 0 none, 1 reading tbl options/format, 2 data
        for s, e in spans:
            line = raw[s:e]
            if in_macro_def:
                if line.startswith(".."):
                    in_macro_def = False
                continue
            is_request = line[:1] in (".", "'")
            if is_request:
                m = _REQUEST.match(line)
                macro = (m.group(1) or "") if m else ""
                if macro.startswith('\\"') or line.startswith(('.\\"', "'\\\"", ".\\#")):
                    continue
                arg_start = s + (m.end() if m else 1)
                if macro in ("de", "de1", "am", "ig"):
                    in_macro_def = True
                    continue
                if macro == "TS":
                    in_table = 1
                    self.pending = 2
                    continue
                if macro == "TE":
                    in_table = 0
                    self.pending = 2
                    continue
                if macro in HEADING_LEVELS:
                    self.heading(HEADING_LEVELS[macro], _args(raw, arg_start, e), s, macro)
                    continue
                if macro in NOFILL_START:
                    self.nofill = True
                    continue
                if macro in NOFILL_END:
                    self.nofill = False
                    self.close_fence(s)
                    continue
                if macro in PARAGRAPH:
                    if not self.nofill:
                        self.pending = 2
                    if macro in ("IP", "It"):
                        spans_ = _args(raw, arg_start, e)
                        tag = [x for x in spans_[:1] if not (macro == "It" and raw[x[0] : x[1]] in MDOC_CALLABLE)]
                        if macro == "It":
                            tag = spans_
                        if tag and any(_visible(raw, a, b) for a, b in tag):
                            self.start_line(s)
                            self.emit_args(tag, " ", s, mdoc=macro == "It")
                    continue
                if macro == "br":
                    continue
                if macro in JOINED or macro in SPACED:
                    args = _args(raw, arg_start, e)
                    if not args or not any(_visible(raw, a, b) for a, b in args):
                        continue
                    if self.heading_next:
                        level, self.heading_next = self.heading_next, None
                        self.heading(level, args, s, macro)
                        continue
                    if self.nofill and not self.fence_open:
                        self.open_fence(s)
                    self.start_line(s)
                    mdoc = macro[0].isupper() and macro[1:2].islower()
                    self.emit_args(args, "" if macro in JOINED else " ", s, mdoc=mdoc)
                    continue
                continue  # other requests print nothing we keep
            if in_table == 1:
                if line.rstrip().endswith("."):
                    in_table = 2
                continue
            if in_table == 2:
                line_end = e
                self.text_line(s, line_end)
                continue
            if self.heading_next and _visible(raw, s, e):
                level, self.heading_next = self.heading_next, None
                self.close_fence(s)
                self.pending = 2
                self.text_line(s, e, heading=level)
                continue
            self.text_line(s, e)
        self.close_fence(len(raw))
        return self.b.finish(name, "groff")


def parse_groff(text: str, name: str = "<text>") -> Document:
    """Parse a man page (groff source) into a Markdown clean view with heading hints."""
    return _GroffScanner(text).run(name)
