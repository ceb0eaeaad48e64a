"""Reading every kind of input: look-alike characters, two-line headings, running heads with titles,
plain-text tables of contents, callouts and captions, PDF bookmarks as hints (issue 17, parts 3 and 4)."""

from __future__ import annotations

import pytest
from engine_doubles import ScriptedModel, oracle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hichunk.chunkers import ChunkOptions, chunk_document
from hichunk.document import parse_document
from hichunk.document.roles import heading_continuation, is_aside, toc_lines
from hichunk.engine import model_units
from hichunk.engine.outline import heading_style, title_shaped
from hichunk.models.prompt import format_answer
from hichunk.numbering import is_label, number_pattern, strip_heading_number
from hichunk.protocol import ChunkStart
from hichunk.sentences import split_sentences
from hichunk.textnorm import fold, fold_spaces

BODY_EN = "The body of this part says what it is about in plain words. It goes on for a while.\n"
BODY_ZH = "这是正文的第一句话，讲述了一些内容。这里还有第二句话。\n"


def units_of(text: str, fmt: str = "text"):
    doc = parse_document(text, fmt)
    return doc, model_units(doc, split_sentences(doc))


def everywhere(level: int = 1):
    """A model that starts a titled chunk on every line of every window."""
    return lambda window: format_answer(ChunkStart(i, level, True) for i in range(len(window.lines)))


def chunk(text: str, model, fmt: str = "text", hints: str = "ignore", tokenizer=None):
    opts = ChunkOptions(hints=hints, merge_over_chunk=False, **({"tokenizer": tokenizer} if tokenizer else {}))
    return chunk_document(parse_document(text, fmt, "doc"), "hichunk", opts, model=model)


# -- look-alike characters -------------------------------------------------------------------

@given(st.text(max_size=60))
def test_fold_keeps_length_and_is_idempotent(text):
    assert len(fold(text)) == len(text) == len(fold_spaces(text))
    assert fold(fold(text)) == fold(text)


def test_no_break_and_full_width_spellings_read_like_plain_ones():
    assert fold("第\u00a01\u00a0章\u3000ＧＮＵ／Ｌｉｎｕｘ") == "第 1 章 GNU/Linux"
    for plain, odd in [("第 1 章 GNU/Linux 教程", "第\u00a01\u00a0章\u00a0GNU/Linux 教程"), ("1.2 Setup", "１．２\u00a0Setup"),
                       ("Chapter 3: Usage", "Ｃｈａｐｔｅｒ\u00a03：Usage")]:
        assert number_pattern(odd) == number_pattern(plain) is not None
        assert fold(strip_heading_number(odd)) == strip_heading_number(plain)
        assert heading_style(odd) == heading_style(plain)
    assert number_pattern("（1）概述") == number_pattern("（a）概述") == "zh-paren"  # the width of the brackets still tells
    assert number_pattern("(1) Scope") == "paren"


def test_a_chapter_line_with_no_break_spaces_is_shown_and_chunked_like_one_with_spaces():
    def book(space: str) -> str:
        return "".join(f"第{space}{c}{space}章{space}GNU/Linux 教程\n\n{BODY_ZH}\n{c}.1{space}控制台\n\n{BODY_ZH}\n"
                       for c in range(1, 4))

    plain, odd = book(" "), book("\u00a0")
    assert [u.text for u in units_of(odd)[1]] == [u.text for u in units_of(plain)[1]]
    levels = {f"第 {c} 章 GNU/Linux 教程": 1 for c in range(1, 4)} | {f"{c}.1 控制台": 2 for c in range(1, 4)}
    tree = chunk(odd, ScriptedModel(oracle(levels), window_tokens=400))
    assert "".join(t for t, _ in tree.split_texts()) == odd
    assert [(t.split("\n")[0], lv) for t, lv in tree.split_texts()] == [
        (f"第\u00a0{c}\u00a0章\u00a0GNU/Linux 教程", 1) if k == 0 else (f"{c}.1\u00a0控制台", 2) for c in range(1, 4) for k in (0, 1)]


# -- a label line and its title line -----------------------------------------------------------

