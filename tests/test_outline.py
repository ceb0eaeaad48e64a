"""Heading levels hold over the whole document, whatever window a heading was predicted in."""

from __future__ import annotations

import re

import pytest
from engine_doubles import ScriptedModel

from hichunk.engine import EngineSettings, infer_points
from hichunk.engine.outline import consistent_levels, heading_style, is_navigation, title_shaped
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

_DEPTH = re.compile(r"^(\d+(?:\.\d+)*)\s")


def numbered_book(chapters: int = 6, sections: int = 3, subsections: int = 2, body: int = 4) -> list[str]:
    """Lines of a numbered document: '1 Title', '1.1 Title', '1.1.1 Title', each followed by body lines."""
    lines = []
    for c in range(1, chapters + 1):
        lines += [f"{c} Chapter title {c}"] + [f"body{c}w{k}" for k in range(body)]
        for s in range(1, sections + 1):
            lines += [f"{c}.{s} Section title {c} {s}"] + [f"body{c}s{s}w{k}" for k in range(body)]
            for t in range(1, subsections + 1):
                lines += [f"{c}.{s}.{t} Sub title {c} {s} {t}"] + [f"body{c}s{s}t{t}w{k}" for k in range(body)]
    return lines


def window_relative(window) -> str:
    """A model that judges depth from its window alone: the shallowest number it sees is level 1."""
    depths = {i: len(m.group(1).split(".")) for i, t in enumerate(window.lines) if (m := _DEPTH.match(t))}
    top = min(depths.values(), default=1)
    return format_answer(ChunkStart(i, d - top + 1, True) for i, d in depths.items())


def test_windows_that_start_mid_section_get_document_levels():
    texts = numbered_book()
    true = {i: len(m.group(1).split(".")) for i, t in enumerate(texts) if (m := _DEPTH.match(t))}
    small = 60  # tokens: windows of a handful of lines, most starting inside a chapter
    local = infer_points(texts, ScriptedModel(window_relative, window_tokens=small, overhead=0),
                         EngineSettings(document_levels=False, recurrent=1))
    assert any(local.points[u][0] != lv for u, lv in true.items())  # the windowed model alone is inconsistent
    fixed = infer_points(texts, ScriptedModel(window_relative, window_tokens=small, overhead=0), EngineSettings(recurrent=1))
    assert {u: lv for u, (lv, _) in fixed.points.items()} == true


def test_majority_per_style_and_untitled_or_plain_starts_untouched():
    texts = ["2.1 Alpha", "2.2 Beta", "2.3 Gamma", "Plain heading", "body text here"]
    points = {0: (2, True), 1: (3, True), 2: (2, True), 3: (4, True), 4: (1, False)}
    out = consistent_levels(points, texts)
    # the plain heading keeps its place below the numbered ones (level 4 told as 3: no level is skipped)
    assert out == {0: (2, True), 1: (2, True), 2: (2, True), 3: (3, True), 4: (1, False)}


def test_no_level_is_skipped():
    texts = ["Title of the note", "body", "Usage", "body", "Options", "body", "Flags"]
    points = {0: (1, True), 2: (3, True), 4: (3, True), 6: (5, True)}
    assert consistent_levels(points, texts) == {0: (1, True), 2: (2, True), 4: (2, True), 6: (3, True)}


def test_outline_depth_nests_across_font_sizes():
    texts = ["1 Scheme tutorial", "1.1 Introduction", "1.1.1 Sandbox", "1.2 Variables", "2 Interfaces", "2.1 Music"]
    big, mid, small = LineLayout(size=1.7, bold=True), LineLayout(size=1.4, bold=True), LineLayout(size=1.2, bold=True)
    layouts = [big, mid, small, mid, big, mid]
    points = {0: (2, True), 1: (2, True), 2: (3, True), 3: (2, True), 4: (2, True), 5: (2, True)}
    levels = [lv for lv, _ in consistent_levels(points, texts, layouts).values()]
    assert levels == [1, 2, 3, 2, 1, 2]  # depth 2 below depth 1; typeset: depth 1 is level 1


def test_a_typeset_title_page_is_not_the_parent_of_section_1():
    texts = ["The keyval package", "David Carlisle", "1 Example", "body", "2 The interface", "body", "3 The macros"]
    title, section = LineLayout(size=1.7), LineLayout(size=1.4, bold=True)
    layouts = [title, LineLayout(), section, LineLayout(), section, LineLayout(), section]
    points = {0: (1, True), 2: (2, True), 4: (2, True), 6: (2, True)}
    out = consistent_levels(points, texts, layouts)
    assert [out[u][0] for u in (2, 4, 6)] == [1, 1, 1]
    # plain text keeps the title above its sections, as Markdown and text renderings have it
    assert [consistent_levels(points, texts)[u][0] for u in (2, 4, 6)] == [2, 2, 2]
    # a part above the numbered chapters keeps them below it
    texts_parts = texts[:4] + ["Part II Reference", "body", "3 The macros"]
    points_parts = {0: (1, True), 2: (2, True), 4: (1, True), 6: (2, True)}
    layouts_parts = layouts[:4] + [LineLayout(size=2.0, bold=True), LineLayout(), section]
    out = consistent_levels(points_parts, texts_parts, layouts_parts)
    assert out[2][0] == out[6][0] == 2 and out[4][0] == 1


