"""Converters of the new corpus sources on small inline samples: exact levels, no crash on odd input."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hichunk.document.markdown import parse_markdown
from hichunk.models.train.corpus.asciidoc import asciidoc_items
from hichunk.models.train.corpus.corpus import SourceDoc, convert, detect_lang, split_of
from hichunk.models.train.corpus.docbook import docbook_items
from hichunk.models.train.corpus.info import info_items, info_plain_text, manual_parts, read_manual, underline_char
from hichunk.models.train.corpus.latex import detex, latex_items, strip_comments
from hichunk.models.train.corpus.normalise import items_to_markdown, split_items
from hichunk.models.train.corpus.sources import HELD_OUT, REAL_PDFS, SOURCES, fetch_source, is_held_out


def heads(items):
    md = items_to_markdown(items)
    assert parse_markdown(md.markdown).headings == [(i, lv) for i, lv, _ in md.headings]
    return [(lv, t) for _, lv, t in md.headings], md.markdown


# -- LaTeX -------------------------------------------------------------------------------

LATEX = r"""\documentclass{ctexbook}
\newcommand{\foo}{\section{not a heading}}
\begin{document}
\chapter{安装 \protect\TeX{} 发行版}\label{app:install}
高德纳的 \TeX{} 程序，见 \ref{x}\footnote{脚注}。 % secret-remark
\section*{\LaTeX{} 简介}
Text with \textbf{bold} and \emph{emphasis} and 50\% and \verb|\raw{x}|.
\begin{verbatim}
\section{inside verbatim}
# a shell comment
\end{verbatim}
\begin{tikzpicture}\node {drawing};\end{tikzpicture}
\subsection[short]{Long \texttt{title}}
\begin{itemize}
  \item first
  \item second
