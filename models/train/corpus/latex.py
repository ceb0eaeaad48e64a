"""LaTeX source to corpus items: sectioning commands give exact levels, the rest becomes plain text.

A small, forgiving converter of our own (no TeX engine): it keeps the text, drops
commands and environments that carry no prose, and never raises on odd input
(unbalanced braces, unknown macros, a stray ``\\end``). Levels:
``\\part`` 0, ``\\chapter`` 1, ``\\section`` 2, ``\\subsection`` 3,
``\\subsubsection`` 4 (made relative later, so a file that starts at ``\\section``
has its sections at level 1). ``\\paragraph`` is a run-in label, not a heading.

Only the body is read when a file has ``\\begin{document}``, so sectioning inside
macro definitions of the preamble is never taken for a heading.
"""

from __future__ import annotations

import re

SECTION_LEVELS = {"part": 0, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4}
_SECTION = re.compile(r"\\(part|chapter|section|subsection|subsubsection)\b\*?")
VERBATIM_ENVS = ("verbatim", "verbatim*", "Verbatim", "lstlisting", "minted", "BVerbatim", "LVerbatim",
                 "alltt", "lstcode", "code", "latexcode", "LTXexample", "example", "sourcecode", "tcblisting",
                 "shellcode", "bashcode", "ctexexam", "texcode")
DROP_ENVS = ("comment", "tikzpicture", "pspicture", "picture", "filecontents", "filecontents*", "thebibliography",
             "equation", "equation*", "align", "align*", "eqnarray", "eqnarray*", "gather", "gather*", "multline",
             "multline*", "displaymath", "math", "figure", "figure*", "titlepage", "tabular", "tabular*",
             "tabularx", "longtable", "tblr", "axis", "forest", "circuitikz", "asy", "mpost", "dtxexample")
# commands whose arguments are dropped with them: (number of mandatory arguments)
DROP_ARGS = {
    "label": 1, "ref": 1, "pageref": 1, "eqref": 1, "autoref": 1, "cref": 1, "Cref": 1, "index": 1, "cite": 1,
    "citep": 1, "citet": 1, "nocite": 1, "vspace": 1, "hspace": 1, "vskip": 0, "hskip": 0, "includegraphics": 1,
    "input": 1, "include": 1, "usepackage": 1, "documentclass": 1, "setlength": 2, "addtolength": 2,
    "setcounter": 2, "addtocounter": 2, "newcommand": 2, "renewcommand": 2, "providecommand": 2,
    "newenvironment": 3, "renewenvironment": 3, "DeclareRobustCommand": 2, "def": 0, "let": 0,
    "bibliographystyle": 1, "bibliography": 1, "pagestyle": 1, "thispagestyle": 1, "hypersetup": 1,
    "addcontentsline": 3, "markboth": 2, "markright": 1, "color": 1, "pagecolor": 1, "fontsize": 2,
    "rule": 2, "phantom": 1, "hphantom": 1, "vphantom": 1, "caption": 0, "begin": 1, "end": 1,
    "ctexset": 1, "setmainfont": 1, "setCJKmainfont": 1, "definecolor": 3, "newcounter": 1, "tableofcontents": 0,
    "maketitle": 0, "newpage": 0, "clearpage": 0, "cleardoublepage": 0, "noindent": 0, "centering": 0,
    "raggedright": 0, "small": 0, "footnotesize": 0, "large": 0, "Large": 0, "normalsize": 0, "bfseries": 0,
    "itshape": 0, "ttfamily": 0, "sffamily": 0, "rmfamily": 0, "par": 0, "medskip": 0, "bigskip": 0,
    "smallskip": 0, "protect": 0, "relax": 0, "frontmatter": 0, "mainmatter": 0, "backmatter": 0, "appendix": 0,
    "hline": 0, "toprule": 0, "midrule": 0, "bottomrule": 0, "cline": 1, "printindex": 0, "makeindex": 0,
    "linewidth": 0, "textwidth": 0, "hfill": 0, "vfill": 0, "null": 0, "indent": 0, "selectfont": 0,
}
SYMBOLS = {
    "TeX": "TeX", "LaTeX": "LaTeX", "LaTeXe": "LaTeX2e", "XeTeX": "XeTeX", "XeLaTeX": "XeLaTeX", "LuaTeX": "LuaTeX",
    "LuaLaTeX": "LuaLaTeX", "pdfTeX": "pdfTeX", "pdfLaTeX": "pdfLaTeX", "BibTeX": "BibTeX", "ConTeXt": "ConTeXt",
    "AmS": "AMS", "eTeX": "e-TeX", "METAFONT": "METAFONT", "MF": "METAFONT", "MP": "MetaPost", "ldots": "...",
    "dots": "...", "cdots": "...", "textbackslash": "\\", "textasciitilde": "~", "textasciicircum": "^",
    "textbar": "|", "textless": "<", "textgreater": ">", "copyright": "©", "S": "§", "P": "¶", "slash": "/",
    "quad": " ", "qquad": " ", "enspace": " ", "thinspace": " ", "textendash": "–", "textemdash": "—",
    "today": "", "item": "\n- ", "\\": "\n", "newline": "\n", "linebreak": "\n", "LaTeXTeX": "(La)TeX",
}
_ONE_CHAR = {"\\": "\n", "%": "%", "&": "&", "_": "_", "#": "#", "$": "$", "{": "{", "}": "}", " ": " ", ",": " ", ";": " ",
             ":": " ", "!": "", "/": "", "-": "", "@": "", "'": "", "`": "", '"': "", "^": "", "~": "", "=": "",
             ".": "", "[": "[", "]": "]", "(": "(", ")": ")", "|": "|"}