def test_outline_depth_nests_and_fonts_order():
    texts = ["1 Intro", "1.1 Scope", "1.1.1 Detail", "2 Next", "2.1 More"]
    points = {0: (1, True), 1: (3, True), 2: (3, True), 3: (1, True), 4: (3, True)}
    assert [lv for lv, _ in consistent_levels(points, texts).values()] == [1, 2, 3, 1, 2]
    big, mid = LineLayout(size=1.6, bold=True), LineLayout(size=1.3, bold=True)
    texts = ["Getting started", "Installing", "Usage", "Overview"]
    layouts = [big, mid, mid, big]
    points = {0: (2, True), 1: (1, True), 2: (1, True), 3: (2, True)}  # the model put the smaller font above
    levels = [lv for lv, _ in consistent_levels(points, texts, layouts).values()]
    assert levels[0] == levels[3] <= levels[1] == levels[2]


def test_styles():
    assert heading_style("3.2.1 Title") .depth == 3 and heading_style("3.2.1 Title").numbering == "outline"
    assert heading_style("A.2 Appendix part").depth == 2
    assert heading_style("第2章 总论").numbering == "zh-章" and heading_style("第三节 方法").numbering == "zh-节"
    assert heading_style("Chapter 4. Data").numbering == "word-chapter"
    assert heading_style("一、总体要求").numbering == "zh-enum" and heading_style("（一）范围").numbering == "zh-paren"
    assert heading_style("INTRODUCTION").caps and not heading_style("Plain words").informative
    assert heading_style("Title", LineLayout(underline="=")).underline == "="


def test_a_start_on_running_text_has_no_title():
    from hichunk.chunkers import ChunkOptions, get_chunker
    from hichunk.document import parse_document

    text = ("This paragraph was added at the top to greet readers who come from the old site of the project.\n\n"
            "Installation\n\nRun the installer and wait until it is done.\n")
    model = ScriptedModel(lambda w: format_answer([ChunkStart(0, 1, True), ChunkStart(1, 1, True)]), window_tokens=500)
    tree = get_chunker("hichunk", ChunkOptions(hints="ignore", merge_over_chunk=False), model=model).chunk(parse_document(text, "text"))
    titles = [n.title for n in tree.nodes if n.kind in ("section", "chunk")]
    assert "Installation" in titles and not any(t and t.startswith("This paragraph") for t in titles)
    assert all(not t or "This paragraph" not in t for leaf in tree.leaves() for t in tree.breadcrumb(leaf))


@pytest.mark.slow
def test_a_book_length_document_keeps_one_level_per_heading_style():
    from hichunk.chunkers import ChunkOptions, get_chunker
    from hichunk.document import parse_document

    body = ("The system stores energy during the day and releases it in the evening. "
            "Owners should check the inverter settings every season and keep the vents clear.")
    parts = []
    for c in range(1, 53):
        parts.append(f"Chapter {c}. Topic number {c}\n\n{body} {body}\n\n")
        for s in range(1, 6):
            parts.append(f"{c}.{s} Section {s} of chapter {c}\n\n" + f"{body}\n\n" * 6)
            for t in range(1, 3):
                parts.append(f"{c}.{s}.{t} Detail {t}\n\n" + f"{body}\n\n" * 4)
    text = "".join(parts)
    assert len(text.split()) > 100_000
    tree = get_chunker("hichunk", ChunkOptions(hints="ignore", merge_over_chunk=False)).chunk(parse_document(text, "text", "book"))
    assert "".join(tree.raw_text(leaf) for leaf in tree.leaves()) == text
    levels: dict[int, set[int]] = {}
    for split in tree.splits:
        line = text[split.start : text.index("\n", split.start)]
        m = re.match(r"^(\d+(?:\.\d+)*) ", line)
        if split.title and m:
            levels.setdefault(len(m.group(1).split(".")), set()).add(split.level)
    assert levels and all(len(found) == 1 for found in levels.values()), levels
    depths = sorted(levels)
    assert [next(iter(levels[d])) for d in depths] == sorted(next(iter(levels[d])) for d in depths)


@pytest.mark.parametrize("label", ["第{n}章 总论", "第\u00a0{n}\u00a0章 GNU/Linux 教程", "Chapter {n}. Overview", "第{zh}章 概述"])
def test_a_numbered_label_heads_the_outline_numbers_that_follow_it(label):
    zh = "一二三"
    texts, points = [], {}
    for n in (1, 2, 3):
        points[len(texts)] = (2, True)  # the windows put the chapter line on level 2 ...
        texts += [label.format(n=n, zh=zh[n - 1]), "正文。"]
        for k in (1, 2):
            points[len(texts)] = (2, True)  # ... and its sections too
            texts += [f"{n}.{k} 小节", "正文。"]
    out = consistent_levels(points, texts)
    assert [out[u][0] for u in sorted(out)] == [1, 2, 2] * 3


