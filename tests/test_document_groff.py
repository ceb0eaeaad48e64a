"""groff man pages: .TH/.SH/.SS headings, escapes decoded, no-fill blocks fenced."""

from __future__ import annotations

from doc_checks import check_line_text_in_span, check_structure
from hypothesis import given, settings
from hypothesis import strategies as st

from hichunk.document import parse_document
from hichunk.document.groff import NAMED, SIMPLE, STRINGS, parse_groff

# every character an escape can decode to (\(ba is "|", \(lB is "["): such characters come from no raw letter
DECODED = "".join(sorted({ch for table in (NAMED, STRINGS, SIMPLE) for ch in "".join(table.values())}))

PAGE = r""".\" a comment line
.TH LS 1 "2020-01-01" "GNU" "User Commands"
.SH NAME
ls \- 列出目录内容
.SH SYNOPSIS
.B ls
[\fIOPTION\fR]... [\fIFILE\fR]...
.SH "DESCRIPTION 描述"
.PP
列出 FILE 的信息\(em默认为当前目录。 \" trailing comment
.SS Options
.TP
.BR \-a ", " \-\-all
不隐藏以 . 开头的项目。
.nf
# install
make   install
.fi
.SH
SEE ALSO
\fBdir\fP(1)
"""


def test_page_structure():
    doc = parse_groff(PAGE)
    assert doc.clean == (
        "# LS(1)\n\n## NAME\n\nls - 列出目录内容\n\n## SYNOPSIS\n\nls\n[OPTION]... [FILE]...\n\n"
        "## DESCRIPTION 描述\n\n列出 FILE 的信息\u2014默认为当前目录。 \n\n### Options\n\n"
        "-a, --all\n不隐藏以 . 开头的项目。\n\n```\n# install\nmake   install\n```\n\n## SEE ALSO\n\ndir(1)"
    )
    got = [(doc.lines[i].text, level) for i, level in doc.headings]
    assert got == [
        ("# LS(1)", 1),
        ("## NAME", 2),
        ("## SYNOPSIS", 2),
        ("## DESCRIPTION 描述", 2),
        ("### Options", 3),
        ("## SEE ALSO", 2),
    ]
    assert doc.format == "groff"
    check_structure(doc)


def test_shell_comment_in_nofill_is_not_heading():
    doc = parse_groff(PAGE)
    (line,) = [ln for ln in doc.lines if ln.text == "# install"]
    assert line.heading is None


def test_heading_starts_at_request():
    doc = parse_groff(PAGE)
    idx = [i for i, _ in doc.headings][1]
    assert PAGE[doc.raw_offset(doc.lines[idx].clean_start) :].startswith(".SH NAME")


def test_escapes():
    doc = parse_groff(r"a\-b \e \(lqq\(rq \[u4E2D] \*(lqs\*(rq \s+2big\s0 \&.x \fB\f(CWmono\fP" + "\n")
    assert doc.clean == "a-b \\ \u201cq\u201d \u4e2d \u201cs\u201d big .x mono"


def test_macro_definition_and_table():
    doc = parse_groff(".de XX\n.B hidden\n..\n.TS\ntab(;);\nl l.\na;b\n.TE\ntext\n")
    assert doc.clean == "a;b\n\ntext"


def test_mdoc_headings():
    doc = parse_groff(".Dt CAT 1\n.Sh NAME\n.Nm cat\n.Nd concatenate\n.Sh DESCRIPTION\ntext\n")
    assert [(doc.lines[i].text, lv) for i, lv in doc.headings] == [("# CAT(1)", 1), ("## NAME", 2), ("## DESCRIPTION", 2)]


def test_loader_reads_gzip(tmp_path):
    import gzip

    from hichunk.document import load_document

    path = tmp_path / "ls.1.gz"
    path.write_bytes(gzip.compress(PAGE.encode("utf-8")))
    doc = load_document(str(path))
    assert doc.format == "groff" and doc.headings[0] == (0, 1)
    assert parse_document(PAGE, "groff").clean == doc.clean


requests = st.sampled_from(
    [".TH A 1", ".SH", ".SH NAME", ".SS sub", ".PP", ".TP", ".IP x", ".B bold", ".BR a b", ".nf", ".fi",
     ".de X", "..", ".TS", ".TE", ".\\\" c", "'br", ".", "# x", "\\fBb\\fR", "\\(em", "\\", "\\[u12",
     "\\*(lq", "\"q\"", "", "  lead", "中文 文本", ".I \"a b\" c"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(requests, st.text(alphabet="\\.\"' abfBIR(-[]#", max_size=10)), max_size=30))
def test_invariants(lines):
    doc = parse_groff("\n".join(lines))
    check_structure(doc)
    # copied characters come from the line's span; escapes decode to new characters,
    # so only plain letters are checked
    check_line_text_in_span(doc, lambda raw: raw, ignore="#()`-\\ " + DECODED)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_invariants_random(text):
    doc = parse_groff(text)
    check_structure(doc)
