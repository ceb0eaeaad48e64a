"""Heading style profiles for rendered documents: numbering schemes and heading forms.

A profile is drawn per document from a seeded ``random.Random``; it says how each
heading level is numbered ("1.", "1.1", "Chapter 1.", "Part I", "第一章", "一、",
"（一）"...), whether deeper levels go unnumbered, and (for plain text) how a heading
line is marked (setext underline, ALL CAPS, nothing). Numbering replaces any number
the title already had, so "1.1 Scope" never becomes "2.3 1.1 Scope".
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass, field

from hichunk.numbering import strip_heading_number

ZH_DIGITS = "零一二三四五六七八九"


def zh_number(n: int) -> str:
    """Chinese numeral for 1..999 (十一, 二十, 一百零五)."""
    if n < 10:
        return ZH_DIGITS[n]
    if n < 20:
        return "十" + (ZH_DIGITS[n % 10] if n % 10 else "")
    if n < 100:
        return ZH_DIGITS[n // 10] + "十" + (ZH_DIGITS[n % 10] if n % 10 else "")
    rest = n % 100
    tail = "" if rest == 0 else ("零" + zh_number(rest) if rest < 10 else (("一" if rest < 20 else "") + zh_number(rest)))
    return ZH_DIGITS[n // 100] + "百" + tail


def roman(n: int) -> str:
    out = ""
    for value, sym in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                       (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out += sym
            n -= value
    return out


def letter(n: int) -> str:
    s = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        s = chr(65 + r) + s
    return s


# A scheme maps (level, counters[1..level]) to a number prefix. Level-specific formats:
#   dec   : "1.2.3" joined counters from the scheme's decimal root
#   dec.  : "1.2.3."
#   chap  : "Chapter 3." / "CHAPTER 3" / "Chapter 3:"
#   part  : "Part I"
#   rom   : "IV."
#   LET   : "B."
#   let)  : "(b)"
#   zhchap: "第三章" / "第3章"
#   zhsec : "第二节"
#   zhenum: "三、"
#   zhparen: "（三）"
#   zhnum : "3."
#   zhnump: "（3）"
SCHEMES = {
    "en": {
        "decimal": ["dec.", "dec", "dec", "dec", "dec", "dec"],
        "decimal-plain": ["dec", "dec", "dec", "dec", "dec", "dec"],
        "chapter": ["chap", "dec", "dec", "dec", "dec", "dec"],
        "part-chapter": ["part", "chap", "dec", "dec", "dec", "dec"],
        "roman-letter": ["rom", "LET", "num.", "let)", "", ""],
        "chapter-unnumbered-deep": ["chap", "dec", "", "", "", ""],
        "unnumbered": ["", "", "", "", "", ""],
        "original": None,
    },
    "zh": {
        "zh-chapter": ["zhchap", "zhsec", "zhenum", "zhparen", "zhnum", "zhnump"],
        "zh-chapter-decimal": ["zhchap", "dec", "dec", "dec", "dec", "dec"],
        "zh-report": ["zhenum", "zhparen", "zhnum", "zhnump", "", ""],
        "decimal": ["dec.", "dec", "dec", "dec", "dec", "dec"],
        "zh-part": ["zhpart", "zhchap", "zhsec", "zhenum", "zhparen", "zhnum"],
        "unnumbered": ["", "", "", "", "", ""],
        "original": None,
    },
}


@dataclass
class Profile:
    """How one rendered document writes its headings and text."""

    lang: str
    scheme: str
    arabic_chapters: bool = True  # 第3章 vs 第三章; "Chapter 3" vs "CHAPTER 3" style below
    chapter_word: str = "Chapter {n}."
    appendix: bool = False  # the last top-level sections are appendices (Appendix A. / A.1)
    forms: list[str] = field(default_factory=list)  # per level: plain | setext:= | setext:- | setext:~ | setext:* | caps
    width: int = 72  # hard-wrap column (0: paragraphs on one line)
    blank_before: int = 1
    blank_after: int = 1
    indent_first: str = ""  # first-line indent of paragraphs
    toc: bool = False
    toc_leaders: bool = True
    callouts: float = 0.0  # chance of a callout line before a paragraph
    md_offset: int = 0  # Markdown: first level written with 1 + md_offset '#'
    md_setext: bool = False  # Markdown: levels 1-2 as setext headings
    # conventions held-out families break models on (issue 17)
    label_line: bool = False  # "Chapter 1" / "Part II" / "Appendix A" / "第 1 章" on its own line, the title below
    label_space: str = ""  # Chinese: the space inside and after "第 1 章" ("", " ", U+00A0, U+3000)
    nbsp: bool = False  # English: no-break spaces in labels and after numbers ("Chapter\u00a01", "2.3\u00a0Title")
    fullwidth_digits: bool = False  # Chinese: full-width digits in heading numbers ("第１章", "１.２")
    heading_wrap: int = 0  # plain text: headings longer than this many columns wrap onto more lines (0: never)
    toc_title: str = ""  # "Contents", "Table of Contents", "目录", "目　录"... ("" = Contents / 目录)
    toc_depth: int = 2
    toc_pages: bool = False  # without leaders: page numbers at the right margin
    toc_leader: str = "."
    callout_titles: bool = False  # callouts as boxes with a title ("TIP Selecting a mirror", "注意：备份数据")
    captions: float = 0.0  # chance of a figure/table/example caption beside a paragraph or code block
    faq_prefix: str = ""  # "Q: " / "问：" before headings that are questions

    def name(self) -> str:
        return self.scheme

    def to_dict(self) -> dict:
        return asdict(self)


def draw_profile(rng: random.Random, lang: str, kind: str = "text") -> Profile:
    """A random profile for a document of ``lang`` rendered as ``kind`` (text | markdown | pdf)."""
    lang = "zh" if lang == "zh" else "en"
    names = sorted(SCHEMES[lang])
    weights = {"original": 2, "unnumbered": 2}
    scheme = rng.choices(names, [weights.get(n, 3) for n in names])[0]
    p = Profile(lang=lang, scheme=scheme)
    p.arabic_chapters = rng.random() < 0.5
    p.chapter_word = rng.choice(["Chapter {n}.", "CHAPTER {n}", "Chapter {n}:", "Chapter {n}"])
    p.appendix = scheme not in ("original", "unnumbered") and rng.random() < 0.3
    if kind == "text":
        forms = ["plain", "setext:=", "setext:-", "setext:~", "setext:*", "caps"]
        top = rng.choice(forms if lang == "en" else forms[:5])
        second = rng.choice(["plain", "setext:-", "setext:~"] if top != "plain" else ["plain", "setext:-"])
        p.forms = [top, second] + ["plain"] * 8
        if top == second and top.startswith("setext"):
            p.forms[1] = "plain"
        p.width = rng.choice([0, 60, 66, 72, 72, 78, 80]) if lang == "en" else rng.choice([0, 0, 72, 80])
        p.blank_before = rng.choice([1, 1, 2, 3])
        p.blank_after = rng.choice([0, 1, 1, 1])
        p.indent_first = rng.choice(["", "", "    "]) if lang == "en" else rng.choice(["", "\u3000\u3000", "  "])
        p.toc = rng.random() < 0.35
        p.toc_leaders = rng.random() < 0.6
        p.callouts = rng.choice([0.0, 0.03, 0.06])
        p.heading_wrap = rng.choice([0, 0, 0, 30, 38, 46]) if lang == "en" else rng.choice([0, 0, 0, 20, 26, 32])
        p.toc_title = rng.choice(["Contents", "CONTENTS", "Table of Contents", "TABLE OF CONTENTS"] if lang == "en"
                                 else ["目录", "目 录", "目\u3000录", "目　　录"])
        p.toc_depth = rng.choice([2, 2, 3])
        p.toc_pages = rng.random() < 0.5
        p.toc_leader = "." if lang == "en" else rng.choice([".", "…", "·"])
    if kind in ("text", "pdf"):
        _draw_conventions(p, rng)
    elif kind == "markdown":
        p.md_offset = rng.choice([0, 0, 0, 1])
        p.md_setext = rng.random() < 0.15
    return p


def _draw_conventions(p: Profile, rng: random.Random) -> None:
    """Label lines, odd spaces and digits, callout boxes, captions and question prefixes (text and PDF)."""
    zh = p.lang == "zh"
    p.label_line = rng.random() < 0.35
    if zh:
        p.label_space = rng.choice(["", "", " ", "\u00a0", "\u00a0", "\u3000"])
        p.fullwidth_digits = rng.random() < 0.15
    else:
        p.nbsp = rng.random() < 0.2
    p.callout_titles = rng.random() < 0.6
    p.callouts = p.callouts or rng.choice([0.0, 0.03, 0.06])
    p.captions = rng.choice([0.0, 0.0, 0.04, 0.08])
    p.faq_prefix = rng.choice(["", "", "", "", "Q: " if not zh else "问：", "Q. " if not zh else "问："])


_FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
_LABEL_FORMATS = ("chap", "part", "zhchap", "zhpart")


@dataclass
class HeadingText:
    """A heading as written: its number or label prefix, the separator, the bare title."""

    prefix: str
    sep: str
    bare: str
    label: bool = False  # the prefix is a Chapter / Part / Appendix / 第N章 label (it may stand on its own line)

    @property
    def text(self) -> str:
        return self.prefix + self.sep + self.bare if self.prefix else self.bare

    @property
    def label_text(self) -> str:
        """The label as a line of its own ("Chapter 3." -> "Chapter 3")."""
        return self.prefix.rstrip(".:：") if self.label else self.prefix


class Numberer:
    """Numbers headings level by level following a profile's scheme."""

    def __init__(self, profile: Profile, top_count: int = 0):
        self.p = profile
        self.formats = SCHEMES[profile.lang][profile.scheme]
        self.counters: list[int] = []
        self.top_count = top_count  # number of top-level headings (for appendices)
        self.top_seen = 0
        self.appendix_from = top_count - (1 if top_count < 6 else 2) if profile.appendix and top_count >= 3 else 10**9

    def title(self, level: int, title: str) -> str:
        """The heading text for the next heading of ``level`` (1-based)."""
        return self.parts(level, title).text

    def parts(self, level: int, title: str) -> HeadingText:
        """The next heading of ``level`` (1-based) as prefix, separator and bare title."""
        if level > len(self.counters):
            self.counters.extend([0] * (level - len(self.counters)))
        del self.counters[level:]
        self.counters[level - 1] += 1
        for i in range(level - 1):
            if self.counters[i] == 0:
                self.counters[i] = 1
        if level == 1:
            self.top_seen += 1
        asks = title.rstrip().endswith(("?", "？")) and not re.match(r"(Q\b|Q\d|Question\b|问)", title.lstrip())
        question = self.p.faq_prefix if asks else ""
        if self.formats is None:
            return HeadingText("", "", question + title)
        bare = question + strip_heading_number(title)
        prefix = self._prefix(level)
        if not prefix:
            return HeadingText("", "", bare)
        fmt = self.formats[level - 1] if level <= len(self.formats) else ""
        label = fmt in _LABEL_FORMATS or (level == 1 and self._appendix() is not None and bool(fmt))
        zh = self.p.lang == "zh"
        if zh and self.p.fullwidth_digits:
            prefix = prefix.translate(_FULLWIDTH)
        if zh:
            sep = "" if prefix[-1] in "、）" else (self.p.label_space or " ")
        else:
            sep = "\u00a0" if self.p.nbsp else " "
        return HeadingText(prefix, sep, bare, label)

    def _appendix(self) -> str | None:
        if self.top_seen > self.appendix_from:
            return letter(self.counters[0] - self.appendix_from)
        return None

    def _prefix(self, level: int) -> str:
        fmt = self.formats[level - 1] if level <= len(self.formats) else ""
        c = self.counters
        n = c[level - 1]
        app = self._appendix()
        zh = self.p.lang == "zh"
        space = "\u00a0" if self.p.nbsp and not zh else " "
        if app is not None and fmt and not fmt.startswith("part"):
            if level == 1:
                return f"附录{self.p.label_space}{app}" if zh else f"Appendix{space}{app}."
            return app + "." + ".".join(str(x) for x in c[1:level])
        if fmt in ("dec", "dec."):
            start = self._dec_root()
            nums = [str(x) for x in c[start:level]] or [str(n)]
            return ".".join(nums) + ("." if fmt == "dec." or len(nums) == 1 and not zh else "")
        if fmt == "num.":
            return f"{n}."
        if fmt == "chap":
            return self.p.chapter_word.format(n=n).replace(" ", space)
        if fmt == "part":
            return f"Part{space}{roman(n)}"
        if fmt == "rom":
            return f"{roman(n)}."
        if fmt == "LET":
            return f"{letter(n)}."
        if fmt == "let)":
            return f"({letter(n).lower()})"
        if fmt == "zhchap":
            sp = self.p.label_space
            return f"第{sp}{n}{sp}章" if self.p.arabic_chapters else f"第{zh_number(n)}章"
        if fmt == "zhpart":
            return f"第{zh_number(n)}部分"
        if fmt == "zhsec":
            return f"第{zh_number(n)}节"
        if fmt == "zhenum":
            return f"{zh_number(n)}、"
        if fmt == "zhparen":
            return f"（{zh_number(n)}）"
        if fmt == "zhnum":
            return f"{n}."
        if fmt == "zhnump":
            return f"（{n}）"
        return ""

    def _dec_root(self) -> int:
        """Decimal numbers count from the first level that is numbered decimally or as a chapter."""
        for i, f in enumerate(self.formats):
            if f in ("dec", "dec.", "chap", "zhchap"):
                return i
        return 0