def test_a_label_that_does_not_number_the_sections_keeps_its_level():
    texts = ["Part 1 Basics", "1.1 One", "2.1 Two", "Part 2 More", "5.1 Five", "6.1 Six"]
    points = {i: (2, True) for i in range(len(texts))}
    out = consistent_levels(points, texts)
    assert out[0][0] == out[1][0] == out[3][0] == out[4][0]  # not moved above the sections it does not number


def test_untitled_front_matter_is_a_sibling_of_the_top_headings():
    texts = ["[![build](badge.svg)](ci)", "![logo](logo.png)", "", "Quick start", "body", "", "Install", "body", "", "API"]
    points = {3: (3, True), 6: (4, True), 9: (3, True)}  # the model hung every heading under the badges
    out = consistent_levels(points, texts)
    assert [out[u][0] for u in (3, 6, 9)] == [1, 2, 1]
    opens_with_title = {0: (1, True), 3: (2, True), 6: (3, True)}
    assert consistent_levels(opens_with_title, ["My tool"] + texts[1:]) == opens_with_title


def test_a_markup_line_opening_the_document_is_no_title_and_no_parent_of_the_headings():
    """A README opening with ``<div align="right">``: the model started a level-1 chunk there and hung the
    title under it; markup names nothing, so it is front matter beside the top headings."""
    texts = ['<div align="right">', '<a href="https://example.org"><img alt="" src="logo.svg"></a>', "</div>", "", "1. NexT",
             "body", "1.1 Preview", "body", "1.2 Install", "body"]
    assert not title_shaped(texts[0]) and not title_shaped("![logo](logo.png) <br>")
    assert title_shaped("2.3.1") and title_shaped("<b>Install</b>")  # numbers alone still title (changelog versions)
    points = {0: (1, False), 4: (2, True), 6: (3, True), 8: (3, True)}  # the engine takes the title off the markup
    out = consistent_levels(points, texts)
    assert [out[u][0] for u in (0, 4, 6, 8)] == [1, 1, 2, 2]


@pytest.mark.parametrize("top, middle", [("{roman}. Distributions", "{letter}. Files"), ("{zh}、总体要求", "（{zh}）工作范围")])
def test_plain_numbers_restarting_under_each_letter_or_paren_heading_nest_below_it(top, middle):
    """Harvard outlines (I. > A. > 1.) and Chinese reports (一、 > （一） > 1.) number their third level plainly."""
    zh = "一二三"
    texts, points = [], {}
    for n in (1, 2):
        points[len(texts)] = (1, True)
        texts += [top.format(roman="I" * n, zh=zh[n - 1]), "body"]
        for k in (1, 2):
            points[len(texts)] = (2, True)
            texts += [middle.format(letter="AB"[k - 1], zh=zh[k - 1]), "body"]
            for i in (1, 2, 3):
                points[len(texts)] = (2, True)  # the windows put the items beside their section
                texts += [f"{i}. Step {i}", "body"]
    out = consistent_levels(points, texts)
    assert [out[u][0] for u in sorted(out)] == ([1] + [2, 3, 3, 3] * 2) * 2


def test_chinese_enumerations_restarting_under_each_section_label_nest_below_it():
    texts, points = [], {}
    for zh in "一二三":
        points[len(texts)] = (2, True)
        texts += [f"第{zh}节 接口", "正文。"]
        for k in "一二":
            points[len(texts)] = (2, True)
            texts += [f"{k}、def get_info()", "正文。"]
    out = consistent_levels(points, texts)
    assert [out[u][0] for u in sorted(out)] == [1, 2, 2] * 3


def test_plain_numbers_that_only_continue_past_a_letter_heading_keep_their_level():
    texts = ["1. Intro", "body", "A. Note", "body", "2. Usage", "body", "3. More", "body", "4. End", "body"]
    points = {0: (1, True), 2: (2, True), 4: (1, True), 6: (1, True), 8: (1, True)}
    assert consistent_levels(points, texts) == points


def test_a_larger_heading_after_the_first_numbered_one_is_a_part_above_the_numbers():
    texts = ["Listings manual", "Preface", "User's guide", "1 Getting started", "1.1 A minimal file", "body",
             "2 The next steps", "2.1 License", "Reference guide", "3 Main reference", "3.1 How to read it"]
    part, chapter, section = LineLayout(size=2.05, bold=True), LineLayout(size=1.45, bold=True), LineLayout(size=1.2, bold=True)
    layouts = [LineLayout(size=2.5), chapter, part, chapter, section, LineLayout(), chapter, section, part, chapter, section]
    points = {u: (3, True) for u, t in enumerate(texts) if t != "body"}  # a model that saw no depth at all
    out = consistent_levels(points, texts, layouts)
    assert [out[u][0] for u in (2, 3, 4, 6, 7, 8, 9, 10)] == [1, 2, 3, 2, 3, 1, 2, 3]  # the title (unit 0) aside


@pytest.mark.parametrize("top, below", [("第{n}章 总论", "第{zh}节 方法"), ("Part {n}: Basics", "Chapter {n}. Overview"),
                                        ("{zh}、总体要求", "（{zh}）工作范围"), ("{roman}. Overview", "{letter}. Details")])