\end{itemize}
\paragraph{Run-in} text.
\end{document}
"""


def test_latex_levels_and_text():
    found, md = heads(latex_items(LATEX))
    assert found == [(1, "安装 TeX 发行版"), (2, "LaTeX 简介"), (3, "Long title")]
    assert "not a heading" not in md and "drawing" not in md and "secret-remark" not in md
    assert "50%" in md and "\\raw{x}" in md and "(脚注)" in md and "bold" in md
    assert "\\section{inside verbatim}" in md and "\\# a shell comment" not in md  # fenced code stays code
    assert "- first" in md and "Run-in" in md


def test_latex_never_crashes_on_odd_input():
    for tex in ["", "\\", "\\section{", "\\section{unclosed\n\ntext", "}}}{{{", "\\begin{verbatim}x",
                "\\end{itemize}", "%%%", "\\chapter*[x]{A}\\section{B", "\\verb", "\\href{u}"]:
        items = latex_items(tex)
        items_to_markdown(items)


def test_detex_and_comments():
    assert detex(r"\textbf{a}~b\\c \emph{d}") == "a b\nc d"
    assert detex(r"\href{http://x}{link} \cite{k} \url{u}") == "link  u"
    assert strip_comments("a % c\n% whole line\nb \\% kept") == "a \nb \\% kept"


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="\\{}[]%$~ abc\nsection chapter begin end verbatim item", max_size=80))
def test_latex_fuzz(tex):
    heads(latex_items(tex))


# -- GNU info ----------------------------------------------------------------------------

INFO = (
    "This is x.info, produced by makeinfo.\n\n\x1f\nFile: x.info,  Node: Top,  Next: Intro,  Up: (dir)\n\n"
    "The Manual\n**********\n\nAbout it.\n\n* Menu:\n\n* Intro::\n\n"
    "\x1f\nFile: x.info,  Node: Intro,  Next: Sub,  Prev: Top,  Up: Top\n\n"
    "1 Introduction\n**************\n\nText of the chapter.\n\n1.1 Details\n===========\n\nMore.\n\n"
    "Deeper\n------\n\nCode follows:\n\n     ----\n     x\n\n"
    "\x1f\nTag Table:\nNode: Top67\n\x1f\nEnd Tag Table\n"
)


def test_info_levels_and_offsets():
    found, md = heads(info_items(INFO))
    assert found == [(1, "The Manual"), (2, "1 Introduction"), (3, "1.1 Details"), (4, "Deeper")]
    assert "Menu" not in md and "File:" not in md and "Tag Table" not in md
    text, hs = info_plain_text(INFO)
    assert [(lv, t) for lv, t, _ in hs] == found
    for _, title, off in hs:
        assert text[off : off + len(title)] == title and (off == 0 or text[off - 1] == "\n")
    assert "* Menu:" in text and "\x1f" not in text and "File:" not in text


FAQ_INFO = (
    "Info file: q.info,    -*-Text-*-\nproduced by bfnnconv.pl\n\n\x1f\nFile: q.info, Node: Top, Next: Section 1\n\n"
    "    THE FAQ\n\n* Menu:\n* Section 1::  Basics\n\n\x1f\nFile: q.info, Node: Section 1, Up: Top\n\n"
    "Questions about basics\n\n* Menu:\n* Question 1.1::  What is it?\n\n"
    "\x1f\nFile: q.info, Node: Question 1.1, Up: Section 1\n\nQuestion 1.1.  Why do I get the error Bad CPU type\n"
    "when I install it?\n\nBecause the binary is for another machine.\n\n"
    "\x1f\nFile: q.info, Node: Question 1.2, Up: Section 1\n\nSomething that is not the question.\n"
)


def test_info_faq_questions_are_headings():
    found, md = heads(info_items(FAQ_INFO))
    assert found == [(1, "Questions about basics"), (2, "Question 1.1. Why do I get the error Bad CPU type when I install it?")]
    assert "Because the binary" in md and md.count("when I install it?") == 1  # the wrapped line is not body too
    text, hs = info_plain_text(FAQ_INFO)
    assert [(lv, t) for lv, t, _ in hs] == [(1, "Questions about basics"), (2, "Question 1.1.  Why do I get the error Bad CPU type")]
    for _, title, off in hs:
        assert text[off:].startswith(title + "\n")


def test_info_image_and_index_markers_are_not_text():
    info = ("\x1f\nFile: m.info,  Node: A\n\n1 A\n***\n\nSee\n\x00\x08[image src=\"x.png\" alt=\"pic\"\x00\x08]\nthis.\n\n"
            "\x00\x08[index\x00\x08]\n* Menu:\n")
    _, md = heads(info_items(info))
    text, _ = info_plain_text(info)
    for out in (md, text):
        assert "\x00" not in out and "\x08" not in out and "image src" not in out and "See" in out and "this." in out


def test_info_underline_must_match_width():
    assert underline_char("Title", "=====") == "="
    assert underline_char("Title", "======") is None
    assert underline_char("  indented", "==========") is None
    assert underline_char("标题", "****") == "*"  # wide characters count two columns
    assert underline_char("x", "-") is None


def test_info_split_manual(tmp_path):
    main = tmp_path / "m.info.gz"
    main.write_bytes(gzip.compress(b"Indirect:\nm.info-1: 10\n"))
    (tmp_path / "m.info-2.gz").write_bytes(gzip.compress(INFO.split("\x1f", 2)[2].encode()))
    (tmp_path / "m.info-1.gz").write_bytes(gzip.compress(("\x1f" + INFO.split("\x1f")[1]).encode()))
    assert [p.rsplit("/", 1)[1] for p in manual_parts(str(main))] == ["m.info.gz", "m.info-1.gz", "m.info-2.gz"]
    assert "1 Introduction" in read_manual(str(main))


# -- DocBook ---------------------------------------------------------------------------------


def test_docbook_levels_entities_and_includes(tmp_path):
    (tmp_path / "chap2.docbook").write_text(
        "<chapter id='c2'><title>Second &app;</title><para>Body &lt;b&gt;.</para>"
        "<sect1><title>S2.1</title><note><title>Note</title><para>careful</para></note></sect1></chapter>",
        encoding="utf-8")
    xml = (
        "<?xml version='1.0'?>\n<!DOCTYPE book PUBLIC 'x' 'y' [\n<!ENTITY chap2 SYSTEM 'chap2.docbook'>\n"
        "<!ENTITY app 'Konsole'>\n]>\n<book><bookinfo><title>Manual</title><author>Me</author></bookinfo>"
        "<chapter><title>Intro</title><para>Hello <emphasis>world</emphasis>.</para>"
        "<sect1><title>Sub</title><programlisting># code\n  indented</programlisting>"
        "<sect2><title>Deep <command>ls</command></title><itemizedlist><listitem><para>item</para></listitem>"
        "</itemizedlist></sect2></sect1></chapter>&chap2;<indexterm><primary>x</primary></indexterm></book>"
    )
    found, md = heads(docbook_items(xml, str(tmp_path)))
    assert found == [(1, "Intro"), (2, "Sub"), (3, "Deep ls"), (1, "Second Konsole"), (2, "S2.1")]
    assert "Manual" not in md and "Me" not in md  # bookinfo is metadata
    assert "Body <b>." in md and "Note" in md and "careful" in md and "- item" in md
    assert "```\n# code\n  indented\n```" in md


def test_docbook_odd_input():
    for xml in ["", "<chapter><title>Only", "<sect1><title>a</title></chapter></sect1>", "&unknown; text",
                "<book><chapter><title></title><para>x</para></chapter></book>", "<![CDATA[<x>]]>"]:
        heads(docbook_items(xml))


# -- AsciiDoc ---------------------------------------------------------------------------------

ADOC = """git-add(1)
==========

