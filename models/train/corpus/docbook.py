"""DocBook XML (KDE manuals, apt's .dbk, latex2e.dbk) to corpus items.

The nesting of sectioning elements gives the level (``book`` > ``part`` > ``chapter`` /
``appendix`` / ``preface`` > ``sect1``..``sect5`` / nested ``section``), and the first
``<title>`` directly inside one is its heading. Titles of notes, figures, tables and
examples are plain lines. Meta data (``bookinfo``, ``indexterm``, ``remark``...) is
dropped; ``programlisting``/``screen`` keep their line breaks in a code fence.

No XML library is needed and none of the KDE DTD: files pulled in through
``<!ENTITY name SYSTEM "file">`` or ``<xi:include href="file"/>`` are read from the
document's folder, internal entities and those of a local external DTD are substituted, and other named entities (KDE's ``&konsole;``) become their
name. Malformed markup never raises; unknown tags keep their text.
"""

from __future__ import annotations

import html
import os
import re

SECTIONS = {"book", "part", "chapter", "appendix", "preface", "article", "sect1", "sect2", "sect3", "sect4",
            "sect5", "section", "simplesect", "reference", "refentry", "glossary", "bibliography", "partintro"}
DROP = {"bookinfo", "articleinfo", "chapterinfo", "sectioninfo", "sect1info", "sect2info", "sect3info", "info",
        "prefaceinfo", "appendixinfo", "partinfo", "indexterm", "remark", "comment", "authorgroup", "legalnotice",
        "keywordset", "revhistory", "releaseinfo", "date", "mediaobject", "imageobject", "screenshot", "index",
        "toc", "lot", "titleabbrev", "subjectset", "copyright", "inlinemediaobject", "graphic", "refmeta",
        "refentryinfo", "abbrev", "productname"}
VERBATIM = {"programlisting", "screen", "literallayout", "synopsis", "funcsynopsisinfo", "address"}
BLOCKS = {"para", "simpara", "formalpara", "listitem", "varlistentry", "term", "row", "entry", "note", "tip",
          "warning", "caution", "important", "title", "blockquote", "step", "question", "answer", "caption",
          "example", "figure", "table", "informaltable", "tgroup", "itemizedlist", "orderedlist",
          "variablelist", "qandaset", "qandaentry", "procedure", "sidebar", "refnamediv", "refsynopsisdiv",
          "refsect1", "refsect2", "cmdsynopsis", "glossentry", "glossterm", "glossdef", "member",
          "simplelist", "msgset", "segmentedlist", "seglistitem", "bridgehead", "subtitle", "epigraph",
          "attribution", "abstract"} | SECTIONS
NAMED = {"kde": "KDE", "kde-frameworks": "KDE Frameworks", "plasma": "Plasma", "linux": "Linux", "unix": "UNIX",
         "qt": "Qt", "kappname": "", "package": "", "language": "", "i18n-translatable": "", "gnu": "GNU",
         "kmymoney": "KMyMoney", "kstars": "KStars", "kdenlive": "Kdenlive", "kile": "Kile", "konsole": "Konsole",
         "x-server": "X-Server", "etc": "etc.", "ie": "i.e.", "eg": "e.g.", "dcop": "DCOP", "url": "URL",
         "cdrom": "CD-ROM", "pdf": "PDF", "html": "HTML", "xml": "XML", "latex": "LaTeX", "tex": "TeX"}
_XML_ENTITIES = {"lt", "gt", "amp", "quot", "apos"}
_TOKEN = re.compile(
    r"<!--.*?-->|<!\[CDATA\[(?P<cdata>.*?)\]\]>|<\?.*?\?>|<!DOCTYPE(?:[^\[>]*\[.*?\]\s*>|[^>]*>)"
    r"|<(?P<close>/?)(?P<name>[A-Za-z][\w:.-]*)(?P<attrs>(?:[^>\"']|\"[^\"]*\"|'[^']*')*?)(?P<empty>/?)>",
    re.S,
)
_ENTITY_DECL = re.compile(r"<!ENTITY\s+(%\s+)?([\w.:-]+)\s+(?:SYSTEM\s+\"([^\"]*)\"|SYSTEM\s+'([^']*)'|"
                          r"PUBLIC\s+\"[^\"]*\"\s+\"([^\"]*)\"|\"([^\"]*)\"|'([^']*)')\s*>", re.S)