def test_labels_of_one_hierarchy_nest(top, below):
    zh = "一二三"
    texts, points = ["目 录"], {}
    for n in (1, 2, 3):
        points[len(texts)] = (2, True)  # the windows put both labels on one level
        texts += [top.format(n=n, zh=zh[n - 1], roman="I" * n), "正文。"]
        for k in (1, 2, 3):
            points[len(texts)] = (2, True)
            texts += [below.format(n=3 * (n - 1) + k, zh=zh[k - 1], letter="ABC"[k - 1]), "正文。"]
    out = consistent_levels(points, texts)
    assert [out[u][0] for u in sorted(out)] == [1, 2, 2, 2] * 3


def test_an_opening_title_on_the_level_of_its_sections_goes_above_them():
    texts = ["loadkeys(1)", "body", "NAME", "body", "SYNOPSIS", "body", "DESCRIPTION"]
    points = {0: (2, True), 2: (2, True), 4: (2, True), 6: (2, True)}  # the title put beside the sections
    out = consistent_levels(points, texts)
    assert out[0][0] == 1 and {out[u][0] for u in (2, 4, 6)} == {2}
    siblings = ["第一部分 简介", "body", "第二部分 安装", "body", "第三部分 示例"]
    points = {0: (2, True), 2: (2, True), 4: (2, True)}
    assert {lv for lv, _ in consistent_levels(points, siblings).values()} == {1}  # one numbering: siblings


def test_a_sentence_added_at_the_top_does_not_change_the_levels():
    texts = ["loadkeys(1)", "body", "NAME", "body", "SYNOPSIS", "body", "DESCRIPTION"]
    points = {0: (2, True), 2: (2, True), 4: (2, True), 6: (2, True)}
    before = consistent_levels(points, texts)
    edited = ["This page was added to the manual in its latest release, before the title."] + texts
    after = consistent_levels({u + 1: v for u, v in points.items()}, edited)
    assert [after[u + 1][0] for u in sorted(points)] == [before[u][0] for u in sorted(points)] == [1, 2, 2, 2]


def test_a_readme_banner_in_html_names_the_project_and_its_sections_stay_on_the_top_level():
    banner = ['<p align="center">', '<img alt="logo" src="https://example.org/logo.png" width="120">', "</p>",
              '<h1 align="center">Vant</h1>', '<p align="center">A lightweight UI library for mobile web apps.</p>',
              '<a href="https://example.org/docs">Documentation</a>', "&nbsp;", "·", "&nbsp;",
              '<a href="./README.zh-CN.md">中文介绍</a>', "</p>"]
    sections = ["Features", "body", "Install", "body", "Quickstart", "body"]
    texts = banner + sections
    points = {len(banner) + i: (2, True) for i in (0, 2, 4)}  # the windows hung the sections under the banner
    assert {lv for lv, _ in consistent_levels(points, texts).values()} == {1}  # beside it, none their title
    words = ["A lightweight UI library for mobile web apps, with a sentence of its own.", *sections]
    points = {1 + i: (2, True) for i in (0, 2, 4)}
    assert [lv for _, (lv, _) in sorted(consistent_levels(points, words).items())] == [1, 2, 2]  # words: a title


def test_a_navigation_line_is_no_title_above_the_documents_chapters():
    texts = ["Back to Fetchmail Home Page | $Date$", "1. Frequently Asked Questions", "1.1 General problems",
             "body", "2. General problems", "2.1 G1. What is fetchmail?", "body"]
    points = {0: (1, True), 1: (2, True), 2: (3, True), 4: (2, True), 5: (3, True)}  # all hung under the bar
    out = consistent_levels(points, texts)
    assert out[0] == (1, False)  # still a chunk start, but no heading
    assert [out[u][0] for u in (1, 2, 4, 5)] == [1, 2, 1, 2]
    assert is_navigation("English | [简体中文](./README_cn.md) | [日本語](./README_ja.md)")
    assert not is_navigation("| Option | Meaning |")  # a table row
    assert not is_navigation("Choose the mode | it decides how the daemon polls each of your servers")


def test_an_unnumbered_title_goes_above_numbered_chapters_put_beside_it():
    texts = ["SBCL Internals", "body", "1 Build", "1.1 Cold init", "body", "2 Calling Convention", "2.1 Local calls"]
    points = {0: (1, True), 2: (1, True), 3: (2, True), 5: (1, True), 6: (2, True)}
    out = consistent_levels(points, texts)
    assert [out[u][0] for u in sorted(out)] == [1, 2, 3, 2, 3]
    plain = ["Introduction", "body", "Usage", "body", "Options"]  # nothing tells a title from a first section
    points = {0: (1, True), 2: (1, True), 4: (1, True)}
    assert consistent_levels(points, plain) == points


