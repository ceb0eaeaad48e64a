"""A README's project-name line under its banner is its title, when the document's links carry the name."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.project import starts_on_project_name
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

README = ['<p align="center">',
          '<a href="https://github.com/someone/hexo-theme-kite/releases"><img src="https://img.shields.io/x.svg"></a>',
          "</p>", "一款简洁的 Hexo 主题", "hexo-theme-kite", "💻 安装", "在博客根目录里安装。", "⚙ 应用主题", "修改配置文件。"]


def _apart(texts: list[str], joined: tuple[int, ...] = ()) -> list[LineLayout]:
    return [LineLayout(blank_before=u not in joined, blank_after=u + 1 not in joined) for u in range(len(texts))]


def test_the_name_the_badges_link_to_is_the_title():
    points = {0: (1, False), 5: (1, True), 7: (2, True)}
    assert starts_on_project_name(points, README, _apart(README)) == points | {4: (1, True)}


def test_a_name_no_link_carries_is_left_alone():
    texts = README[:1] + ['<img src="https://img.shields.io/badge/hexo-5.3-orange.svg">'] + README[2:]
    points = {0: (1, False), 5: (1, True), 7: (2, True)}
    assert starts_on_project_name(points, texts, _apart(texts)) == points
    # a word of a link is not the name: "kite" alone is inside "hexo-theme-kite" only as part of it
    texts = README[:4] + ["theme-kit"] + README[5:]
    assert starts_on_project_name(points, texts, _apart(texts)) == points


def test_only_an_untitled_opening_standalone_line_that_occurs_once():
    points = {0: (1, False), 5: (1, True), 7: (2, True)}
    # a titled start above it: the document already has its title
    assert starts_on_project_name({0: (1, True), 5: (2, True)}, README, _apart(README)) == {0: (1, True), 5: (2, True)}
    # glued to the tagline: a line of a paragraph
    assert starts_on_project_name(points, README, _apart(README, joined=(4,))) == points
    # the name stands alone twice: a value the text repeats, not a title
    texts = README + ["hexo-theme-kite"]
    assert starts_on_project_name(points, texts, _apart(texts)) == points
    assert starts_on_project_name(points, README, None) == points


def test_the_engine_titles_the_readme_under_its_banner():
    def answer(window) -> str:
        return format_answer(ChunkStart(i, lv, i > 0) for i, lv in {0: 1, 5: 1, 7: 2}.items())

    result = infer_points(README, ScriptedModel(answer, window_tokens=400), layout=_apart(README))
    assert result.points[4] == (1, True)


def test_a_name_beside_its_badges_on_the_first_line_is_the_title():
    texts = ["lunar [![License](https://img.shields.io/badge/license-MIT.svg)](https://www.apache.org/licenses/)",
             "lunar是一款日历工具。", "示例", "普通页面", "<script src=\"lunar.js\"></script>", "文档", "见官网。"]
    layout = _apart(texts)
    # no link of the document carries the name: no title
    assert starts_on_project_name({0: (1, False), 2: (1, True), 3: (2, True)}, texts, layout) == {
        0: (1, False), 2: (1, True), 3: (2, True)}
    texts[0] = "lunar [![License](https://img.shields.io/badge/license-MIT.svg)](https://github.com/6tail/lunar)"
    assert starts_on_project_name({0: (1, False), 2: (1, True), 3: (2, True)}, texts, layout) == {
        0: (1, True), 2: (1, True), 3: (2, True)}
    # the name alone on the first line already opens the document: left as the model has it
    texts[0] = "lunar"
    assert starts_on_project_name({0: (1, False), 2: (1, True), 3: (2, True)}, texts, layout) == {
        0: (1, False), 2: (1, True), 3: (2, True)}
