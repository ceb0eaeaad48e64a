"""Labelled renderings: offsets point at title lines, levels survive, styles vary by seed, splits never move."""

from __future__ import annotations

import json
import os
import re

import pytest

from hichunk.models.train.corpus.corpus import SPLITS, CorpusDoc, build_corpus, load_split
from hichunk.models.train.corpus.render import blocks_of, book_blocks, render_markdown, render_text
from hichunk.models.train.corpus.render_corpus import render_corpus
from hichunk.models.train.corpus.styles import CALLOUTS, SCHEMES, Numberer, Profile, draw_profile, roman, zh_number

WORDS = " ".join(f"word{i}" for i in range(150))
ZH = "这是一个用于测试的中文句子，内容足够长。" * 20


def _doc(i: int, lang: str = "en") -> str:
    body = WORDS if lang == "en" else ZH
    return (f"# 1. Title {i}\n\n{body}\n\n## 1.1 Part one\n\n{body}\n\n- a list\n- items\n\n```\n# code\n```\n\n"
            f"### Deeper {i}\n\n{body}\n\n## Part two\n\nNote\n\n{body}\n\n# Second top\n\n{body}\n")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs") / "mini"
    root.mkdir()
    for i in range(24):
        (root / f"en{i:02d}.md").write_text(_doc(i), encoding="utf-8")
        (root / f"zh{i:02d}.md").write_text(_doc(i, "zh").replace("Title", "标题"), encoding="utf-8")
    out = tmp_path_factory.mktemp("corpus")
    build_corpus(str(out), dirs=[str(root)], progress=False)
    return out


@pytest.fixture(scope="module")
def rendered(corpus, tmp_path_factory):
    from hichunk.models.train.corpus import render

    out = tmp_path_factory.mktemp("rendered")
    saved = render.BOOK_WORDS, render.BOOK_CHARS
    render.BOOK_WORDS, render.BOOK_CHARS = (1_500, 2_000), (4_000, 6_000)  # books of a mini corpus
    try:
        manifest = render_corpus(str(corpus), str(out), pdf_share=0.2, books_per_source=1, real=False, progress=False)
    finally:
        render.BOOK_WORDS, render.BOOK_CHARS = saved
    return out, manifest