def test_body_size_numbers_late_in_a_book_do_not_flatten_its_chapters():
    """A licence appendix ("0. PREAMBLE", "1. APPLICABILITY") in body size is not the top of a typeset book."""
    chapter, section, sub = LineLayout(size=2.5, bold=True), LineLayout(size=1.45, bold=True), LineLayout(size=1.2, bold=True)
    texts, layouts = ["Developer Manual", "body"], [LineLayout(size=1.7), LineLayout()]
    for c in (1, 2, 3):
        texts += [f"Chapter {c} Title {c}", "body", f"{c}.1 Section", "body", f"{c}.1.1 Detail", "body", f"{c}.2 More", "body"]
        layouts += [chapter, LineLayout(), section, LineLayout(), sub, LineLayout(), section, LineLayout()]
    licence = LineLayout(bold=True)
    texts += ["Part Program", "body", "0. PREAMBLE", "body", "1. APPLICABILITY", "body", "2. VERBATIM COPYING", "body"]
    layouts += [licence, LineLayout(), licence, LineLayout(), licence, LineLayout(), licence, LineLayout()]
    points = {u: (2, True) for u, t in enumerate(texts) if t != "body"}  # the windows put every heading on level 2
    out = consistent_levels(points, texts, layouts)
    level = {texts[u]: lv for u, (lv, _) in out.items()}
    assert [level[f"Chapter {c} Title {c}"] for c in (1, 2, 3)] == [1, 1, 1]
    assert [level[f"{c}.1 Section"] for c in (1, 2, 3)] == [2, 2, 2] and level["2.1.1 Detail"] == 3
    assert heading_style("Part Program").numbering == "" and heading_style("Part II Reference").numbering == "word-part"
    assert heading_style("附录").numbering == heading_style("附录一 术语").numbering == "word-appendix"
    assert heading_style("附录说明").numbering == ""
    assert heading_style("Appendix").numbering == "word-appendix" and heading_style("Chapter One").numbering == "word-chapter"


def test_bare_numbers_do_not_break_the_nesting_of_outline_numbers():
    """Values such as "0.6" or "1.2" on a line of their own do not break the nesting of "1.1" under "1"."""
    chapter, section, sub = LineLayout(size=1.6), LineLayout(size=1.3), LineLayout(size=1.2)
    texts, layouts = [], []
    for c in (1, 2, 3):
        texts += [f"{c} Chapter", f"{c}.1 Section", f"{c}.1.1 Item", "0.6", "0.0", f"{c}.1.2 Item", "0.5"]
        layouts += [chapter, section, sub, LineLayout(), LineLayout(), sub, LineLayout()]
    points = {u: (2, True) for u in range(len(texts))}  # values predicted as starts, as real PDFs of tables have them
    out = consistent_levels(points, texts, layouts)
    assert [out[u][0] for u in range(len(texts)) if texts[u][0] in "123"] == [1, 2, 3, 3] * 3


def test_a_navigation_list_above_the_first_heading_is_front_matter():
    texts = ["- Table of Contents", "- Next Chapter", "", "Chapter 1: Introducing zsh", "", "1.1: Sources", "body",
             "1.2: What is it good at?", "body"]
    points = {3: (2, True), 5: (3, True), 7: (3, True)}  # the model hung the chapter under the navigation links
    assert [consistent_levels(points, texts)[u][0] for u in (3, 5, 7)] == [1, 2, 2]
    said = ["- Zsh is a shell designed for interactive use, also a scripting language"] + texts[1:]
    assert [consistent_levels(points, said)[u][0] for u in (3, 5, 7)] == [2, 3, 3]  # a real sentence: left as it is


@pytest.mark.parametrize("label", ["Appendix A", "附录 A", "附录\u00a0A", "附錄A"])
def test_an_appendix_label_beside_numbered_chapters_is_their_sibling(label):
    """"Appendix A" opens "A.1", but "A.1" has the style of "1.1", which nests under "1.": the label is a chapter."""
    texts, points = [], {}
    for c in ("1", "2", "3"):
        points[len(texts)] = (3, True)
        texts += [f"{c}. Chapter {c}", "body"]
        for k in (1, 2):
            points[len(texts)] = (4, True)
            texts += [f"{c}.{k} Section", "body"]
    points[len(texts)] = (2, True)
    texts += [label, "body"]
    for k in (1, 2):
        points[len(texts)] = (4, True)
        texts += [f"A.{k} Reference", "body"]
    out = consistent_levels(points, texts)
    assert [out[u][0] for u in sorted(out)] == [1, 2, 2] * 3 + [1, 2, 2]


