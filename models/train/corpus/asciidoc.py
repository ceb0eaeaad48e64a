"""AsciiDoc (git's documentation) to corpus items.

Headings come in two forms:

* one line: ``= Title`` (the document title, level 0), ``== Section`` (1), ``===`` (2)...;
* two lines: a title underlined with ``=`` (0), ``-`` (1), ``~`` (2), ``^`` (3) or ``+`` (4),
  the underline as long as the title give or take two characters.

Delimited blocks (``----`` listings, ``....`` literals, ``====`` examples, ``****``
sidebars, ``____`` quotes, ``++++`` passthroughs, ``////`` comments) hold no headings:
a delimiter line that does not underline a title opens a block that the same line
closes. Listing and literal blocks become code fences; comments are dropped; so are
attribute entries (``:name: value``), block attributes (``[verse]``), anchors and
``include::`` lines.
"""

from __future__ import annotations

import re

TWO_LINE = {"=": 0, "-": 1, "~": 2, "^": 3, "+": 4}
_ONE_LINE = re.compile(r"^(={1,6})\s+(\S.*?)(?:\s+=+)?\s*$")
_DELIM = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,})\s*$")
_UNDER = re.compile(r"^([=\-~^+])\1+\s*$")
_TITLE = re.compile(r"^[\w\"'`(<{\u3400-\u9fff].*")
_SKIP = re.compile(r"^(?::[\w-]+!?:.*|\[\[.*\]\]|\[.*\]|include::.*|ifdef::.*|ifndef::.*|endif::.*|//(?!/).*)\s*$")


def _is_title(line: str) -> bool:
    return bool(line.strip()) and bool(_TITLE.match(line)) and not re.match(r"^(\*|-|\.|\d+\.)\s", line) \
        and not line.rstrip().endswith("::")


def asciidoc_items(text: str) -> list:
    """Corpus items of one AsciiDoc file."""
    lines = text.replace("\r\n", "\n").split("\n")
    items: list = []
    block: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.rstrip()
        if block is not None:
            if stripped == block:
                if block[0] in "-.":
                    items.append("```")
                block = None
            elif block[0] != "/":
                items.append(line.replace("```", "'''") if block[0] in "-." else line)
            i += 1
            continue
        nxt = lines[i + 1].rstrip() if i + 1 < len(lines) else ""
        if _is_title(stripped) and _UNDER.match(nxt) and abs(len(nxt) - len(stripped)) <= 2 and len(nxt) >= 2:
            if not _ONE_LINE.match(stripped) or len(stripped) > 2:
                items.append((TWO_LINE[nxt[0]], stripped.strip()))
                i += 2
                continue
        m = _ONE_LINE.match(stripped)
        if m and (i == 0 or not lines[i - 1].strip() or _SKIP.match(lines[i - 1].rstrip())):
            items.append((len(m.group(1)) - 1, m.group(2)))
            i += 1
            continue
        d = _DELIM.match(stripped)
        if d:
            block = stripped
            if block[0] in "-.":
                items.append("```")
            i += 1
            continue
        if _SKIP.match(stripped):
            i += 1
            continue
        if stripped in ("+", "--"):  # list continuation, open block
            items.append("")
            i += 1
            continue
        items.append(line)
        i += 1
    if block is not None and block[0] in "-.":
        items.append("```")
    return items
