"""HTML parsing: Markdown structure first, tags stripped, entities decoded last."""

from __future__ import annotations

import html

from doc_checks import check_line_text_in_span, check_structure
from hypothesis import given, settings
from hypothesis import strategies as st

from hichunk.document import parse_document
from hichunk.document.html import html_title, parse_html


def lines(doc):
    return [(line.text, line.heading) for line in doc.lines]


def test_headings_paragraphs_lists():
    doc = parse_html(
        "<html><head><title>T &amp; t</title><style>h1 {}</style></head><body>"
        "<h1>Hello <b>World</b></h1><p>Para  one\n text &amp; more.</p>"
        "<ul><li>a</li><li>b<ul><li>c</li></ul></li></ul>"
        "<h3 id='x'>Deep</h3><p>end</p></body></html>"
    )
    assert doc.clean == (
        "# Hello World\n\nPara one text & more.\n\n- a\n- b\n  - c\n\n### Deep\n\nend"
    )
    assert doc.headings == [(0, 1), (8, 3)]
    assert doc.format == "html"
    check_structure(doc)


def test_escaped_markup_stays_text():
    doc = parse_html("<p>&lt;h1&gt;x&lt;/h1&gt;</p>")
    assert doc.clean == "<h1>x</h1>"
    assert doc.headings == []


def test_pre_is_fenced_and_verbatim():
    doc = parse_html("<p>Run:</p><pre>\n# install\npip  install <b>x</b>\n\n  indented &lt;y&gt;\n</pre><h2>Next</h2>")
    assert doc.clean == "Run:\n\n```\n# install\npip  install x\n\n  indented <y>\n```\n\n## Next"
    assert doc.headings == [(9, 2)]
    assert all(line.heading is None for line in doc.lines if line.text.startswith("# "))
    check_structure(doc)


def test_pre_with_backticks_gets_longer_fence():
    doc = parse_html("<pre>```\ncode</pre>")
    assert doc.clean == "````\n```\ncode\n````"


def test_title_is_metadata_not_heading():
    text = "<html><head><title>My  page</title></head><body><p>x</p></body></html>"
    assert html_title(text) == "My page"
    assert parse_html(text).clean == "x"
    assert html_title("<p>none</p>") is None


def test_dropped_content():
    doc = parse_html(
        "<body><script>var a = '<h1>no</h1>';</script><!-- <h2>c</h2> -->"
        "<noscript>n</noscript><template><p>t</p></template><nav><a>Home</a></nav>"
        "<div role='navigation'>menu</div><header>site</header>"
        "<article><header><h1>Kept</h1></header><p>body</p></article>"
        "<footer>foot</footer></body>"
    )
    assert doc.clean == "# Kept\n\nbody"


def test_sphinx_headerlink_and_extra_drops():
    doc = parse_html(
        '<div id="hd"><h1>Site docs</h1></div>'
        '<h1>Models<a class="headerlink" href="#m">\u00b6</a></h1><p>x</p>',
        drop_ids={"hd"},
    )
    assert lines(doc) == [("# Models", 1), ("", None), ("x", None)]
    kept = parse_html("<nav>menu</nav><p>x</p>", boilerplate=False)
    assert kept.clean == "menu\n\nx"


def test_table_cells_joined():
    doc = parse_html("<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2 <i>z</i></td></tr></table>")
    assert doc.clean == "a | b\n1 | 2 z"


def test_malformed_inputs():
    assert parse_html("a < b > c").clean == "a < b > c"
    assert parse_html('<A HREF="x>y">Link</A> <![CDATA[raw <b>]]>').clean == "Link raw <b>"
    assert lines(parse_html("<h2>unclosed<p>body")) == [("## unclosed", 2), ("", None), ("body", None)]
    assert parse_html("<nav>never closed<p>text").clean == "never closed\n\ntext"
    assert parse_html("<script>unclosed <p>x").clean == "unclosed\n\nx"
    assert parse_html("<!-- unclosed comment").clean == "<!-- unclosed comment"
    assert parse_html("").clean == ""
    assert parse_html("<p></p><div> </div>").clean == ""
    assert parse_html("<H1>Up</H1>").headings == [(0, 1)]


def test_line_starts_carry_opening_tags():
    text = '<p>one</p>\n<div class="c"><p>two</p></div>'
    doc = parse_html(text)
    assert doc.clean == "one\n\ntwo"
    two = doc.lines[2]
    assert text[doc.raw_offset(two.clean_start) :].startswith('<div class="c">')
    assert text[: doc.raw_offset(two.clean_start)].endswith("</p>\n")


def test_copied_text_maps_exactly():
    text = "<p>Hello <b>big</b> world</p>"
    doc = parse_html(text)
    i = doc.clean.index("world")
    assert text[doc.raw_offset(i) :].startswith("world")
    i = doc.clean.index("big")
    assert text[doc.raw_offset(i) :].startswith("big")


def test_heading_line_span_contains_tag():
    text = "<p>intro</p><section><h2 class='t'>Title</h2><p>body</p></section>"
    doc = parse_html(text)
    (idx, level), = doc.headings
    assert level == 2
    assert text[doc.raw_offset(doc.lines[idx].clean_start) :].startswith("<section><h2")


def test_loader_dispatch():
    doc = parse_document("<h1>T</h1>", "html", "x.html")
    assert doc.name == "x.html" and doc.headings == [(0, 1)]


def test_long_single_line_is_fast_enough():
    body = "<p>" + "word &amp; " * 50_000 + "</p>"
    doc = parse_html(body)
    assert doc.clean.count("&") == 50_000


def _visible(raw: str) -> str:
    return html.unescape(raw)


TAGS = ["p", "div", "h1", "h2", "h3", "li", "ul", "pre", "b", "a", "br", "table", "tr", "td",
        "script", "nav", "span", "section", "header", "title", "head", "body", "style"]
pieces = st.one_of(
    st.sampled_from([f"<{t}>" for t in TAGS] + [f"</{t}>" for t in TAGS]),
    st.sampled_from(["&amp;", "&lt;", "&#35;", "&nbsp;", "&bogus;", "<!--", "-->", "<![CDATA[", "]]>",
                     "<a href='>'>", "\n", "  ", "\t", "<", ">", "&", "\r\n", "# x", "```", "<br/>", "<H2 A=\"b\">"]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(pieces, max_size=40).map("".join))
def test_invariants_on_adversarial_html(text):
    doc = parse_html(text)
    check_structure(doc)
    check_line_text_in_span(doc, _visible, ignore="#-|`")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_invariants_on_random_text(text):
    doc = parse_html(text)
    check_structure(doc)
    check_line_text_in_span(doc, _visible, ignore="#-|`")


def test_plain_heading_classes():
    text = '<h1>T</h1><div class="note"><h3 class="title">Note</h3><p>n</p></div><h2>U</h2>'
    doc = parse_html(text, plain_heading_classes={"note"})
    assert lines(doc) == [("# T", 1), ("", None), ("Note", None), ("", None), ("n", None), ("", None), ("## U", 2)]
    assert parse_html(text).headings == [(0, 1), (2, 3), (6, 2)]


def test_list_items_with_paragraphs_stay_together():
    doc = parse_html("<p>x</p><ul><li><p>a</p></li><li><p>b</p></li></ul><p>y</p>")
    assert doc.clean == "x\n\n- a\n- b\n\ny"
    assert parse_html("<ul><li>a<li>b<ul><li>c</li></ul></li><li>d</li></ul>").clean == "- a\n- b\n  - c\n- d"