def test_a_numbered_list_inside_a_section_does_not_end_its_chapter():
    """ "1.", "4.", "7." between "2.1.2" and "2.1.3" are the items of a list in that section, not chapters."""
    chapter, section, body = LineLayout(size=1.6, bold=True), LineLayout(size=1.3, bold=True), LineLayout()
    texts = ["1 Intro", "1.1 Scope", "2 Expansion", "2.1 Parameters", "2.1.2 Rules",
             "1. Nested substitution", "4. Internal flags", "7. Subscripting", "2.1.3 Examples", "3 Options"]
    layouts = [chapter, section, chapter, section, section, body, body, body, section, chapter]
    # the windows put the chapters and the list's items on level 1
    points = {0: (1, True), 1: (2, True), 2: (1, True), 3: (2, True), 4: (3, True),
              5: (1, True), 6: (1, True), 7: (1, True), 8: (3, True), 9: (1, True)}
    for lay in (layouts, None):
        level = {texts[u]: lv for u, (lv, _) in consistent_levels(points, texts, lay).items()}
        assert [level[t] for t in ("1 Intro", "2 Expansion", "3 Options")] == [1, 1, 1]
        assert [level[t] for t in texts[5:8]] == [4, 4, 4]  # one level below "2.1.2 Rules", which holds them
        assert level["2.1.3 Examples"] == 3
    # the next chapter's number is the next chapter, whatever stray "1.73" of running text follows it
    stray = ["1 Intro", "1.1 Scope", "1.2 Usage", "2. Options", "1.73 since it offered", "2.1 Flags"]
    out = consistent_levels({0: (1, True), 1: (2, True), 2: (2, True), 3: (1, True), 4: (2, True), 5: (2, True)}, stray)
    assert out[3][0] == 1
    # a slide's navigation line ("2.1 Parts 2 Install") before chapter 2 has opened does not make items of chapters
    slides = ["Beamer theme", "2.1 Parts 2 Install", "1 Intro", "2 Install", "2.1 Parts", "3 Usage", "3.1 Build"]
    out = consistent_levels({0: (1, True), 1: (2, True), 2: (1, True), 3: (1, True), 4: (2, True), 5: (1, True),
                             6: (2, True)}, slides)
    assert [out[u][0] for u in (2, 3, 5)] == [out[5][0]] * 3 and out[4][0] == out[5][0] + 1
    # the same numbers between chapters are chapters
    chapters = ["1. Intro", "1.1 Scope", "2. Usage", "2.1 Options", "3. Limits", "3.1 Memory"]
    out = consistent_levels({u: (1 + u % 2, True) for u in range(len(chapters))}, chapters)
    assert [lv for lv, _ in out.values()] == [1, 2, 1, 2, 1, 2]


def test_an_appendix_sits_where_the_chapters_are():
    texts = ["bilibili-api", "第\u00a01\u00a0章", "body", "第\u00a02\u00a0章", "2.1\u00a0特色", "body", "第\u00a03\u00a0章", "body",
             "附录\u00a0A", "常见问题", "body"]
    points = {0: (1, True), 1: (1, True), 3: (1, True), 4: (2, True), 6: (1, True), 8: (3, True), 9: (3, True)}
    out = consistent_levels(points, texts)
    assert out[8][0] == out[1][0] == out[6][0] and out[4][0] == out[1][0] + 1
    # one "Chapter 13" line of running text is no evidence of where chapters are
    lone = ["1. Introduction", "body", "Chapter 13: Drawing", "2. Preface", "Appendix A", "body"]
    out = consistent_levels({0: (1, True), 2: (2, True), 3: (1, True), 4: (1, True)}, lone)
    assert out[4][0] == 1



def test_without_chapter_labels_an_appendix_sits_where_the_chapter_numbers_are():
    """A texinfo manual as text: its title over numbered chapters, and a licence appendix the head put on the
    title's level; beside the title, it would read as the title's sibling and push the whole outline down."""
    texts = ["GNU Coreutils", "This manual documents version 9.1.", "1 Introduction", "body", "2 Common options",
             "2.1 Exit status", "body", "3 Output of entire files", "body", "Appendix A GNU Free Documentation License",
             "body"]
    points = {0: (1, True), 2: (2, True), 4: (2, True), 5: (3, True), 7: (2, True), 9: (1, True)}
    out = consistent_levels(points, texts)
    assert [out[u][0] for u in (0, 2, 4, 5, 7, 9)] == [1, 2, 2, 3, 2, 2]


def _typeset_labels(chapter: str) -> tuple[list[str], list[LineLayout]]:
    """A typeset manual: a title page, then chapter labels over outline-numbered sections, then a licence."""
    title, label, section = LineLayout(size=1.7), LineLayout(size=2.5, bold=True), LineLayout(size=1.45, bold=True)
    texts, layouts = ["Developer Manual V2.9", "body"], [title, LineLayout()]
    for c in (1, 2, 3):
        texts += [chapter.format(c), "body", f"{c + 1}.1 Section", "body"]  # "2.1" under "Chapter 1": no label opens it
        layouts += [label, LineLayout(), section, LineLayout()]
    return texts, layouts


@pytest.mark.parametrize("chapter", ["Chapter {} Introduction", "第 {} 章 简介", "第 {} 节 简介"])
def test_typeset_chapter_labels_are_siblings_of_the_title_page(chapter):
    """In a PDF the title page is no chapter's parent: chapter labels ("Chapter 1", "第 1 章", an article's
    "第 1 节") go on level 1, as the book's outline has them, with their sections one below."""
    texts, layouts = _typeset_labels(chapter)
    points = {u: (2 if "." not in t else 3, True) for u, t in enumerate(texts) if t != "body"} | {0: (1, False)}
    out = consistent_levels(points, texts, layouts)
    assert [out[u][0] for u in range(2, len(texts), 4)] == [1, 1, 1]
    assert [out[u][0] for u in range(4, len(texts), 4)] == [2, 2, 2]
    # in plain text (no typography) the rule does not apply
    assert consistent_levels(points, texts)[2][0] == 2