LABELLED = (f"Chapter 1\n\nGetting Started\n\n{BODY_EN}\nCHAPTER 2\nInstalling the System\n\n{BODY_EN}\n"
            f"Part II\n\nAppendix A\n\nReference Tables\n\n{BODY_EN}\n第 3 章\n\n基本概念\n\n{BODY_ZH}")


def test_an_html_anchor_without_a_link_reads_as_its_text():
    """``## Rules<a id="rules"></a>`` renders as "Rules", ``<a id="intro">1.</a> Introduction`` as "1.
    Introduction": the model reads what a reader sees; the clean text and the chunks keep the anchor."""
    text = ('# Tool\n\nIntro.\n\n## Rules<a id="rules"></a>\n\nBody.\n\n<a name="faq"/>FAQ\n\nMore.\n\n'
            '## <a id="intro">1.</a> Introduction\n\nText.\n')
    doc, units = units_of(text, "markdown")
    assert [u.text for u in units] == ["Tool", "Intro.", "Rules", "Body.", "FAQ", "More.", "1. Introduction", "Text."]
    assert '<a id="rules"></a>' in doc.clean
    _, kept = units_of('Read <a href="x">the guide</a> first.\n')
    assert kept[0].text == 'Read <a href="x">the guide</a> first.'  # a link with text is text


def test_a_label_line_and_its_title_line_are_one_unit_starting_at_the_label():
    doc, units = units_of(LABELLED)
    shown = [u.text for u in units]
    assert "Chapter 1 Getting Started" in shown and "CHAPTER 2 Installing the System" in shown
    assert "Appendix A Reference Tables" in shown and "第 3 章 基本概念" in shown
    assert "Part II" in shown  # a label followed by another label stands alone
    for u in units:
        if u.text.startswith(("Chapter 1", "CHAPTER 2", "第 3 章")):
            assert doc.clean.startswith(u.text.split()[0], u.offset)  # the unit starts at the label
    for word in ("Chapter 3", "Part II", "Appendix A.", "第 1 章", "第三章", "CHAPTER IV:"):
        assert is_label(word), word
    for title in ("Chapter 3 Usage", "3 Usage", "Chapters", "第三章 总则"):
        assert not is_label(title), title


def test_a_label_and_title_heading_is_one_chunk_titled_with_both_lines(tokenizer):
    levels = {"Chapter 1 Getting Started": 1, "CHAPTER 2 Installing the System": 1, "第 3 章 基本概念": 1}
    tree = chunk(LABELLED, ScriptedModel(oracle(levels), window_tokens=400), tokenizer=tokenizer)
    starts = [t for t, _ in tree.split_texts()]
    assert "".join(starts) == LABELLED
    assert [s.split("\n")[0] for s in starts] == ["Chapter 1", "CHAPTER 2", "第 3 章"]
    titles = [n.title for n in tree.nodes if n.kind in ("chunk", "section") and n.title]
    assert titles == ["Chapter 1 Getting Started", "CHAPTER 2 Installing the System", "第 3 章 基本概念"]


def test_a_label_before_running_text_stays_a_line_of_its_own():
    text = f"Chapter 1\n\nIn this chapter we look at the whole system and what it does for you.\n\n{BODY_EN}"
    doc, units = units_of(text)
    assert units[0].text == "Chapter 1" and heading_continuation(doc, 0) is None


# -- a heading wrapped onto two lines -----------------------------------------------------------

WRAPPED = ("1.3 OK, now I know what Debian is and what it does for me... what is\nLinux?\n\n" + BODY_EN
           + "\nThis paragraph is short enough to sit on two lines of the page, but it\nends like a sentence.\n\n"
           + "1.4 Where the installer keeps its logs, and how to read them when\nsomething fails\n\n" + BODY_EN)


def test_a_wrapped_heading_is_one_unit_and_a_two_line_paragraph_is_not():
    doc, units = units_of(WRAPPED)
    shown = [u.text for u in units]
    assert "1.3 OK, now I know what Debian is and what it does for me... what is Linux?" in shown
    assert "1.4 Where the installer keeps its logs, and how to read them when something fails" in shown
    assert "This paragraph is short enough to sit on two lines of the page, but it" in shown
    assert title_shaped("1.3 OK, now I know what Debian is and what it does for me... what is Linux?")  # a question