_ENTITY_REF = re.compile(r"&([A-Za-z_][\w.:-]*);")


def _read_near(folder: str | None, name: str) -> str | None:
    """A file named relative to ``folder`` (None when there is no folder or it cannot be read)."""
    if not folder or "://" in name:
        return None
    try:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _dtd_entities(dtd: str, folder: str | None, values: dict[str, str], files: dict[str, str], depth: int = 0) -> None:
    """General entities declared in a DTD text, following its parameter-entity file includes (GnuCash's
    ``gnc-gui-C.dtd`` pulls in ``gnc-docbookx.dtd``, which names the application and its version)."""
    for d in _ENTITY_DECL.finditer(dtd):
        name, sysfile = d.group(2), d.group(3) or d.group(4) or d.group(5)
        if d.group(1):  # a parameter entity: follow a local DTD file, skip the rest
            inner = _read_near(folder, sysfile) if sysfile and sysfile.endswith(".dtd") and depth < 3 else None
            if inner is not None:
                _dtd_entities(inner, folder, values, files, depth + 1)
        elif sysfile is not None:
            files.setdefault(name, sysfile)
        else:
            values.setdefault(name, d.group(6) if d.group(6) is not None else d.group(7))


_XINCLUDE = re.compile(r"<xi:include\b[^>]*?\bhref\s*=\s*[\"']([^\"']+)[\"'][^>]*?/?>(?:\s*</xi:include>)?", re.S)


def _xincludes(xml: str, folder: str | None, depth: int) -> str:
    """Replace ``<xi:include href="file"/>`` by the file's content (read from ``folder``, four levels deep)."""
    def sub(m: re.Match) -> str:
        inner = _read_near(folder, m.group(1)) if depth < 4 else None
        if inner is None:
            return ""
        inner = re.sub(r"<\?xml[^>]*\?>|<!DOCTYPE[^\[>]*>", "", inner)
        return _xincludes(inner, os.path.dirname(os.path.join(folder or "", m.group(1))), depth + 1)

    return _XINCLUDE.sub(sub, xml)


def resolve_entities(xml: str, folder: str | None = None, depth: int = 0, inherited: dict | None = None) -> str:
    """Substitute DOCTYPE entities (files read from ``folder``, an external DTD's declarations too), XIncludes
    and named KDE entities."""
    files: dict[str, str] = {}
    values: dict[str, str] = dict(inherited or {})
    m = re.search(r"<!DOCTYPE[^\[>]*\[(.*?)\]\s*>", xml, re.S)
    if m:
        for d in _ENTITY_DECL.finditer(m.group(1)):
            if d.group(1):
                continue  # parameter entity
            name, sysfile = d.group(2), d.group(3) or d.group(4) or d.group(5)
            if sysfile is not None:
                files[name] = sysfile
            else:
                values[name] = d.group(6) if d.group(6) is not None else d.group(7)
    external = re.search(r"<!DOCTYPE\s+\w+\s+(?:SYSTEM|PUBLIC\s+[\"'][^\"']*[\"'])\s+[\"']([^\"']+\.dtd)[\"']", xml)
    dtd = _read_near(folder, external.group(1)) if external and depth < 4 else None
    if dtd is not None:
        _dtd_entities(dtd, folder, values, files)
    for _ in range(3):  # entity values that name other entities (&vers-stable; = "&series-stable;.13")
        known = dict(values)
        values = {k: _ENTITY_REF.sub(lambda r, known=known: known.get(r.group(1), r.group(0)), v)
                  for k, v in known.items()}
    xml = _xincludes(xml, folder, depth)

    def sub(mm: re.Match) -> str:
        name = mm.group(1)
        if name in _XML_ENTITIES or (name.startswith("#")):
            return mm.group(0)
        if name in files and folder and depth < 4:
            path = os.path.join(folder, files[name])
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    inner = fh.read()
            except OSError:
                return ""
            inner = re.sub(r"<\?xml[^>]*\?>", "", inner)
            return resolve_entities(inner, os.path.dirname(path), depth + 1, values)
        if name in values:
            return values[name]
        if name.lower() in NAMED:
            return NAMED[name.lower()]
        if html.unescape(mm.group(0)) != mm.group(0):
            return mm.group(0)  # an HTML entity: decoded with the text
        if "." in name:  # a person or a mail address of the KDE entity set
            return " ".join(name.split(".")) if not name.endswith(".mail") else ""
        return name[:1].upper() + name[1:]

    return _ENTITY_REF.sub(sub, xml)