_CONTROL = re.compile(r"[A-Za-z@]+\*?|.", re.S)


def strip_comments(tex: str) -> str:
    """Drop ``%`` comments (an escaped ``\\%`` stays); a comment ending a line also eats the newline."""
    out = []
    for line in tex.split("\n"):
        i, cut = 0, None
        while i < len(line):
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c == "%":
                cut = i
                break
            i += 1
        if cut is None:
            out.append(line)
        elif line[:cut].strip():
            out.append(line[:cut])
        # a line that is all comment disappears (no paragraph break)
    return "\n".join(out)


def _group(s: str, i: int, open_c: str = "{", close_c: str = "}") -> tuple[str, int] | None:
    """The balanced group starting at s[i] (which must be ``open_c``): (content, index after it)."""
    if i >= len(s) or s[i] != open_c:
        return None
    depth, j = 0, i
    while j < len(s):
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return s[i + 1 : j], j + 1
        j += 1
    return s[i + 1 :], len(s)  # unbalanced: take the rest


def _skip_space(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t":
        i += 1
    return i


def _args(s: str, i: int, n: int) -> tuple[list[str], int]:
    """Optional [..] groups and up to ``n`` mandatory {..} groups after a command."""
    found = []
    while True:
        j = _skip_space(s, i)
        if j < len(s) and s[j] == "[":
            g = _group(s, j, "[", "]")
            if g is None:
                break
            i = g[1]
            continue
        if len(found) < n and j < len(s) and s[j] == "{":
            g = _group(s, j)
            found.append(g[0])
            i = g[1]
            continue
        break
    return found, i


def detex(s: str) -> str:
    """Plain text of a LaTeX fragment: commands dropped or replaced, the text of their arguments kept."""
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            m = _CONTROL.match(s, i + 1)
            if not m:
                i += 1
                continue
            name = m.group(0)
            i = m.end()
            base = name.rstrip("*")
            if len(name) == 1 and not name.isalpha():
                out.append(_ONE_CHAR.get(name, name))
                continue
            if base in ("verb", "lstinline"):
                j = i
                if j < len(s) and s[j] == "{":
                    g = _group(s, j)
                    out.append(g[0])
                    i = g[1]
                elif j < len(s):
                    end = s.find(s[j], j + 1)
                    end = len(s) if end < 0 else end
                    out.append(s[j + 1 : end])
                    i = end + 1
                continue
            if base in SYMBOLS:
                out.append(SYMBOLS[base])
                if i < len(s) and s[i : i + 2] == "{}":
                    i += 2
                elif i < len(s) and s[i] == " " and name.isalpha() and base not in ("item",):
                    out.append(" ")
                    i += 1
                continue
            if base in DROP_ARGS:
                _, i = _args(s, i, DROP_ARGS[base])
                continue
            if base in ("footnote", "marginpar"):
                args, i = _args(s, i, 1)
                if args:
                    out.append(" (" + detex(args[0]).strip() + ")")
                continue
            if base in ("href", "textcolor", "colorbox"):
                args, i = _args(s, i, 2)
                out.append(detex(args[-1]) if args else "")
                continue
            if base in ("hologo", "pkg", "cls", "env", "cmd", "opt", "file", "url", "path", "texttt", "emph",
                        "textbf", "textit", "textsf", "textrm", "textsc", "underline", "mbox", "hbox", "text",
                        "uline", "kai", "hei", "song", "fangsong", "heiti", "kaishu", "songti", "zihao", "meta",
                        "marg", "oarg", "parg", "cs", "tn", "mathrm", "mathbf", "mathit", "ensuremath"):
                args, i = _args(s, i, 1)
                if base == "cs" and args:
                    out.append("\\" + args[0])
                elif base != "zihao" and args:
                    out.append(detex(args[0]))
                continue
            # unknown command: drop it, keep the text of one braced argument
            args, i = _args(s, i, 1)
            if args:
                out.append(detex(args[0]))
            continue
        if c in "{}":
            i += 1
            continue
        if c == "~":
            out.append(" ")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _body(tex: str) -> str:
    start = tex.find("\\begin{document}")
    if start >= 0:
        tex = tex[start + len("\\begin{document}") :]
        end = tex.find("\\end{document}")
        if end >= 0:
            tex = tex[:end]
    return tex


_ENV = re.compile(r"\\begin\s*\{([^}]*)\}")


def _environments(tex: str) -> list[str | tuple[str, str]]:
    """Split into text and ('code', content) pieces; drop prose-free environments."""
    pieces: list[str | tuple[str, str]] = []
    i = 0
    while True:
        m = _ENV.search(tex, i)
        if not m:
            pieces.append(tex[i:])
            return pieces
        name = m.group(1).strip()
        if name not in VERBATIM_ENVS and name not in DROP_ENVS:
            pieces.append(tex[i : m.end()])
            i = m.end()
            continue
        pieces.append(tex[i : m.start()])
        end_tag = "\\end{" + name + "}"
        if name in VERBATIM_ENVS:
            stop = tex.find(end_tag, m.end())
        else:  # nested environments of the same name
            depth, j, stop = 1, m.end(), -1
            begin_tag = "\\begin{" + name + "}"
            while depth:
                nb, ne = tex.find(begin_tag, j), tex.find(end_tag, j)
                if ne < 0:
                    break
                if 0 <= nb < ne:
                    depth, j = depth + 1, nb + len(begin_tag)
                else:
                    depth, j = depth - 1, ne + len(end_tag)
                    stop = ne
        if stop < 0:
            stop = len(tex)
        if name in VERBATIM_ENVS:
            body = tex[m.end() : stop]
            body = re.sub(r"^\s*\[[^\]\n]*\]", "", body, count=1)  # options of the listing
            if name == "minted":
                body = re.sub(r"^\s*\{[^}\n]*\}", "", body, count=1)
            pieces.append(("code", body.strip("\n")))
        i = stop + len(end_tag)


def latex_items(tex: str) -> list:
    """Corpus items (body lines and (level, title) headings) of one LaTeX file."""
    tex = strip_comments(_body(tex.replace("\r\n", "\n")))
    items: list = []
    for piece in _environments(tex):
        if isinstance(piece, tuple):
            items.append("```")
            items.extend(line for line in piece[1].replace("```", "'''").split("\n"))
            items.append("```")
            continue
        i = 0
        while True:
            m = _SECTION.search(piece, i)
            if not m:
                _text(piece[i:], items)
                break
            _text(piece[i : m.start()], items)
            j = _skip_space(piece, m.end())
            while j < len(piece) and piece[j] in "\n":
                j = _skip_space(piece, j + 1)
            if j < len(piece) and piece[j] == "[":
                g = _group(piece, j, "[", "]")
                j = _skip_space(piece, g[1]) if g else j
            if j < len(piece) and piece[j] == "{":
                content, j = _group(piece, j)
                title = " ".join(detex(content).split())
                if title:
                    items.append((SECTION_LEVELS[m.group(1)], title))
            i = j
    return items


def _text(fragment: str, items: list) -> None:
    text = detex(fragment)
    for line in text.split("\n"):
        line = " ".join(line.split()) if not line.startswith("- ") else "- " + " ".join(line[2:].split())
        if line == "-":
            line = ""
        items.append(line)