def test_a_wrapped_heading_starts_one_chunk_with_a_two_line_title(tokenizer):
    title = "1.3 OK, now I know what Debian is and what it does for me... what is Linux?"
    tree = chunk(WRAPPED, ScriptedModel(oracle({title: 2}), window_tokens=400), tokenizer=tokenizer)
    assert "".join(t for t, _ in tree.split_texts()) == WRAPPED
    # the model found 1.3; 1.4, a wrapped heading too, continues its numbers (hichunk.engine.numbered)
    following = "1.4 Where the installer keeps its logs, and how to read them when something fails"
    assert [n.title for n in tree.nodes if n.title] == [title, following]


# -- tables of contents in plain text --------------------------------------------------------

TOC_TEXT = ("Manual of Things\n\nContents\n\n1 Introduction ........ 3\n    1.1 Scope ........ 4\n2 Usage ........ 7\n\n\n"
            f"1 Introduction\n\n{BODY_EN}\n1.1 Scope\n\n{BODY_EN}\n2 Usage\n\n{BODY_EN}")
TOC_ZH = f"目录\n\n第一章 总则\n    第一节 范围\n第二章 附则\n\n第一章 总则\n\n{BODY_ZH}\n第二章 附则\n\n{BODY_ZH}"
TOC_COLUMN = f"Overview   1\nInstalling   4\nRunning the tools   9\n\nOverview\n\n{BODY_EN}"


def test_plain_text_toc_blocks_are_found_and_the_body_after_them_is_not():
    doc = parse_document(TOC_TEXT, "text")
    found = sorted(doc.lines[i].text for i in toc_lines(doc))
    assert found == sorted(["Contents", "1 Introduction ........ 3", "    1.1 Scope ........ 4", "2 Usage ........ 7"])
    doc = parse_document(TOC_ZH, "text")
    assert sorted(toc_lines(doc)) == [0, 2, 3, 4]  # the title and its three entries; the body's 第一章 is not one
    doc = parse_document(TOC_COLUMN, "text")
    assert sorted(toc_lines(doc)) == [0, 1, 2]
    assert not toc_lines(parse_document(f"Contents\n\n{BODY_EN}\nMore text follows here, a sentence.\n", "text"))


@pytest.mark.parametrize("text", [TOC_TEXT, TOC_ZH, TOC_COLUMN])
def test_toc_lines_are_never_split_points_whatever_the_model_says(text, tokenizer):
    doc = parse_document(text, "text")
    toc = {doc.lines[i].clean_start for i in toc_lines(doc)}
    tree = chunk(text, ScriptedModel(everywhere(), window_tokens=400), tokenizer=tokenizer)
    assert "".join(t for t, _ in tree.split_texts()) == text
    starts = {s.clean_start for s in tree.splits} - {0}  # the document's start always opens a chunk
    assert toc and not starts & toc
    assert len(starts) >= 2  # the rest of the document did get its starts


# -- callouts, admonitions and captions ----------------------------------------------------------

SECTION = (f"1 Setup\n\n{BODY_EN}\nNOTE\nThe file must exist before you start.\n\nTIP Finding a mirror\n\n{BODY_EN}\n"
           f"Figure 1.2. The configuration dialog\n\n{BODY_EN}\nWarning: do not unplug it.\n\n注意：请先备份。\n\n"
           f"Example 3.1. A sample session\n\n{BODY_EN}\n.. function:: setup(arguments)\n\n{BODY_EN}\n2 Usage\n\n{BODY_EN}\nEXAMPLES\n\n{BODY_EN}\nSEE ALSO\n\n{BODY_EN}")


def test_callouts_and_captions_are_asides_and_section_names_are_not():
    for aside in ("NOTE", "Note:", "TIP Finding a mirror", "Warning: do not unplug it.", "**Note**: careful", "> [!NOTE]",
                  "Figure 9.5. The network", "Table 2: Sizes", "Example 3.1. A sample session", "图 3-1 结构", "注意：请先备份。",
                  ".. function:: setup(arguments)", ".. versionadded:: 3.11", ".. _reporting-bugs:", ".. note::"):
        assert is_aside(aside), aside
    for heading in ("EXAMPLES", "NOTES", "SEE ALSO", "Note about time stamps", "NOTE ABOUT FAST-FORWARDS", "Example",
                    "Table of Contents", "Tipping points", "注意", "说明", ".. XXX Windows support not there yet",
                    "... and so on"):
        assert not is_aside(heading), heading
    assert is_aside("注意", blank_after=False)  # a box word right above its text