def _labels(out):
    with open(os.path.join(out, "labels.jsonl"), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_labels_schema(rendered):
    out, manifest = rendered
    labels = _labels(out)
    assert labels == sorted(labels, key=lambda d: d["id"])
    for d in labels:
        assert set(d) >= {"id", "source_id", "split", "lang", "corpus", "kind", "style", "path", "headings", "real"}
        assert d["kind"] in ("text", "markdown", "pdf") and d["split"] in SPLITS and d["real"] is False
        assert os.path.isfile(os.path.join(out, d["path"]))
        for h in d["headings"]:
            assert set(h) == {"level", "title", "offset", "page"} and h["level"] >= 1 and h["title"]
            if d["kind"] == "pdf":
                assert h["offset"] is None and h["page"] >= 1
            else:
                assert h["page"] is None and isinstance(h["offset"], int)
    kinds = {(d["kind"], bool(d.get("source_ids"))) for d in labels}
    assert kinds == {("text", False), ("markdown", False), ("pdf", False), ("text", True)}
    assert manifest["total"] == len(labels) and not manifest["failures"]


def test_offsets_point_at_title_lines_and_levels_survive(rendered, corpus):
    out, _ = rendered
    docs = {d.id: d for s in SPLITS for d in load_split(str(corpus), s)}
    for d in _labels(out):
        if d["kind"] == "pdf":
            continue
        with open(os.path.join(out, d["path"]), encoding="utf-8", newline="") as fh:
            text = fh.read()
        for h in d["headings"]:
            off = h["offset"]
            assert off == 0 or text[off - 1] == "\n"
            line = text[off:].split("\n", 1)[0]
            assert line.lstrip("#").strip() == h["title"] or line.upper() == h["title"].upper(), (d["id"], h, line)
        if not d.get("source_ids"):
            src = [lv for _, lv in __import__("hichunk.document.markdown", fromlist=["x"]).parse_markdown(
                docs[d["source_id"]].markdown).headings]
            assert [h["level"] for h in d["headings"]] == src


def test_split_of_a_rendering_is_its_sources(rendered, corpus):
    out, _ = rendered
    split = {d.id: s for s in SPLITS for d in load_split(str(corpus), s)}
    for d in _labels(out):
        for sid in d.get("source_ids") or [d["source_id"]]:
            assert split[sid] == d["split"]
        assert d["path"].split("/")[1] == d["split"]


def test_callouts_are_never_headings(rendered):
    out, _ = rendered
    traps = {c for cs in CALLOUTS.values() for c in cs}
    seen = 0
    for d in _labels(out):
        if d["kind"] != "text":
            continue
        with open(os.path.join(out, d["path"]), encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        seen += sum(1 for line in lines if line in traps)
        assert not any(h["title"] in traps for h in d["headings"])
    assert seen > 0  # the traps are there


def test_books_are_long_and_chapters_level_one(rendered):
    out, _ = rendered
    books = [d for d in _labels(out) if d.get("source_ids")]
    assert books
    for b in books:
        assert len(b["source_ids"]) >= 2
        assert sum(1 for h in b["headings"] if h["level"] == 1) >= len(b["source_ids"])


def test_pdf_headings_on_their_pages(rendered):
    from pypdf import PdfReader

    out, _ = rendered
    pdfs = [d for d in _labels(out) if d["kind"] == "pdf"]
    assert any(d["split"] == "test" for d in pdfs)
    for d in pdfs[:4]:
        reader = PdfReader(os.path.join(out, d["path"]))
        assert len(reader.pages) >= 1
        for h in d["headings"]:
            text = " ".join(reader.pages[h["page"] - 1].extract_text().split())
            assert " ".join(h["title"].split())[:20].replace("\u00ad", "") in text.replace("\u00ad", "")


def test_deterministic(corpus, rendered, tmp_path):
    out, _ = rendered
    again = tmp_path / "again"
    render_corpus(str(corpus), str(again), kinds=("markdown", "text"), pdf_share=0.2, books_per_source=0, real=False,
                  progress=False)
    first = [d for d in _labels(out) if d["kind"] != "pdf" and not d.get("source_ids")]
    assert _labels(again) == first
    for d in first[:10]:
        assert (again / d["path"]).read_bytes() == (out / d["path"]).read_bytes()


def test_styles_vary_by_seed():
    import random

    blocks = blocks_of(_doc(1))
    texts = set()
    for seed in range(12):
        profile = draw_profile(random.Random(seed), "en", "text")
        texts.add(render_text(blocks, profile, random.Random(seed))[0])
    assert len(texts) >= 8
    schemes = {draw_profile(random.Random(s), "zh", "text").scheme for s in range(60)}
    assert schemes == set(SCHEMES["zh"])


def test_numbering_schemes():
    p = Profile(lang="zh", scheme="zh-chapter", arabic_chapters=False)
    n = Numberer(p)
    assert [n.title(lv, t) for lv, t in [(1, "第1章 总则"), (2, "范围"), (3, "1.1 定义"), (4, "细则"), (1, "方法")]] == [
        "第一章 总则", "第一节 范围", "一、定义", "（一）细则", "第二章 方法"]
    n = Numberer(Profile(lang="zh", scheme="zh-report"))
    assert [n.title(lv, t) for lv, t in [(1, "背景"), (2, "目标"), (3, "方法"), (4, "数据"), (3, "结果")]] == [
        "一、背景", "（一）目标", "1. 方法", "（1）数据", "2. 结果"]
    n = Numberer(Profile(lang="en", scheme="part-chapter", chapter_word="Chapter {n}."))
    assert [n.title(lv, t) for lv, t in [(1, "Basics"), (2, "Intro"), (3, "3.2 Scope")]] == [
        "Part I Basics", "Chapter 1. Intro", "1.1 Scope"]
    n = Numberer(Profile(lang="en", scheme="decimal", appendix=True), top_count=4)
    got = [n.title(lv, t) for lv, t in [(1, "A"), (1, "B"), (1, "C"), (1, "Tables"), (2, "Sizes")]]
    assert got == ["1. A", "2. B", "3. C", "Appendix A. Tables", "A.1 Sizes"]
    n = Numberer(Profile(lang="en", scheme="original"))
    assert n.title(1, "3.2 Kept") == "3.2 Kept"
    assert roman(14) == "XIV" and zh_number(11) == "十一" and zh_number(20) == "二十" and zh_number(105) == "一百零五"


def test_markdown_variants_keep_levels():
    blocks = blocks_of(_doc(2))
    text, heads = render_markdown(blocks, None)
    assert [h["title"] for h in heads][:2] == ["1. Title 2", "1.1 Part one"]
    profile = Profile(lang="en", scheme="roman-letter", md_offset=1)
    text, heads = render_markdown(blocks, profile)
    assert [(h["level"], h["title"]) for h in heads] == [
        (1, "I. Title 2"), (2, "A. Part one"), (3, "1. Deeper 2"), (2, "B. Part two"), (1, "II. Second top")]
    assert text.startswith("## I. Title 2\n")
    from hichunk.document.markdown import parse_markdown

    assert [lv - 1 for _, lv in parse_markdown(text).headings] == [h["level"] for h in heads]


def test_book_blocks_make_chapters():
    a = CorpusDoc("c/a", "c", "en", "A", "a", "# Root\n\ntext\n\n## Sub\n\nmore", 3, 3, 2, 2)
    b = CorpusDoc("c/b", "c", "en", "B doc", "b", "# One\n\nx\n\n# Two\n\ny", 2, 2, 2, 1)
    levels = [(blk.level, blk.text) for blk in book_blocks([a, b]) if blk.level]
    assert levels == [(1, "Root"), (2, "Sub"), (1, "B doc"), (2, "One"), (2, "Two")]


def test_unknown_kind_is_an_error(corpus, tmp_path):
    from hichunk.errors import HichunkError

    with pytest.raises(HichunkError, match="unknown kind"):
        render_corpus(str(corpus), str(tmp_path / "o"), kinds=("docx",), real=False, progress=False)


def test_real_info_text_labels(tmp_path):
    import gzip

    from hichunk.models.train.corpus.debian import FetchedPackage
    from hichunk.models.train.corpus.real import real_texts
    from hichunk.models.train.corpus.sources import SOURCES

    tree = tmp_path / "tree"
    (tree / "usr/share/info").mkdir(parents=True)
    info = ("\x1f\nFile: r.info,  Node: Top,  Next: A\n\nManual\n******\n\nx\n\x1f\nFile: r.info,  Node: A\n\n"
            "1 A\n***\n\ntext\n\n1.1 B\n=====\n\nmore\n")
    (tree / "usr/share/info/R-intro.info.gz").write_bytes(gzip.compress(info.encode()))
    fetched = FetchedPackage(SOURCES["r-doc-info"], "1", "x.deb", str(tree))
    (label,) = real_texts(fetched, str(tmp_path / "out"))
    assert label.real and label.kind == "text" and label.style["group"] == "manual:R-intro"
    text = (tmp_path / "out" / label.path).read_text(encoding="utf-8")
    assert [(h["level"], h["title"]) for h in label.headings] == [(1, "Manual"), (2, "1 A"), (3, "1.1 B")]
    for h in label.headings:
        assert text[h["offset"] :].startswith(h["title"] + "\n")


def test_pdf_outline_of_a_rendered_pdf(tmp_path):
    from reportlab.pdfgen import canvas

    from hichunk.models.train.corpus.real import pdf_outline

    path = str(tmp_path / "o.pdf")
    c = canvas.Canvas(path)
    for key, title, level in [("a", "Chapter", 0), ("b", "Section", 1), ("c", "Other", 0)]:
        c.drawString(100, 700, title)
        c.bookmarkPage(key)
        c.addOutlineEntry(title, key, level=level)
        c.showPage()
    c.save()
    assert [(h["level"], h["title"], h["page"]) for h in pdf_outline(path)] == [
        (1, "Chapter", 1), (2, "Section", 2), (1, "Other", 3)]
    assert pdf_outline(str(tmp_path / "missing.pdf")) == []


# -- conventions of held-out families (issue 17) ----------------------------------------------------

_BOOKISH = ("# Getting Started\n\nThis is how you start with the system and its tools.\n\n"
            "## Where to get the installation media for your machine today\n\nPick a mirror close to you.\n\n"
            "```\nls -l\n```\n\n## What is it?\n\nAn answer.\n\n# Second Steps\n\nMore body text here.\n")


def _conventions(**kw) -> Profile:
    base = dict(lang="en", scheme="chapter", forms=["plain"] * 10, chapter_word="Chapter {n}.")
    return Profile(**{**base, **kw})


def test_label_line_stands_above_its_title_and_labels_the_heading():
    import random

    text, heads = render_text(blocks_of(_BOOKISH), _conventions(label_line=True), random.Random(0))
    assert [(h["level"], h["title"]) for h in heads][:2] == [(1, "Chapter 1"), (2, "1.1 Where to get the installation "
                                                                                 "media for your machine today")]
    assert text[heads[0]["offset"]:].startswith("Chapter 1\nGetting Started\n")
    assert text[heads[3]["offset"]:].startswith("Chapter 2\nSecond Steps\n")


def test_chinese_labels_with_no_break_and_full_width_spaces_and_digits():
    import random

    md = "# 入门\n\n这是第一段话，讲述如何开始。\n\n## 选择镜像\n\n选择一个镜像站点。\n\n# 教程\n\n更多内容。\n"
    for space in ("\u00a0", "\u3000"):
        p = Profile(lang="zh", scheme="zh-chapter-decimal", forms=["plain"] * 10, label_space=space)
        _, heads = render_text(blocks_of(md), p, random.Random(0))
        assert heads[0]["title"] == f"第{space}1{space}章{space}入门" and heads[1]["title"] == f"1.1{space}选择镜像"
    p = Profile(lang="zh", scheme="zh-chapter-decimal", forms=["plain"] * 10, fullwidth_digits=True, label_line=True)
    text, heads = render_text(blocks_of(md), p, random.Random(0))
    assert heads[0]["title"] == "第１章" and text[heads[0]["offset"]:].startswith("第１章\n入门\n")
    n = Numberer(_conventions(nbsp=True, scheme="part-chapter"))
    assert [n.title(1, "Basics"), n.title(2, "Intro")] == ["Part\u00a0I\u00a0Basics", "Chapter\u00a01.\u00a0Intro"]


def test_wrapped_heading_is_labelled_by_its_first_line():
    import random

    text, heads = render_text(blocks_of(_BOOKISH), _conventions(heading_wrap=30), random.Random(0))
    long = heads[1]
    first, second = text[long["offset"]:].split("\n")[:2]
    assert long["title"] == first and len(first) <= 30 and second and second in "1.1 Where to get the installation " \
        "media for your machine today"


def test_plain_text_toc_variants_are_never_headings():
    import random

    p = _conventions(toc=True, toc_leaders=False, toc_pages=True, toc_depth=3, toc_title="Table of Contents")
    text, heads = render_text(blocks_of(_doc(3)), p, random.Random(0))
    toc = text.split("\n\n\n")[0].split("\n")
    assert toc[0] == "Table of Contents"
    entries = [line for line in toc[2:] if line.strip()]
    assert all(re.search(r"\S {2,}\d+$", line) for line in entries) and any(line.startswith("        ") for line in entries)
    assert all(h["offset"] >= sum(len(x) + 1 for x in toc) for h in heads)
    p = Profile(lang="zh", scheme="zh-chapter", forms=["plain"] * 10, toc=True, toc_leader="…", toc_title="目\u3000录")
    text, heads = render_text(blocks_of(_doc(3, "zh")), p, random.Random(0))
    assert text.startswith("目\u3000录\n\n") and "…… " in text and heads[0]["offset"] > text.index("……")


def test_callout_boxes_and_captions_sit_inside_sections():
    import random

    from hichunk.models.train.corpus.styles import CALLOUT_BOXES

    p = _conventions(callouts=1.0, callout_titles=True, captions=0.4)
    text, heads = render_text(blocks_of(_doc(4) + "\n```\ncode\n```\n"), p, random.Random(1))
    lines = text.split("\n")
    boxes = [line for line in lines if line.split(" ")[0] in {b.split(" ")[0] for b in CALLOUT_BOXES["en"]}
             and len(line.split()) >= 2]
    captions = [line for line in lines if re.match(r"(Figure|Fig\.|Table|Example|Listing) \d+\.\d+", line)]
    assert boxes and captions
    titles = {h["title"] for h in heads}
    assert not titles & set(boxes) and not titles & set(captions)
    first_heading = min(h["offset"] for h in heads)
    assert text.index(boxes[0]) > first_heading and text.index(captions[0]) > first_heading


def test_question_prefix_only_on_questions():
    n = Numberer(_conventions(faq_prefix="Q: ", scheme="decimal"))
    assert [n.title(1, "What is it?"), n.title(2, "Installing"), n.title(2, "Question 1.2. Why?")] == [
        "1. Q: What is it?", "1.1 Installing", "1.2 Question 1.2. Why?"]


def test_caption_and_callout_words_skip_markup():
    import random

    from hichunk.models.train.corpus.render import _phrase

    assert _phrase("**Returns:** `dict`: 调用 API 返回的结果", "zh", random.Random(0)).startswith("调用"[:1])
    assert "<" not in _phrase("<div align=center> text", "zh", random.Random(0))
    assert _phrase("We want to make topic' branches", "en", random.Random(3)).split()[-1][-1] != "'"


def test_books_with_parts_put_chapters_at_level_two():
    docs = [CorpusDoc(f"c/{k}", "c", "en", f"Doc {k}", str(k), f"# Root {k}\n\ntext\n\n## Sub\n\nmore", 3, 3, 2, 2)
            for k in range(5)]
    levels = [(b.level, b.text) for b in book_blocks(docs, part_every=2) if b.level]
    assert levels[:4] == [(1, "Doc 0"), (2, "Root 0"), (3, "Sub"), (2, "Root 1")]
    assert [t for lv, t in levels if lv == 1] == ["Doc 0", "Doc 2", "Doc 4"]


def test_pdf_running_heads_carry_chapter_and_section_titles(tmp_path, monkeypatch):
    import random

    from pypdf import PdfReader

    from hichunk.models.train.corpus import render_pdf

    real = render_pdf.pdf_profile
    monkeypatch.setattr(render_pdf, "pdf_profile", lambda rng, lang: {
        **real(rng, lang), "running": "chapter-section", "head_caps": True, "toc": False})
    body = "The quick brown fox jumps over the lazy dog near the river bank today. " * 40
    md = "".join(f"# Chapter title {c}\n\n{body}\n\n## Section {c} one\n\n{body}\n\n## Section {c} two\n\n{body}\n\n"
                 for c in (1, 2))
    path = str(tmp_path / "r.pdf")
    _, heads = render_pdf.render_pdf(blocks_of(md), "Doc", "en", random.Random(0), path)
    pages = [" ".join(p.extract_text().split()) for p in PdfReader(path).pages]
    chapter_pages = {h["page"] for h in heads if h["level"] == 1}
    heads_seen = 0
    for n, text in enumerate(pages, 1):
        if n in chapter_pages:
            continue
        shown = [h["title"].upper() for h in heads if h["level"] <= 2 and " ".join(h["title"].upper().split()) in text]
        assert shown and re.search(rf"(^|\s){n}(\s|$)", text), (n, text[-120:])
        heads_seen += 1
    assert len(pages) >= 4 and heads_seen >= 2
