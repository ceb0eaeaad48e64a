"""A document's own table of contents names its headings: a body line it names once starts a section."""

from __future__ import annotations

import dataclasses

from hichunk.document import parse_document
from hichunk.engine.contents import contents_titles, entry_words, starts_on_contents_titles
from hichunk.protocol import LineLayout

APART = LineLayout(blank_before=True, blank_after=True)
BODY = LineLayout(blank_before=True, blank_after=True)


def test_entries_and_headings_share_their_words():
    assert entry_words("2.3 Where to get it .... 14", entry=True) == entry_words("2.3 Where to get it") == "where to get it"
    assert entry_words("第一章 简介 ...... 3", entry=True) == entry_words("第一章 简介") == "简介"
    assert entry_words("Python 3") == "python 3"  # a heading keeps a number at its end; only entries drop pages


def test_contents_at_the_front_count_and_an_index_at_the_back_does_not():
    body = "\n\n".join(f"Paragraph {i} of running text that says something about the topic at hand." for i in range(40))
    text = ("Contents\n\n1 Introduction ........ 1\n2 Installing ........ 3\n\n" + body
            + "\n\nIndex\n\napples ........ 12\npears ........ 14\n")
    assert contents_titles(parse_document(text, "text")) == {"introduction", "installing"}


def test_a_short_paged_documents_contents_after_its_cover_and_abstracts_count():
    cover = "\n\n".join(f"Abstract sentence {i} about the thesis and what it argues in some detail." for i in range(12))
    body = "\n\n".join(f"Paragraph {i} of running text that says something about the topic at hand." for i in range(40))
    contents = "Contents\n\n1 Introduction ........ 1\n2 Installing ........ 3\n\n"
    text = cover + "\n\n" + contents + body + "\n\nIndex\n\napples ........ 12\npears ........ 14\n"
    doc = parse_document(text, "text")
    assert contents_titles(doc) == set()  # past the first 15% of a text without pages
    paged = dataclasses.replace(doc, page_starts=[0, len(cover) + 2, len(cover) + 2 + len(contents), len(text) - 60])
    assert contents_titles(paged) == {"introduction", "installing"}  # within its first pages; the index is not


def test_a_line_the_contents_name_once_starts_a_titled_section_at_its_styles_level():
    texts = ["Guide", "1 Introduction", "Some text.", "2 Installing", "More text.", "Installing", "Done."]
    layout = [APART] * len(texts)
    points = {0: (1, True), 1: (2, True)}
    titles = {"introduction", "installing"}
    # "2 Installing" and the plain "Installing" share their words: named twice, neither is taken
    assert starts_on_contents_titles(points, texts, layout, titles) == points
    texts[5] = "Finishing"
    assert starts_on_contents_titles(points, texts, layout, titles) == {0: (1, True), 1: (2, True), 3: (2, True)}
    assert starts_on_contents_titles(points, texts, layout, set()) == points
    assert starts_on_contents_titles(points, texts, None, titles) == points
    toc_line = list(layout)
    toc_line[3] = LineLayout(blank_before=True, blank_after=True, role="toc")
    assert starts_on_contents_titles(points, texts, toc_line, titles) == points



def test_the_chunker_reads_the_contents_and_the_engine_starts_the_sections_they_name(tokenizer):
    from engine_doubles import ScriptedModel

    from hichunk.chunkers import ChunkOptions, chunk_document

    body = "\n\n".join(f"Paragraph {i} of running text that says something about the topic at hand." for i in range(12))
    text = ("Contents\n\n1 Introduction ........ 1\n2 Installing ........ 3\n\n"
            f"1 Introduction\n\n{body}\n\n2 Installing\n\n{body}\n")
    quiet = ScriptedModel([""], window_tokens=2000)  # a model that never starts a chunk
    tree = chunk_document(parse_document(text, "text"), "hichunk",
                          ChunkOptions(hints="ignore", merge_over_chunk=False, tokenizer=tokenizer), model=quiet)
    starts = [tree.clean[s.clean_start:].split("\n", 1)[0] for s in tree.splits if s.title]
    assert starts == ["1 Introduction", "2 Installing"]  # the body's headings, not the contents lines