def test_a_callout_inside_a_section_never_starts_a_chunk(tokenizer):
    tree = chunk(SECTION, ScriptedModel(everywhere(2), window_tokens=500), tokenizer=tokenizer)
    assert "".join(t for t, _ in tree.split_texts()) == SECTION
    firsts = [t.split("\n")[0] for t, _ in tree.split_texts()]
    for aside in ("NOTE", "TIP Finding a mirror", "Figure 1.2. The configuration dialog", "Warning: do not unplug it.",
                  "注意：请先备份。", "Example 3.1. A sample session", ".. function:: setup(arguments)"):
        assert aside not in firsts
    assert {"1 Setup", "2 Usage", "EXAMPLES", "SEE ALSO"} <= set(firsts)  # real headings stay starts


def test_explicit_markup_still_wins_over_the_aside_rule(tokenizer):
    md = f"# Guide\n\n{BODY_EN}\n## Note\n\n{BODY_EN}"
    tree = chunk(md, ScriptedModel([""], window_tokens=400), fmt="markdown", hints="use", tokenizer=tokenizer)
    assert [t.split("\n")[0] for t, _ in tree.split_texts()] == ["# Guide", "## Note"]


# -- lossless and deterministic over the new shapes -------------------------------------------

SHAPES = st.sampled_from(["Chapter 2", "第\u00a02\u00a0章", "Getting Started", "NOTE", "Figure 1. A figure", "Contents",
                          "1 Intro ........ 3", "Overview   12", "１．２　Ｓｅｔｕｐ", "A wrapped heading that runs on for quite a few words",
                          "and ends here", "Body text of a paragraph.", "中文正文。", "", "", "    code line", "====="])
SHAPED_TEXT = st.lists(SHAPES, max_size=30).map("\n".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=SHAPED_TEXT, fmt=st.sampled_from(["text", "markdown"]), level=st.integers(1, 3))
def test_two_line_headings_tocs_and_asides_keep_trees_lossless_and_deterministic(text, fmt, level, tokenizer):
    trees = [chunk(text, ScriptedModel(everywhere(level), window_tokens=60), fmt=fmt, tokenizer=tokenizer) for _ in range(2)]
    assert trees[0] == trees[1]
    assert "".join(t for t, _ in trees[0].split_texts()) == text
    assert "".join(trees[0].raw_text(x) for x in trees[0].leaves()) == text
    doc = parse_document(text, fmt)
    units = model_units(doc, split_sentences(doc))
    assert [u.offset for u in units] == sorted({u.offset for u in units})


# -- PDFs: running heads that carry titles, bookmarks as hints ----------------------------------

@pytest.fixture(scope="module")
def titled_book():
    pytest.importorskip("pypdfium2")
    pytest.importorskip("reportlab")
    from pdf_writer import build_book

    book = build_book(chapters=4, sections=3, paragraphs=8, chinese=False, heads="titles")
    assert book.pages >= 20 and len(set(book.running_heads)) >= 12  # heads vary: each chapter and section has its own
    return book


def test_running_heads_that_carry_titles_are_furniture(titled_book):
    from hichunk.document.layout import analyse
    from hichunk.document.pdf import parse_pdf, read_pdf
    from hichunk.document.pdftext import BODY, FURNITURE

    pdf = read_pdf(titled_book.data)
    analyse(pdf.text, pdf.lines, [h for _, h in pdf.page_sizes])
    top = [ln for ln in pdf.lines if ln.y < 50]  # the running heads sit 40 pt from the top
    assert len(top) == len(titled_book.running_heads) and all(ln.role == FURNITURE for ln in top)
    headings = {text for text, _, _ in titled_book.headings}
    drawn = [ln for ln in pdf.lines if ln.y >= 50 and pdf.text[ln.start : ln.end] in headings]
    assert len(drawn) == len(headings) and all(ln.role == BODY for ln in drawn)
    clean = parse_pdf(titled_book.data, "book.pdf").clean
    assert not any(head in clean for head in titled_book.running_heads if head.startswith("Chapter"))
    for heading in headings:  # every heading, section titles the odd heads repeat included, stays in the clean view
        assert f"\n{heading}\n" in clean or clean.startswith(heading)