def test_typeset_chapter_labels_stay_below_an_opening_part_and_beside_their_peers():
    texts, layouts = _typeset_labels("Chapter {} Introduction")
    texts[0], layouts[0] = "Part I Configuration", LineLayout(size=2.8, bold=True)
    points = {u: (2 if "." not in t else 3, True) for u, t in enumerate(texts) if t != "body"} | {0: (1, True)}
    out = consistent_levels(points, texts, layouts)
    assert out[0][0] == 1 and [out[u][0] for u in range(2, len(texts), 4)] == [2, 2, 2]
    # labels with unnumbered headings on their own level, in their type, are no evidence of the top: left as they are
    texts, layouts = _typeset_labels("Chapter {} Introduction")
    texts[4], layouts[4] = "Getting the sources", layouts[2]
    points = {u: (2, True) for u, t in enumerate(texts) if t != "body"} | {0: (1, False)}
    out = consistent_levels(points, texts, layouts)
    assert [out[u][0] for u in range(2, len(texts), 4)] == [2, 2, 2]
    # in the sections' smaller type it is a section: it goes below the labels, which then head the document
    texts, layouts = _typeset_labels("Chapter {} Introduction")
    texts[4] = "Getting the sources"
    out = consistent_levels(points, texts, layouts)
    assert [out[u][0] for u in range(2, len(texts), 2)] == [1, 2, 1, 2, 1, 2]


def test_a_typeset_appendix_goes_beside_the_numbered_chapters():
    title, chapter = LineLayout(size=1.7), LineLayout(size=1.6, bold=True)
    texts = ["Essay on engraving", "body", "1 Engraving", "body", "2 Software", "body", "3 Examples", "body",
             "Appendix A GNU Free Documentation License", "body"]
    layouts = [title, LineLayout(), chapter, LineLayout(), chapter, LineLayout(), chapter, LineLayout(), chapter, LineLayout()]
    points = {0: (1, True), 2: (2, True), 4: (2, True), 6: (2, True), 8: (3, True)}
    out = consistent_levels(points, texts, layouts)
    assert [out[u][0] for u in (2, 4, 6, 8)] == [1, 1, 1, 1]


def test_an_untitled_opening_is_no_parent_of_the_headings():
    """A preamble that names nothing (a sentence, badges, hard-wrapped HTML, a contents block) opens the
    document untitled: it is a sibling of the top headings, not their parent, even when it says something."""
    body = ["", "Chapter 1 Getting started", "", "1.1 Sources", "body", "1.2 Building", "body", "Chapter 2 Usage", "body"]
    points = {2: (2, True), 4: (3, True), 6: (3, True), 8: (2, True)}  # the windows hung everything under the preamble
    preambles = [
        ["Xmaxima is a graphical interface for Maxima, written in Tcl/Tk, with a console and a browser."],
        ['<p align="center"><a', 'href="https://www.github.com/theajack/cnchar/stargazers"', 'target="_black"><img',
         'alt="stars" /></a></p>', "A library for Chinese characters, with pinyin and strokes."],
    ]
    for preamble in preambles:
        texts = preamble + body
        shift = len(preamble) - 1
        out = consistent_levels({u + shift: v for u, v in points.items()}, texts)
        assert [out[u + shift][0] for u in sorted(points)] == [1, 2, 2, 1], preamble
    # a first line that may be the title the model missed keeps the tree as the model gave it
    titled = ["Getting started with zsh"] + body
    assert [consistent_levels(points, titled)[u][0] for u in sorted(points)] == [2, 3, 3, 2]
    # so does a missed heading numbered above the headings ("1. NodeJieba" over "1.1", "1.2")
    numbered = ["[![Build Status](https://ci.example/badge.svg)](https://ci.example)", "1. NodeJieba", "",
                "1.1 Introduction", "body", "1.2 Install", "body"]
    points = {3: (2, True), 5: (2, True)}
    assert [consistent_levels(points, numbered)[u][0] for u in (3, 5)] == [2, 2]


def test_faq_questions_are_siblings():
    """Questions of one FAQ list do not nest under each other, however the windows drifted (2, 3, 4)."""
    texts = ["How to get things to work", "body", "Why does $var not split?", "body", "In which file do I put it?",
             "body", "How do I get a newline in my prompt?", "body", "Options", "body", "What does -x do?", "body"]
    points = {0: (1, True), 2: (2, True), 4: (3, True), 6: (4, True), 8: (2, True), 10: (3, True)}
    out = consistent_levels(points, texts)
    assert [out[u][0] for u in (2, 4, 6)] == [2, 2, 2]
    assert out[10][0] == 3  # a question under another kind of heading keeps its level
    out = consistent_levels({0: (1, True), 2: (2, True), 4: (3, True)}, ["常见问题", "body", "什么是 TeX？", "body", "如何安装？"])
    assert [out[u][0] for u in (0, 2, 4)] == [1, 2, 2]  # "？" reads as "?"