def docbook_items(xml: str, folder: str | None = None) -> list:
    """Corpus items of a DocBook document (entities resolved against ``folder``)."""
    xml = resolve_entities(xml, folder)
    items: list = []
    stack: list[str] = []  # open element names
    titled: list[bool] = []  # per open element: its title was seen
    buf: list[str] = []
    prefix = ""
    drop_depth = 0
    verbatim: list[str] | None = None
    title_level: int | None = None

    def flush() -> None:
        nonlocal prefix
        text = " ".join(html.unescape("".join(buf)).split())
        buf.clear()
        if title_level is None and text:
            items.append(prefix + text)
            items.append("")
            prefix = ""

    pos = 0
    for m in _TOKEN.finditer(xml):
        text = xml[pos : m.start()]
        pos = m.end()
        if drop_depth == 0:
            if verbatim is not None:
                verbatim.append(text)
            else:
                buf.append(text)
        if m.group("cdata") is not None:
            if drop_depth == 0:
                (verbatim if verbatim is not None else buf).append(html.escape(m.group("cdata"), quote=False))
            continue
        name = m.group("name")
        if not name:
            continue
        name = name.lower()
        closing, empty = bool(m.group("close")), bool(m.group("empty"))
        if drop_depth:
            if name in DROP:
                if closing:
                    drop_depth -= 1
                elif not empty:
                    drop_depth += 1
            continue
        if not closing and name in DROP:
            if not empty:
                drop_depth = 1
            continue
        if verbatim is not None:
            if closing and name in VERBATIM:
                code = html.unescape("".join(verbatim)).strip("\n").replace("```", "'''")
                items.extend(["```", *code.split("\n"), "```", ""])
                verbatim = None
                _pop(stack, titled, name)
            continue
        if empty:
            if name in ("sbr", "br"):
                buf.append("\n")
            continue
        if not closing:
            if name in VERBATIM:
                flush()
                verbatim = []
                stack.append(name)
                titled.append(False)
                continue
            if name == "title" and stack and stack[-1] in SECTIONS and not titled[-1]:
                flush()
                titled[-1] = True
                title_level = sum(1 for s in stack if s in SECTIONS)
            elif name in BLOCKS:
                flush()
                if name == "listitem":
                    prefix = "- "
            stack.append(name)
            titled.append(False)
            continue
        # closing tag
        if name == "title" and title_level is not None:
            title = " ".join(html.unescape("".join(buf)).split())
            buf.clear()
            items.append((title_level, title))
            title_level = None
        elif name in BLOCKS:
            flush()
        _pop(stack, titled, name)
    if drop_depth == 0 and verbatim is None:
        buf.append(xml[pos:])
    title_level = None
    flush()
    return items


def _pop(stack: list[str], titled: list[bool], name: str) -> None:
    if name in stack:
        while stack:
            top = stack.pop()
            titled.pop()
            if top == name:
                break