def test_pdf_bookmarks_are_hints_with_hints_use_and_hidden_with_hints_ignore(titled_book, tokenizer):
    from hichunk.document.pdf import parse_pdf

    doc = parse_pdf(titled_book.data, "book.pdf")
    assert [(doc.lines[i].text, level) for i, level in sorted(doc.bookmarks.items())] == [
        (text, level) for text, level, _ in titled_book.headings]
    assert doc.headings == sorted(doc.bookmarks.items()) and all(line.heading is None for line in doc.lines)
    quiet = ScriptedModel([""], window_tokens=2000)  # a model that never starts a chunk
    use = chunk_document(doc, "hichunk", ChunkOptions(hints="use", merge_over_chunk=False, tokenizer=tokenizer), model=quiet)
    titled = [(n.title, n.level) for n in use.nodes if n.kind in ("chunk", "section") and n.title]
    assert titled == [(text, level) for text, level, _ in titled_book.headings]
    assert "".join(t for t, _ in use.split_texts()) == doc.text
    ignore = chunk_document(doc, "hichunk", ChunkOptions(hints="ignore", merge_over_chunk=False, tokenizer=tokenizer),
                            model=ScriptedModel([""], window_tokens=2000))
    from dataclasses import replace

    bare = chunk_document(replace(doc, bookmarks={}), "hichunk",
                          ChunkOptions(hints="ignore", merge_over_chunk=False, tokenizer=tokenizer),
                          model=ScriptedModel([""], window_tokens=2000))
    assert ignore.splits == bare.splits  # hidden: the bookmarks change nothing (the printed contents may add starts)
    structure = chunk_document(doc, "structure", ChunkOptions(hints="use", tokenizer=tokenizer))
    assert [s.level for s in structure.splits][1:] == [level for _, level, _ in titled_book.headings]


def test_bookmarks_change_nothing_a_model_reads(titled_book):
    from dataclasses import replace

    from hichunk.document.pdf import parse_pdf

    doc = parse_pdf(titled_book.data, "book.pdf")
    bare = replace(doc, bookmarks={})
    assert model_units(doc, split_sentences(doc)) == model_units(bare, split_sentences(bare))


def test_a_bookmark_title_under_a_label_line_is_placed_on_the_label():
    from hichunk.document.bookmarks import TitleFinder, place_bookmarks

    doc = parse_document(f"Preface\n\n{BODY_EN}\nChapter 1\n\nIntroduction\n\n{BODY_EN}\n1.1 Scope of it\n\n{BODY_EN}", "text")
    finder = TitleFinder(doc)
    assert doc.lines[finder.find("Introduction", None)].text == "Chapter 1"
    assert doc.lines[finder.find("1 Introduction", None)].text == "Chapter 1"
    assert doc.lines[finder.find("Scope of it", None)].text == "1.1 Scope of it"  # numbers ignored on either side
    assert finder.find("Nowhere to be found", None) is None
    entries = [(1, "Preface", 1), (1, "Introduction", 1), (2, "Scope of it", 1), (12, "Deep", 1)]
    assert place_bookmarks(doc, entries) == {0: 1, 4: 1, 10: 2}  # unpaged lines: any page matches


def test_appendix_bookmarks_are_placed_on_their_lettered_lines():
    from hichunk.document.bookmarks import place_bookmarks

    doc = parse_document(f"Appendix A Essential programs\n\n{BODY_EN}\nA.1 Compilers\n\n{BODY_EN}\n"
                         f"A.2.10 Building R.app\n\n{BODY_EN}", "text")
    # R's manuals bookmark "A Essential programs" and "Compilers" where the pages print the label and the numbers
    entries = [(1, "A Essential programs", 1), (2, "Compilers", 1), (3, "Building R.app", 1)]
    placed = place_bookmarks(doc, entries)
    assert {doc.lines[i].text: level for i, level in placed.items()} == {
        "Appendix A Essential programs": 1, "A.1 Compilers": 2, "A.2.10 Building R.app": 3}