# callout boxes with a title (the label, then a few words of the box's own text)
CALLOUT_BOXES = {
    "en": ["TIP", "CAUTION", "GOING FURTHER", "BACK TO BASICS", "SECURITY", "IN PRACTICE", "NOTE", "IMPORTANT",
           "WARNING", "COMMUNITY", "CULTURE", "Tip", "Note:", "Warning:"],
    "zh": ["注意", "提示", "小贴士", "警告", "说明", "技巧", "重要", "【注意】", "【提示】", "TIP"],
}
# figure, table and example captions: (label, number format) per language; {c} chapter, {k} count in chapter
CAPTIONS = {
    "en": {"figure": ["Figure {c}.{k}.", "Figure {c}.{k}", "Fig. {c}.{k}:"], "table": ["Table {c}.{k}.", "Table {c}.{k}"],
           "example": ["Example {c}.{k}.", "Listing {c}.{k}:", "Example {c}.{k}"]},
    "zh": {"figure": ["图 {c}.{k}", "图{c}-{k}", "图 {c}-{k}"], "table": ["表 {c}.{k}", "表{c}-{k}", "表 {c}-{k}"],
           "example": ["例 {c}.{k}", "代码清单 {c}-{k}", "示例 {c}.{k}"]},
}

CALLOUTS = {
    "en": ["Note", "NOTE", "Note:", "Warning", "WARNING:", "Tip:", "Important", "Caution:", "Example:", "See also:"],
    "zh": ["注意", "注意：", "提示", "提示：", "警告", "说明：", "小贴士", "示例："],
}
