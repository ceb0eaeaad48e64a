"""Definition-list terms (a line over its one-item definition, three or more in a row) start no section."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.terms import starts_off_definition_terms
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

LINE = LineLayout(blank_before=True, blank_after=True)
MENU = ["编辑菜单", "CtrlShiftC 编辑 复制", "- 将选中文字复制到剪贴板", "CtrlShiftV 编辑粘帖",
        "- 从剪贴板中将文字粘帖到当前光标位置", "编辑全部选择", "- 选中所有当前窗口中的文本", "它也可以从右键菜单中选择。",
        "视图菜单", "Ctrl+ 查看放大字体", "- 放大文字"]


def test_a_run_of_terms_over_one_item_each_starts_nothing():
    points = {0: (2, True), 1: (3, True), 3: (3, True), 5: (3, True), 8: (2, True), 9: (3, True)}
    # the three terms of the edit menu go (prose after a definition is still that entry's); the menu headings
    # stay, and so does a lone term (a short section may hold one bulleted point)
    assert starts_off_definition_terms(points, MENU, [LINE] * len(MENU)) == {0: (2, True), 8: (2, True), 9: (3, True)}


def test_sections_over_several_items_or_prose_and_untitled_starts_are_not_terms():
    guide = ["Install", "- Download the archive", "- Unpack it", "Configure", "- Edit the file", "- Restart",
             "Run", "- Start it", "- Check the log"]
    points = {0: (2, True), 3: (2, True), 6: (2, True)}
    assert starts_off_definition_terms(points, guide, [LINE] * len(guide)) == points  # each opens onto two items
    untitled = {1: (3, False), 3: (3, False), 5: (3, False)}
    assert starts_off_definition_terms(untitled, MENU, None) == untitled  # no title, no term
    two = {1: (3, True), 3: (3, True)}
    assert starts_off_definition_terms(two, MENU, None) == two  # two in a row are left alone
    faq = ["（一）机器人在群组中不响应", "1. 检查机器人是否已添加到群组2. 检查权限", "（二）机器人收不到消息",
           "1. 检查应用是否已发布", "（三）发送消息失败", "1. 检查应用权限"]
    numbered = {0: (3, True), 2: (3, True), 4: (3, True)}
    assert starts_off_definition_terms(numbered, faq, [LINE] * len(faq)) == numbered  # numbers place them in the outline


def test_an_item_inside_a_line_is_no_definition():
    texts = ["Term one", "- a definition", "Term two", "- another", "Term three", "- and more"]
    points = {0: (3, True), 2: (3, True), 4: (3, True)}
    inside = LineLayout(starts_line=False, ends_line=True)
    layout = [LINE, inside, LINE, inside, LINE, inside]  # the "- ..." sentences continue a line: no list items
    assert starts_off_definition_terms(points, texts, layout) == points
    assert starts_off_definition_terms(points, texts, [LINE] * 6) == {}


def test_the_engine_drops_terms_a_model_took_for_headings():
    def every_line(window) -> str:
        return format_answer(ChunkStart(i, 1 if i == 0 else 2, True) for i in (0, 1, 3, 5, 8))

    result = infer_points(MENU, ScriptedModel(every_line, window_tokens=400), layout=[LINE] * len(MENU))
    assert sorted(result.points) == [0, 8]