NAME
----
git-add - Add files

Options
~~~~~~~
[verse]
'git add' <file>

Example:
----
$ git add .
DESCRIPTION
-----------
----
:attr: value
// a comment line

== One-line section

=== Deeper one-line
text
"""


def test_asciidoc_levels_and_blocks():
    found, md = heads(asciidoc_items(ADOC))
    assert found == [(1, "git-add(1)"), (2, "NAME"), (3, "Options"), (2, "One-line section"), (3, "Deeper one-line")]
    assert "DESCRIPTION" in md  # inside a listing block: not a heading
    assert "[verse]" not in md and "attr" not in md and "a comment line" not in md
    assert "$ git add ." in md


def test_asciidoc_underline_length_tolerance():
    found, _ = heads(asciidoc_items("Title\n==========\n\nSection\n--\n\ntext\n"))
    assert found == []  # too long / too short underlines are not headings here
    found, _ = heads(asciidoc_items("Title\n====\n\nSection here\n------------\n\ntext\n"))
    assert found == [(1, "Title"), (2, "Section here")]


# -- splitting, grouping, registry -----------------------------------------------------------


def test_split_items_cuts_at_chapters():
    items = [(0, "Manual"), "intro"] + [x for n in range(4) for x in ((1, f"Ch {n}"), "w " * 50, (2, "S"), "w " * 50)]
    parts = split_items(items, 120)
    assert len(parts) == 4
    assert parts[0][0] == "intro" and parts[0][1] == (1, "Ch 0")
    assert all(any(isinstance(i, tuple) and i[1].startswith("Ch") for i in p) for p in parts)
    assert split_items(items, 10_000) == [items]


def test_convert_splits_share_a_group(tmp_path):
    path = tmp_path / "m.info"
    chapters = "".join(
        f"\x1f\nFile: m.info,  Node: C{n},  Up: Top\n\n{n} Chapter {n}\n{'*' * (len(str(n)) + 10)}\n\n"
        + ("word " * 300) + f"\n\n{n}.1 Sec\n{'=' * (len(str(n)) + 6)}\n\n" + ("more " * 300) + "\n"
        for n in range(1, 4))
    path.write_text(chapters, encoding="utf-8")
    results = convert(SourceDoc("pkg", "m.info", str(path), "info", "en", group="manual:m", split_words=500))
    docs = [d for _, d, _ in results]
    assert [d.id for d in docs] == ["pkg/m.info#01", "pkg/m.info#02", "pkg/m.info#03"]
    assert {d.group for d in docs} == {"manual:m"} and {split_of(d.split_key) for d in docs} == {split_of("manual:m")}
    assert all(d.max_depth == 2 for d in docs)


def test_registry_never_holds_held_out_manuals(tmp_path):
    for name in list(SOURCES) + [s.name for s in REAL_PDFS]:
        assert not is_held_out(name), name
    assert is_held_out("debian-reference-zh-cn") and is_held_out("debian-handbook")
    assert "debian-policy" in HELD_OUT
    spec = SOURCES["git-doc"].__class__("debian-handbook", "en", "x", ("*",), "html")
    with pytest.raises(Exception, match="held-out"):
        fetch_source("debian-handbook", str(tmp_path), spec=spec)


def test_groups_align_twins():
    texlive = SOURCES["texlive-lang-chinese"]
    assert texlive.group_of("latex/lshort-chinese/src/chap/a.tex.gz") == "texlive:latex/lshort-chinese"
    pdf = {s.name: s for s in REAL_PDFS}
    assert pdf["texlive-lang-chinese"].group_of("latex/lshort-chinese/lshort-zh-cn.pdf") == "texlive:latex/lshort-chinese"
    assert SOURCES["r-doc-info"].group_of("R-intro.info.gz") == pdf["r-doc-pdf"].group_of("R-intro.pdf") == "manual:R-intro"
    assert SOURCES["bash-doc"].group_of("bash.info.gz") == pdf["bash-doc"].group_of("bashref.pdf")
    assert SOURCES["lilypond-doc"].group_of("lilypond-learning.info.gz") == \
        pdf["lilypond-doc-pdf"].group_of("learning.pdf") == \
        SOURCES["lilypond-doc-html-zh"].group_of("learning-big-page.zh.html")
    assert SOURCES["kicad-doc-zh"].group_of("pcbnew.html") == SOURCES["kicad-doc-en"].group_of("pcbnew.html")
    assert SOURCES["konsole"].group_of("zh_CN/konsole/index.docbook") == SOURCES["konsole"].group_of(
        "en/konsole/index.docbook")
    assert SOURCES["python3.11-doc"].group_of("library/os.rst.txt") == ""  # the original sources: per document


def test_detect_lang_ignores_code():
    zh = "这是中文说明，足够长。" * 3
    assert detect_lang(zh + "\n```\n" + "code_line = value\n" * 50 + "```\n") == "zh"


def test_docbook_xinclude_and_external_dtd(tmp_path):
    """GnuCash's layout: chapters pulled in with XInclude, the application's name in a DTD included by a DTD."""
    (tmp_path / "top.dtd").write_text('<!ENTITY % inner SYSTEM "inner.dtd">\n%inner;\n<!ENTITY % gm.x "<b>">',
                                      encoding="utf-8")
    (tmp_path / "inner.dtd").write_text('<!ENTITY series "4">\n<!ENTITY app "GnuCash">\n<!ENTITY vers "&series;.13">',
                                        encoding="utf-8")
    (tmp_path / "ch_one.xml").write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE chapter SYSTEM "top.dtd">\n<chapter><title>Basics of &app;</title>'
        '<para>Version &vers;.</para><sect1><title>Accounts</title><tip><para>Save often.</para></tip>'
        '<figure><title>The account tree</title><screenshot/></figure></sect1></chapter>', encoding="utf-8")
    xml = ('<?xml version="1.0"?>\n<!DOCTYPE book SYSTEM "top.dtd">\n<book xmlns:xi="http://www.w3.org/2001/XInclude">'
           '<bookinfo><title>&app; Guide</title></bookinfo><xi:include href="ch_one.xml" />'
           '<xi:include href="missing.xml"/></book>')
    found, md = heads(docbook_items(xml, str(tmp_path)))
    assert found == [(1, "Basics of GnuCash"), (2, "Accounts")]
    assert "Version 4.13." in md and "Save often." in md
    assert "The account tree" in md  # a figure title is a plain line, never a heading


# -- real PDFs: language gate, gzipped PDFs, exclusions -------------------------------------------------


def _outlined_pdf(path, paragraphs: list[str]) -> None:
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    for n, text in enumerate(paragraphs):
        c.drawString(72, 760, f"Heading {n}")
        words = text.split()
        for k in range(0, len(words), 12):
            c.drawString(72, 740 - 14 * (k // 12), " ".join(words[k : k + 12]))
        c.bookmarkPage(f"p{n}")
        c.addOutlineEntry(f"Heading {n}", f"p{n}", level=min(n, 1))
        c.showPage()
    c.save()


def test_text_lang_keeps_english_and_chinese_only():
    from hichunk.models.train.corpus.real import text_lang

    assert text_lang("The manual explains how to use the program and what it is for. " * 30) == "en"
    assert text_lang("Le manuel explique comment utiliser le programme et à quoi il sert. " * 30) is None
    assert text_lang("本手册介绍如何使用这个程序，以及它的用途。" * 30) == "zh"
    assert text_lang("このマニュアルはプログラムの使い方を説明します。" * 30) is None
    assert text_lang("too short") is None


def test_real_pdfs_gunzip_skip_other_languages_and_exclusions(tmp_path):
    import gzip

    from hichunk.models.train.corpus.debian import FetchedPackage, PackageSpec
    from hichunk.models.train.corpus.real import real_pdfs

    root = tmp_path / "tree/usr/share/doc/x"
    (root / "latex/oberdiek").mkdir(parents=True)
    english = ["The manual explains how to use the program and what it is for, in the order of a first reading. " * 8] * 3
    french = ["Le manuel explique comment utiliser le programme et à quoi il sert, dans l'ordre d'une lecture. " * 8] * 3
    _outlined_pdf(root / "guide.pdf", english)
    _outlined_pdf(root / "guide-fr-text.pdf", french)
    _outlined_pdf(root / "latex/oberdiek/code.pdf", english)
    _outlined_pdf(tmp_path / "help.pdf", english)
    (root / "help-en.pdf.gz").write_bytes(gzip.compress((tmp_path / "help.pdf").read_bytes()))
    spec = PackageSpec("x-doc", "", "usr/share/doc/x", ("**/*.pdf", "*.pdf.gz"), "pdf", exclude=("latex/oberdiek/*",),
                       group_pattern=r"([a-z]+)[^/]*\.pdf", group_prefix="manual:")
    labels = real_pdfs(FetchedPackage(spec, "1", "x.deb", str(tmp_path / "tree")), str(tmp_path / "out"))
    assert sorted(lb.source_id for lb in labels) == ["x-doc/guide.pdf", "x-doc/help-en.pdf"]
    for lb in labels:
        assert lb.lang == "en" and lb.style["pages"] == 3 and len(lb.headings) == 3
        assert (tmp_path / "out" / lb.path).read_bytes().startswith(b"%PDF")
    assert len(list((tmp_path / "out").rglob("*.pdf"))) == 2  # skipped PDFs leave no copy behind


def test_new_sources_have_families_and_pdf_groups_match_their_corpus_twins():
    from hichunk.models.train.corpus.families import family_of

    assert family_of("exim4-doc-info") == "exim"
    assert family_of("nodejieba") == "jieba"
    pdf = {s.name: s for s in REAL_PDFS}
    assert SOURCES["gnucash-docs"].group_of("gnucash-guide/index.docbook") == \
        pdf["gnucash-docs"].group_of("gnucash-guide-en.pdf.gz") == "manual:gnucash-guide"
    assert SOURCES["gnuplot-doc"].group_of("gnuplot.info.gz") == pdf["gnuplot-doc"].group_of("gnuplot.pdf")
    assert SOURCES["texlive-lang-cjk"].group_of("xelatex/xecjk/xeCJK.tex") == \
        pdf["texlive-lang-cjk"].group_of("xelatex/xecjk/xeCJK.pdf")
    assert SOURCES["texlive-publishers-doc"].group_of("thuthesis/data/chap01.tex") == \
        pdf["texlive-publishers-doc"].group_of("latex/thuthesis/thuthesis.pdf") == "texlive:latex/thuthesis"