def test_chapter_labels_under_parts_take_the_numbers_they_open_along():
    """A book of parts and chapters whose sections were read one level too shallow, beside their chapter
    (the GnuCash and Maxima guides as text): once the chapters nest under the parts, "1.1" sits below
    "Chapter 1" again. A stray "2 a sin(x)" among the labels (a formula line taken for a heading) does
    not make the chapters siblings of depth-1 numbers."""
    texts, points = ["Contents", "body"], {0: (1, False)}
    for part in ("I", "II"):
        points[len(texts)] = (1, True)
        texts += [f"PART {part}"]
        for n in (1, 2, 3):
            points[len(texts)] = (2, True)
            texts += [f"Chapter {n}", "body"]
            for k in (1, 2):
                points[len(texts)] = (2, True)  # the outline head put the sections beside their chapter
                texts += [f"{n}.{k} Topic {k}", "body"]
            if part == "II" and n == 1:
                points[len(texts)] = (1, True)
                texts += ["2 a sin(x)", "body"]
    out = consistent_levels(points, texts)
    level = {texts[u]: lv for u, (lv, _) in sorted(out.items())}
    assert level["PART I"] == 1 and level["Chapter 1"] == 2 and level["1.1 Topic 1"] == 3


def test_an_appendix_label_beside_many_numbered_chapters_stays_their_sibling():
    texts, points = [], {}
    for n in (1, 2, 3):
        points[len(texts)] = (1, True)
        texts += [f"{n} Chapter {n}", "body"]
        points[len(texts)] = (2, True)
        texts += [f"{n}.1 Section", "body"]
    points[len(texts)] = (2, True)
    texts += ["Appendix A", "body"]
    points[len(texts)] = (2, True)
    texts += ["A.1 Tables", "body"]
    out = consistent_levels(points, texts)
    assert out[texts.index("Appendix A")][0] == 1 and out[texts.index("A.1 Tables")][0] == 2


def test_a_clearly_smaller_heading_type_is_a_deeper_level():
    # a DocBook manual: chapters, sections and subsections in 2.5, 2.07 and 1.73 times the body type, unnumbered;
    # the model put sections and subsections on one level
    chapter, section, sub = (LineLayout(size=2.5, bold=True), LineLayout(size=2.07, bold=True),
                             LineLayout(size=1.73, bold=True))
    texts = ["Overview", "Features", "Easy to Use", "International Support", "Getting Help", "Website",
             "The Basics", "Accounting Concepts", "The Five Accounts", "Double Entry"]
    layouts = [chapter, section, sub, sub, section, sub, chapter, section, sub, sub]
    points = {u: (1 if lay is chapter else 2, True) for u, lay in enumerate(layouts)}
    out = consistent_levels(points, texts, layouts)
    assert [out[u][0] for u in range(len(texts))] == [1, 2, 3, 3, 2, 3, 1, 2, 3, 3]
    # a title page's two large lines come before every chapter: no parent tier, the chapters stay on top
    title = LineLayout(size=3.0, bold=True)
    texts2, layouts2 = ["GnuCash", "Tutorial and Concepts Guide", *texts], [title, title, *layouts]
    points2 = {0: (1, True), 1: (1, True), **{u + 2: lv for u, lv in points.items()}}
    out2 = consistent_levels(points2, texts2, layouts2)
    assert [out2[u][0] for u in range(2, len(texts2))] == [1, 2, 3, 3, 2, 3, 1, 2, 3, 3]
    # sizes a rounding apart are one type: no level is forced between them
    near = LineLayout(size=1.95, bold=True)
    layouts3 = [chapter, section, near, near, section, near, chapter, section, near, near]
    out3 = consistent_levels(points, texts, layouts3)
    assert [out3[u][0] for u in range(len(texts))] == [1, 2, 2, 2, 2, 2, 1, 2, 2, 2]


def test_a_smaller_type_goes_deeper_only_after_the_numbers_have_nested():
    """A texinfo manual: a title page and one index title in larger type than the numbered chapters, the model
    putting chapters and sections one level too deep. The numbers lift the chapters to the top first; pushing
    the sections below the chapters before that kept both a level too deep."""
    title, big, chapter, section = LineLayout(size=1.9), LineLayout(size=1.85), LineLayout(size=1.6), LineLayout(size=1.3)
    texts = ["LilyPond", "Usage", "1 Running lilypond", "1.1 Normal usage", "body", "1.2 Command-line usage", "body",
             "LilyPond command index", "2 Updating files", "2.1 Why does the syntax change?", "body",
             "2.2 Invoking convert-ly", "body", "Appendix A GNU Free Documentation License", "body"]
    layouts = [title, title, chapter, section, LineLayout(), section, LineLayout(), big, chapter, section, LineLayout(),
               section, LineLayout(), chapter, LineLayout()]
    points = {0: (1, True), 1: (2, True), 2: (2, True), 3: (3, True), 5: (2, True), 7: (2, True), 8: (2, True),
              9: (3, True), 11: (2, True), 13: (2, True)}
    out = consistent_levels(points, texts, layouts)
    assert [out[u][0] for u in (2, 8)] == [1, 1] and [out[u][0] for u in (3, 5, 9, 11)] == [2, 2, 2, 2]