def test_a_short_bookmark_title_names_a_whole_word_only():
    from hichunk.document.bookmarks import place_bookmarks

    # a code index: letter groups bookmarked but not printed above their entries, then one printed
    doc = parse_document("Index\n\n\\captionsetup . . . . 12, 40\n\nenvironments:\n\nC\n\n\\cite . . . . 7\n\n"
                         "v0.4 (2017/07/29)\n\nSelecting a\nStepper Power Supply\n\n第一章简介\n", "text")
    entries = [(1, "Index", 1), (2, "C", 1), (2, "E", 1), (2, "C", 1), (2, "v0.4", 1),
               (2, "Selecting a Stepper Power Supply", 1), (1, "第一章", 1)]
    placed = place_bookmarks(doc, entries)
    assert {doc.lines[i].text: level for i, level in placed.items()} == {
        "Index": 1, "C": 2, "v0.4 (2017/07/29)": 2, "Selecting a": 2, "第一章简介": 1}
    # a short line that stops inside a title's word is not its first line; a long one is (outlines glue wrapped words)
    doc = parse_document("Config\n\nConfiguration files\n\nReading graphs from text in the\nDIMACS format\n\n"
                         "2.5.4 Support for Korean6\n", "text")
    entries = [(1, "Configuration files", 1), (1, "Reading graphs from text in theDIMACS format", 1),
               (2, "Support for Korean", 1)]  # the last line ends in a footnote mark
    assert {doc.lines[i].text for i in place_bookmarks(doc, entries)} == {
        "Configuration files", "Reading graphs from text in the", "2.5.4 Support for Korean6"}
    # a line that gives a title's first words is its first line only when the next line goes on with it
    doc = parse_document("Grid\n\ngrid.null Null Graphical Object\n\nFan chart\nDiagrams\n\n"
                         "Chapter 1: \u25a0\u25a0\u25a0\n\nBody text.\n", "text")
    entries = [(2, "grid.null", 1), (2, "Fan Chart Diagrams", 1), (1, "Chapter 1: 前言", 1)]
    assert {doc.lines[i].text for i in place_bookmarks(doc, entries)} == {
        "grid.null Null Graphical Object", "Fan chart", "Chapter 1: \u25a0\u25a0\u25a0"}  # glyphs the PDF cannot spell


def test_an_outline_entry_its_page_does_not_print_is_no_heading(titled_book):
    from hichunk.document.pdf import parse_pdf
    from hichunk.models.train.corpus.truth import placed_truth

    doc = parse_pdf(titled_book.data, "book.pdf")
    first, level, page = titled_book.headings[0]
    body = next(line.text for line in doc.lines if line.style is not None and line.style.page == page + 1
                and len(line.text.split()) > 6)
    words = " ".join(body.split()[2:5])  # printed inside a line: a heading the reading would have lost
    headings = [{"level": level, "title": first, "page": page}, {"level": 2, "title": words, "page": page},
                {"level": 2, "title": "Q", "page": page},  # an index letter group that no page sets
                {"level": 3, "title": "Q", "page": page + 5}]
    truth = placed_truth(doc, headings)
    assert list(truth.at.values()) == [level] and truth.missing == [2] and truth.unprinted == [2, 3]


@given(st.text(max_size=40), st.text(max_size=40))
def test_compared_text_keeps_every_letter_and_ends_words_where_they_end(left, right):
    import re
    import unicodedata

    from hichunk.document.bookmarks import compared

    form = compared(left)
    assert form.chars == re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", left).casefold())
    assert all(0 < end <= len(form.chars) for end in form.word_ends)
    assert not form.chars or len(form.chars) in form.word_ends
    # a space never joins two words: the compared text of "left right" ends a word where left's does
    joined = compared(f"{left} {right}")
    if joined.chars.startswith(form.chars) and form.chars:
        assert len(form.chars) in joined.word_ends


def test_how_many_outline_entries_are_placed_is_logged(titled_book, caplog):
    import logging

    from hichunk.document.pdf import parse_pdf

    with caplog.at_level(logging.INFO, logger="hichunk.document.pdf"):
        doc = parse_pdf(titled_book.data, "book.pdf")
    n = len(titled_book.headings)
    assert f"book.pdf: {len(doc.bookmarks)} of {n} outline entries placed on heading lines" in caplog.text
    assert len(doc.bookmarks) == n
