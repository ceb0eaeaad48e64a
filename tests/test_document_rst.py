"""reST parsing: section levels from adornment styles, in order of first appearance."""

from __future__ import annotations

from doc_checks import check_line_text_in_span, check_structure, line_spans
from hypothesis import given, settings
from hypothesis import strategies as st

from hichunk.document.rst import parse_rst

SAMPLE = """\
=========
 Title
=========

Intro text.

Section A
=========

Para::

   # install
   ----------

Sub a.1
-------

.. code-block:: sh

   # also not a heading
   ==================

.. note::

   Note body
   ---------

Section B
=========

----------

Sub b.1
-------

Deep
~~~~

text
"""


def test_levels_follow_first_appearance():
    doc = parse_rst(SAMPLE)
    got = [(doc.lines[i].text, level) for i, level in doc.headings]
    assert got == [
        ("# Title", 1),
        ("## Section A", 2),
        ("### Sub a.1", 3),
        ("## Section B", 2),
        ("### Sub b.1", 3),
        ("#### Deep", 4),
    ]
    assert doc.format == "rst"
    check_structure(doc)


def test_adornments_fold_into_heading_span():
    doc = parse_rst(SAMPLE)
    spans = line_spans(doc)
    first = spans[doc.headings[0][0]]
    assert SAMPLE[first[0] : first[1]] == "=========\n Title\n=========\n"
    idx = doc.headings[1][0]
    s, e = spans[idx]
    assert SAMPLE[s:e] == "Section A\n=========\n"
    assert "\n=========\n" not in doc.clean


def test_literal_and_directive_bodies_are_text():
    doc = parse_rst(SAMPLE)
    texts = {line.text: line.heading for line in doc.lines}
    assert texts["   # install"] is None
    assert texts["   # also not a heading"] is None
    assert texts["   ----------"] is None
    assert texts["   Note body"] is None


def test_transition_is_not_heading():
    doc = parse_rst("Para one.\n\n----------\n\nPara two.\n")
    assert doc.headings == []
    assert doc.clean == "Para one.\n\n----------\n\nPara two.\n"


def test_overline_style_differs_from_underline_only():
    text = "Top\n===\n\n===\nMid\n===\n\nLow\n---\n"
    doc = parse_rst(text)
    assert [level for _, level in doc.headings] == [1, 2, 3]


def test_short_underline_rules():
    assert parse_rst("Long title here\n---\n").headings == []
    assert parse_rst("Long title here\n----\n").headings == [(0, 1)]
    assert parse_rst("Hi\n--\n").headings == [(0, 1)]


def test_title_must_start_paragraph():
    doc = parse_rst("line one\nline two\n--------\n")
    assert doc.headings == []


def test_mismatched_overline_is_text():
    doc = parse_rst("=====\nTitle\n-----\n")
    assert doc.headings == []


def test_cjk_width():
    assert parse_rst("中文标题\n========\n").headings == [(0, 1)]
    assert parse_rst("中文标题\n===\n").headings == []


def test_clean_keeps_other_text_unchanged():
    text = "A :ref:`x <y>` line.\r\n\r\nTitle\r\n=====\r\nBody\r\n"
    doc = parse_rst(text)
    assert doc.clean == "A :ref:`x <y>` line.\n\n# Title\nBody\n"


def test_empty_and_bom():
    assert parse_rst("").clean == ""
    doc = parse_rst("\ufeffT\n=\n")
    check_structure(doc)


lines_st = st.lists(
    st.one_of(
        st.sampled_from(["", "Title", "  indented", "----", "====", "~~", "Para::", ".. note::", "# x", "::", "-", "中文"]),
        st.text(alphabet="=-~#*+: ab\t", max_size=12),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(lines_st, st.sampled_from(["\n", "\r\n"]))
def test_invariants(lines, eol):
    text = eol.join(lines)
    doc = parse_rst(text)
    check_structure(doc)
    check_line_text_in_span(doc, lambda raw: raw, ignore="#")
    for i, level in doc.headings:
        assert doc.lines[i].text.startswith("#" * level + " ")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_invariants_random(text):
    doc = parse_rst(text)
    check_structure(doc)
    check_line_text_in_span(doc, lambda raw: raw, ignore="#")
