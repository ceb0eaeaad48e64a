"""Corpus builder on a tiny hand-made folder (no network), normalisation and denumbering."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hichunk.document.html import parse_html
from hichunk.document.markdown import parse_markdown
from hichunk.document.rst import parse_rst
from hichunk.errors import HichunkError
from hichunk.models.train.corpus.corpus import (
    SPLITS,
    Manifest,
    build_corpus,
    corpus_stats,
    detect_lang,
    load_split,
    split_of,
    write_denumbered,
)
from hichunk.models.train.corpus.normalise import denumber_markdown, heading_title, relative_levels, to_markdown
from hichunk.numbering import number_pattern, strip_heading_number

WORDS = " ".join(f"word{i}" for i in range(120))
ZH = "这是一个用于测试的中文句子，内容足够长。" * 12


def _md(title: str, extra: str = "") -> str:
    return (
        f"# {title}\n\n{WORDS}\n\n## Part one\n\n{WORDS}\n\n```\n# install\n```\n\n"
        f"### Deeper\n\n{WORDS}\n{extra}"
    )


@pytest.fixture()
def docs_dir(tmp_path):
    root = tmp_path / "mydocs"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text(_md("Alpha"), encoding="utf-8")
    (root / "copy.md").write_text(_md("Alpha"), encoding="utf-8")  # exact duplicate of a.md
    (root / "short.md").write_text("# S\n\nfew words\n\n## T\n\nmore\n", encoding="utf-8")
    (root / "flat.md").write_text(f"# Only one level\n\n{WORDS} {WORDS} {WORDS}\n", encoding="utf-8")
    (root / "sub" / "b.html").write_text(
        f"<html><head><title>B page</title></head><body><nav>Home | Next</nav>"
        f"<h2>Beta</h2><p>{WORDS}</p><h4>Detail</h4><p>{WORDS}</p><pre># not a heading\n</pre>"
        f"<h4>More</h4><p>{WORDS}</p></body></html>",
        encoding="utf-8",
    )
    (root / "sub" / "c.rst").write_text(
        f"Gamma\n=====\n\n{WORDS}\n\nSub\n---\n\n{WORDS}::\n\n   # shell comment\n   ----\n\n{WORDS}\n",
        encoding="utf-8",
    )
    (root / "zh.md").write_text(f"# 第1章 总则\n\n{ZH}\n\n## 一、范围\n\n{ZH}\n\n## 二、定义\n\n{ZH}\n", encoding="utf-8")
    (root / "notes.txt").write_text("plain text is skipped", encoding="utf-8")
    (root / "bad.md").write_bytes(b"\x00\x01\x02 binary \x00")
    return root


def _all(out):
    return {d.id: d for split in SPLITS for d in load_split(str(out), split)}


def test_build_from_folder(docs_dir, tmp_path):
    out = tmp_path / "out"
    manifest = build_corpus(str(out), dirs=[str(docs_dir)], min_words=300, min_chars=600, progress=False)
    docs = _all(out)
    assert sorted(docs) == ["mydocs/a.md", "mydocs/sub/b.html", "mydocs/sub/c.rst", "mydocs/zh.md"]
    assert manifest.data["dropped"]["mydocs"] == {"duplicate": 1, "short": 1, "flat": 1, "unreadable": 1}
    counts = manifest.counts["mydocs"]
    assert sum(n for split in counts.values() for n in split.values()) == 4
    assert docs["mydocs/zh.md"].lang == "zh" and docs["mydocs/a.md"].lang == "en"
    b = docs["mydocs/sub/b.html"]
    assert b.title == "Beta"  # the <h2> is the top level, so level 1 after normalisation
    for d in docs.values():
        assert set(json.loads(d.to_json())) >= {"id", "corpus", "lang", "title", "source", "markdown",
                                                "n_words", "n_chars", "n_headings", "max_depth"}
    with open(out / "manifest.json", encoding="utf-8") as fh:
        data = json.load(fh)
    assert set(data["files"]) == {"train.jsonl", "dev.jsonl", "test.jsonl"}
    assert data["parameters"]["min_words"] == 300


def test_titles_and_headings(docs_dir, tmp_path):
    out = tmp_path / "out"
    build_corpus(str(out), dirs=[str(docs_dir)], progress=False)
    docs = _all(out)
    b = docs["mydocs/sub/b.html"]
    assert b.markdown.startswith("# Beta\n\n")
    assert "## Detail" in b.markdown and "Home" not in b.markdown
    assert b.max_depth == 2 and b.n_headings == 3
    assert docs["mydocs/sub/c.rst"].title == "Gamma"
    assert "\n   \\# shell comment" in docs["mydocs/sub/c.rst"].markdown


def test_heading_round_trip(docs_dir, tmp_path):
    out = tmp_path / "out"
    build_corpus(str(out), dirs=[str(docs_dir)], progress=False)
    for d in _all(out).values():
        parsed = parse_markdown(d.markdown)
        assert len(parsed.headings) == d.n_headings
        lines = d.markdown.split("\n")
        heading_lines = {i for i, _ in parsed.headings}
        for i in range(len(lines)):
            if i not in heading_lines:
                assert parsed.lines[i].heading is None


def test_split_is_deterministic(docs_dir, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    m1 = build_corpus(str(a), dirs=[str(docs_dir)], progress=False)
    m2 = build_corpus(str(b), dirs=[str(docs_dir)], jobs=2, progress=False)
    assert m1.data["content_hash"] == m2.data["content_hash"]
    for split in SPLITS:
        assert (a / f"{split}.jsonl").read_bytes() == (b / f"{split}.jsonl").read_bytes()
    for d in _all(a).values():
        assert d.id in {x.id for x in load_split(str(a), split_of(d.id))}


def test_split_shares():
    names = [split_of(f"c/doc{i}.md") for i in range(5000)]
    share = {s: names.count(s) / len(names) for s in SPLITS}
    assert 0.77 < share["train"] < 0.83 and 0.08 < share["dev"] < 0.12 and 0.08 < share["test"] < 0.12
    assert split_of("x/y") == split_of("x/y")
    assert any(split_of(f"c/doc{i}", seed=1) != split_of(f"c/doc{i}") for i in range(50))


def test_min_length_filter(docs_dir, tmp_path):
    out = tmp_path / "out"
    manifest = build_corpus(str(out), dirs=[str(docs_dir)], min_words=0, min_chars=0, progress=False)
    assert "mydocs/short.md" in _all(out)
    assert "short" not in manifest.data["dropped"]["mydocs"]
    manifest = build_corpus(str(out), dirs=[str(docs_dir)], min_words=10_000, min_chars=10_000, progress=False)
    assert manifest.data["total"] == 0


def test_stats_and_denumber(docs_dir, tmp_path):
    out, den = tmp_path / "out", tmp_path / "den"
    build_corpus(str(out), dirs=[str(docs_dir)], progress=False)
    stats = corpus_stats(str(out))
    assert stats["mydocs [zh]"]["docs"] == 1
    write_denumbered(str(out), str(den))
    zh = _all(den)["mydocs/zh.md"]
    assert "# 总则" in zh.markdown and "## 范围" in zh.markdown and "第1章" not in zh.markdown
    assert Manifest.load(str(den)).data["denumbered_from"]["content_hash"]


def test_errors_are_clear(tmp_path):
    with pytest.raises(HichunkError, match="nothing to build"):
        build_corpus(str(tmp_path / "o"))
    with pytest.raises(HichunkError, match="not a directory"):
        build_corpus(str(tmp_path / "o"), dirs=[str(tmp_path / "missing")])
    with pytest.raises(HichunkError, match="no such file"):
        list(load_split(str(tmp_path), "train"))
    with pytest.raises(HichunkError, match="unknown split"):
        list(load_split(str(tmp_path), "validation"))
    with pytest.raises(HichunkError, match="unknown package"):
        build_corpus(str(tmp_path / "o"), packages=["no-such-doc"], cache_dir=str(tmp_path / "cache"))


def test_cli_build_and_stats(docs_dir, tmp_path, capsys):
    import argparse

    from hichunk.cli import corpus as cli

    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    out = tmp_path / "out"
    args = parser.parse_args(["corpus", "build", "--from", str(docs_dir), "--out", str(out)])
    assert args.handler(args) == 0
    args = parser.parse_args(["corpus", "stats", str(out)])
    assert args.handler(args) == 0
    assert '"mydocs [en]"' in capsys.readouterr().out


def test_detect_lang():
    assert detect_lang("Hello world") == "en"
    assert detect_lang("这是中文 with a few words") == "zh"
    assert detect_lang("") == "en"


# -- normalisation ------------------------------------------------------------------


def test_heading_title():
    assert [heading_title(x) for x in [" #", "## Title ##", "# C#", "###   x   y  ", "## 3.2 结果"]] == [
        "", "Title", "C#", "x y", "3.2 结果"]


def test_relative_levels():
    assert relative_levels([2, 3, 5, 3, 2]) == [1, 2, 3, 2, 1]
    assert relative_levels([3, 1, 2]) == [1, 1, 2]
    assert relative_levels([]) == []


def test_escapes_lookalike_headings():
    doc = parse_rst("Title\n=====\n\ntext\n\n#!/bin/sh\n# comment\nline\n\n.. x\n\nSub\n---\n\nabc\ndef\n===\n")
    md = to_markdown(doc)
    assert md.markdown.split("\n") == [
        "# Title", "", "text", "", "#!/bin/sh", "\\# comment", "line", "", ".. x", "", "## Sub", "", "abc", "def", "\\===",
    ]
    assert parse_markdown(md.markdown).headings == [(0, 1), (10, 2)]


def test_front_matter_stays_as_written_and_gives_no_heading():
    text = "---\nsummary: x\nread_when:\n  - Deciding\n---\n\n\n# Cron jobs\n\nbody\n"
    md = to_markdown(parse_markdown(text))
    assert md.markdown == "---\nsummary: x\nread_when:\n  - Deciding\n---\n\n# Cron jobs\n\nbody"
    assert [(i, lv, t) for i, lv, t in md.headings] == [(6, 1, "Cron jobs")]


def test_fences_kept_and_blank_runs_collapsed():
    doc = parse_html("<h1>T</h1><p>a</p><br><br><br><p>c</p><pre># x\n\n\n</pre><h3>U</h3><p>b</p>")
    md = to_markdown(doc)  # blank runs collapse outside fences; code keeps its lines
    assert md.markdown == "# T\n\na\n\nc\n\n```\n# x\n\n\n```\n\n## U\n\nb"


def test_unclosed_fence_in_text_cannot_hide_headings():
    doc = parse_rst("A\n=\n\n```\n\nB\n-\n\ntext\n")
    md = to_markdown(doc)
    assert [(lv, t) for _, lv, t in md.headings] == [(1, "A"), (2, "B")]
    assert parse_markdown(md.markdown).headings == [(i, lv) for i, lv, _ in md.headings]


def test_empty_headings_dropped():
    md = to_markdown(parse_html("<h1> </h1><h2>Real</h2><p>x</p><h3><b></b></h3>"))
    assert md.markdown == "# Real\n\nx"


line_st = st.one_of(
    st.sampled_from(["# h", "## h", "```", "~~~", "---", "===", "", "    # code", "text", "  # x", "-", "=", "Title"]),
    st.text(alphabet="#=-`~ ab\t", max_size=8),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(line_st, max_size=30))
def test_round_trip_property(lines):
    # markdown input: its real headings must come back exactly; nothing else may read as one
    doc = parse_markdown("\n".join(lines))
    md = to_markdown(doc)
    assert parse_markdown(md.markdown).headings == [(i, lv) for i, lv, _ in md.headings]
    assert len(md.headings) == sum(1 for ln in doc.lines if ln.heading and heading_title(ln.text))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["<h1>A</h1>", "<h3>B</h3>", "<p>x</p>", "<pre>#a\n```\n</pre>", "# y", "\n---\n",
                                 "<h2></h2>", "<li>- z</li>", "===", "<br>"]), max_size=25))
def test_round_trip_property_html(parts):
    md = to_markdown(parse_html("".join(parts)))
    assert parse_markdown(md.markdown).headings == [(i, lv) for i, lv, _ in md.headings]


# -- numbering ----------------------------------------------------------------------

NUMBERED = [
    ("3.2. Results", "Results", "decimal"),
    ("3.2 Results", "Results", "decimal"),
    ("1.2.3 Deep", "Deep", "decimal"),
    ("1) Intro", "Intro", "decimal"),
    ("(1) Intro", "Intro", "paren"),
    ("(a) item", "item", "paren"),
    ("Chapter 3: Methods", "Methods", "chapter-word"),
    ("Chapter 3", "Chapter 3", "chapter-word"),
    ("Part II - Theory", "Theory", "chapter-word"),
    ("Appendix A. Tables", "Tables", "chapter-word"),
    ("A. Appendix", "Appendix", "letter"),
    ("I. Introduction", "Introduction", "roman"),
    ("iv) small", "small", "roman"),
    ("§ 4.2 Scope", "Scope", "section-sign"),
    ("第2章 总则", "总则", "zh-chapter"),
    ("第三节 方法", "方法", "zh-chapter"),
    ("第一部分 基础", "基础", "zh-chapter"),
    ("第十二条\u3000规定", "规定", "zh-chapter"),
    ("一、总则", "总则", "zh-enum"),
    ("十二．附录", "附录", "zh-enum"),
    ("（一）背景", "背景", "zh-paren"),
    ("(一)背景", "背景", "zh-paren"),
    ("（1）概述", "概述", "zh-paren"),
    ("1、概述", "概述", "decimal"),
    ("1.概述", "概述", "decimal"),
    ("１．概述", "概述", "decimal"),
    ("① 步骤", "步骤", "circled"),
]
UNNUMBERED = ["Introduction", "3D graphics", "1984 in review", "C# basics", "Python 3.11 notes", "2.0",
              "概述", "第三方库", "一些说明", "Aside", "I/O", "A/B testing", "v2 API"]


@pytest.mark.parametrize("title,stripped,kind", NUMBERED)
def test_strip_heading_number(title, stripped, kind):
    assert strip_heading_number(title) == stripped
    assert number_pattern(title) == kind


@pytest.mark.parametrize("title", UNNUMBERED)
def test_unnumbered_titles_unchanged(title):
    assert strip_heading_number(title) == title
    assert number_pattern(title) is None


@given(st.text(max_size=30))
def test_strip_never_empties(title):
    out = strip_heading_number(title)
    assert out == title or (out and out in title)


def test_denumber_markdown_only_touches_headings():
    md = "# 1. Intro\n\n1. a list item\n\n## 1.1 Scope\n\n```\n# 2. code\n```"
    assert denumber_markdown(md) == "# Intro\n\n1. a list item\n\n## Scope\n\n```\n# 2. code\n```"


def test_unwritable_output_is_a_clear_error(docs_dir, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(HichunkError, match="cannot write"):
        build_corpus(str(blocker / "out"), dirs=[str(docs_dir)], progress=False)
