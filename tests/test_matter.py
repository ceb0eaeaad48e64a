"""Front and back matter sit beside the chapters, never inside the chapter before them."""

from __future__ import annotations

from hichunk.engine.matter import front_and_back_matter_as_chapters


def test_indexes_and_acknowledgements_go_to_the_chapters_level():
    texts = ["R Data Import/Export", "Acknowledgements", "1 Introduction", "1.1 Imports", "2 Spreadsheets",
             "2.1 Variations", "Function and variable index", "Concept index"]
    points = {0: (1, True), 1: (2, True), 2: (1, True), 3: (2, True), 4: (1, True), 5: (2, True),
              6: (2, True), 7: (2, True)}
    out = front_and_back_matter_as_chapters(points, texts)
    assert [out[u][0] for u in (1, 6, 7)] == [1, 1, 1]
    # an appendix after the indexes does not make them commands
    out = front_and_back_matter_as_chapters(points | {8: (1, True)}, texts + ["Appendix A References"])
    assert [out[u][0] for u in (6, 7)] == [1, 1]
    assert {u: out[u] for u in (0, 2, 3, 4, 5)} == {u: points[u] for u in (0, 2, 3, 4, 5)}


def test_an_index_beside_the_title_goes_down_beside_the_chapters():
    """A texinfo manual as text: the head put its "Index" on the title's level, above the chapters."""
    texts = ["GNU Coreutils", "1 Introduction", "2 Common options", "2.1 Exit status", "Index"]
    points = {0: (1, True), 1: (2, True), 2: (2, True), 3: (3, True), 4: (1, True)}
    assert front_and_back_matter_as_chapters(points, texts)[4] == (2, True)
    # with nothing but matter after the title, there is no top to go to
    only = {0: (1, True), 1: (2, True), 2: (1, True)}
    assert front_and_back_matter_as_chapters(only, ["Guide", "Preface", "Index"]) == only


def test_the_top_is_the_level_under_a_title():
    """Below a Markdown title ("# 使用指南" over "## 安装"), references go where the sections are."""
    texts = ["使用指南", "安装", "配置", "高级用法", "参考文献"]
    points = {0: (1, True), 1: (2, True), 2: (2, True), 3: (3, True), 4: (3, True)}
    assert front_and_back_matter_as_chapters(points, texts)[4] == (2, True)


def test_what_is_not_front_or_back_matter_keeps_its_level():
    # an index with numbered headings after it is a command of a user interface, not a book's index
    texts = ["Help", "1 Indexes", "Rename Current Index", "Delete Current Index", "2 Update", "2.1 Cross references"]
    points = {0: (1, True), 1: (1, True), 2: (2, True), 3: (2, True), 4: (1, True), 5: (2, True)}
    assert front_and_back_matter_as_chapters(points, texts) == points
    # untitled starts (running text that opens with the word) are not headings
    plain = ["Manual", "1 Usage", "1.1 Options", "References", "2 Limits"]
    untitled = {0: (1, True), 1: (1, True), 2: (2, True), 3: (2, False), 4: (1, True)}
    assert front_and_back_matter_as_chapters(untitled, plain) == untitled
    # a numbered one is the numbering's to place
    numbered = ["Manual", "1 Usage", "1.1 Options", "2 Limits", "Appendix A Indexes"]
    points = {0: (1, True), 1: (1, True), 2: (2, True), 3: (1, True), 4: (2, True)}
    assert front_and_back_matter_as_chapters(points, numbered) == points


def test_references_closing_every_chapter_stay_in_their_chapters():
    texts = ["LaTeX 笔记", "第一章 简介", "1.1 历史", "参考文献", "第二章 入门", "2.1 你好", "参考文献", "索引"]
    points = {0: (1, True), 1: (1, True), 2: (2, True), 3: (2, True), 4: (1, True), 5: (2, True),
              6: (2, True), 7: (2, True)}
    out = front_and_back_matter_as_chapters(points, texts)
    assert out[3] == out[6] == (2, True) and out[7] == (1, True)


def test_acknowledgements_inside_a_preface_stay_there():
    texts = ["GNU Octave", "Preface", "Acknowledgements", "Citing Octave", "1 A Brief Introduction",
             "1.1 Running Octave", "2 Getting Started", "Concept Index"]
    points = {0: (1, True), 1: (2, True), 2: (3, True), 3: (3, True), 4: (2, True), 5: (3, True),
              6: (2, True), 7: (3, True)}
    out = front_and_back_matter_as_chapters(points, texts)
    assert out[2] == (3, True) and out[7] == (2, True)


def test_letter_spaced_chinese_matter_is_matter():
    """Theses set "致 谢" and "参考 文献" letter-spaced; they are acknowledgements and references all the same."""
    texts = ["论文", "第一章 绪论", "1.1 背景", "第二章 方法", "2.1 数据", "致 谢", "参 考 文 献"]
    points = {0: (1, True), 1: (2, True), 2: (3, True), 3: (2, True), 4: (3, True), 5: (3, True), 6: (3, True)}
    out = front_and_back_matter_as_chapters(points, texts)
    assert [out[5][0], out[6][0]] == [2, 2]
