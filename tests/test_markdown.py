from hypothesis import given, settings
from hypothesis import strategies as st

from hichunk.document import parse_document
from hichunk.document.markdown import (
    FENCE,
    SETEXT,
    _raw_lines,
    _scan_headings,
    front_matter_end,
    markdown_heading_level,
    parse_markdown,
    parse_text,
    split_raw_lines,
)
from hichunk.document.model import Line


def headings(doc):
    return [(doc.lines[i].text, level) for i, level in doc.headings]


def test_atx_headings_and_code_fences(guide_md):
    doc = parse_document(guide_md, "markdown")
    assert doc.clean == guide_md and doc.raw_offset(5) == 5
    assert headings(doc) == [("# Guide", 1), ("## Install", 2), ("## Use", 2), ("### Basics", 3), ("# Appendix", 1)]


def test_shell_comment_in_code_block_is_not_a_heading():
    doc = parse_document("~~~~\n# not a heading\n~~~\n# still code\n~~~~\n# Real\n", "markdown")
    assert headings(doc) == [("# Real", 1)]


def test_hashtags_and_deep_markers():
    doc = parse_document("#hashtag\n####### seven\n########### eleven\n", "markdown")
    assert headings(doc) == [("####### seven", 7)]


def test_setext_headings_become_atx_in_clean_view():
    text = "Title\n=====\n\nPara line.\n\nSub\n---\nbody\n"
    doc = parse_document(text, "markdown")
    assert doc.clean == "# Title\n\nPara line.\n\n## Sub\nbody\n"
    assert headings(doc) == [("# Title", 1), ("## Sub", 2)]
    sub = doc.lines[4]
    assert text[doc.raw_offset(sub.clean_start) : doc.raw_offset(doc.lines[5].clean_start)] == "Sub\n---\n"


def test_crlf_bom_and_tabs_are_kept_in_raw_text():
    text = "\ufeff# Title\r\n\r\n\tIndented\tline\r\n"
    doc = parse_document(text, "markdown")
    assert doc.text == text
    assert doc.lines[0].text == "# Title" and doc.lines[0].heading == 1
    assert doc.raw_offset(0) == 0 and doc.raw_offset(len(doc.clean)) == len(text)


def test_front_matter_is_not_read_for_headings():
    text = "---\ntitle: Cron jobs\n# a YAML comment\nread_when:\n  - Deciding between heartbeat and cron\n---\n\n# Cron jobs\nbody\n"
    doc = parse_document(text, "markdown")
    assert doc.clean == text and headings(doc) == [("# Cron jobs", 1)]
    assert headings(parse_document("+++\ntitle = 'x'\n+++\nTitle\n=====\n", "markdown")) == [("# Title", 1)]
    assert headings(parse_document("---\ntitle: x\n...\n## A\n", "markdown")) == [("## A", 2)]


def test_a_rule_and_a_setext_underline_are_not_front_matter():
    # no key on the first line: a thematic break, then a paragraph with a setext underline
    assert headings(parse_document("---\n\nIntro\n---\n", "markdown")) == [("## Intro", 2)]
    # never closed: not front matter, the lines are read as usual
    assert headings(parse_document("---\ntitle: x\n# Real\n", "markdown")) == [("# Real", 1)]
    assert front_matter_end(["x", "---"]) == -1 and front_matter_end(["---", "a: 1", "---"]) == 2


def test_plain_text_has_no_heading_hints():
    doc = parse_document("# looks like a heading\nbut plain text\n", "text")
    assert doc.headings == []


def scan_every_line(body, raw_spans):
    """The heading scan read line by line: the rules ``_scan_headings`` applies to the lines it reads."""
    levels, setext_under, fence, prev_paragraph = {}, set(), None, False
    matter = front_matter_end([body[s:e] for s, e in raw_spans])
    for i, (s, e) in enumerate(raw_spans):
        line = body[s:e]
        if i <= matter:
            continue
        m = FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end():].strip():
                fence = None
            prev_paragraph = False
        elif m:
            fence, prev_paragraph = m.group(1), False
        elif markdown_heading_level(line):
            levels[i], prev_paragraph = markdown_heading_level(line), False
        elif (under := SETEXT.match(line)) and prev_paragraph and i - 1 not in levels and i - 1 not in setext_under:
            levels[i - 1] = 1 if under.group(1)[0] == "=" else 2
            setext_under.add(i)
            prev_paragraph = False
        else:
            prev_paragraph = bool(line.strip()) and not line.startswith("    ")
    return levels, setext_under


LINES = ["```", "~~~", "````", "``` py", "~~~ ", "# h", "## h", "   # x", "    # code", "#tag", "===", "---", " -- ",
         "- item", "text", "", "  ", "    indented", "\tx", "= x", "\r", "text\r", "---\r", "title: x", "..."]


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(st.sampled_from(LINES), max_size=30))
def test_the_heading_scan_reads_only_marked_lines_and_finds_what_a_line_by_line_scan_finds(lines):
    body = "\n".join(lines)
    spans = split_raw_lines(body)
    starts, _, contents = _raw_lines(body)
    assert _scan_headings(body, starts, contents) == scan_every_line(body, spans)


def previous_split_raw_lines(text):
    """``split_raw_lines`` as it was: one ``find`` per line."""
    spans = []
    start, n = 0, len(text)
    while True:
        nl = text.find("\n", start)
        end = n if nl < 0 else nl
        content_end = end - 1 if end > start and text[end - 1] == "\r" else end
        spans.append((start, content_end))
        if nl < 0:
            return spans
        start = nl + 1


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LINES + ["", "\r", "a\r", "\r\r", "  ", "x\ry", "\u2028", "\ufeff# T"]), max_size=30),
       st.sampled_from(["\n", "\r\n"]))
def test_lines_are_split_as_by_the_previous_loop_and_made_as_by_the_line_constructor(lines, newline):
    body = newline.join(lines)
    assert split_raw_lines(body) == previous_split_raw_lines(body)
    starts, ends, contents = _raw_lines(body)
    assert contents == [body[s:e] for s, e in zip(starts, ends)]
    doc = parse_markdown(body)
    if doc.clean == body.removeprefix("\ufeff"):  # no setext heading rewritten
        clean = doc.clean
        levels = dict(doc.headings)
        assert doc.lines == [Line(s, e, clean[s:e], levels.get(i)) for i, (s, e) in enumerate(previous_split_raw_lines(clean))]
    clean = body.removeprefix("\ufeff")
    assert parse_text(body).lines == [Line(s, e, clean[s:e]) for s, e in previous_split_raw_lines(clean)]
