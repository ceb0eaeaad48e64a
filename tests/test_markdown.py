from hichunk.document import parse_document


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


def test_plain_text_has_no_heading_hints():
    doc = parse_document("# looks like a heading\nbut plain text\n", "text")
    assert doc.headings == []
