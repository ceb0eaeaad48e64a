"""A start on a tight list's first item moves onto the title line above it (how-to pages' step headings)."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.lists import starts_on_titles_above_lists
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

PARAGRAPH = LineLayout(blank_before=True, blank_after=True)
FIRST_ITEM = LineLayout(blank_before=True, blank_after=False)
ITEM = LineLayout(blank_before=False, blank_after=False)
LAST_ITEM = LineLayout(blank_before=False, blank_after=True)
STEPS = ["故障排除", "机器人收不到消息", "1. 检查应用是否已发布", "2. 检查事件订阅", "3. 重启网关",
         "发送消息失败", "- 检查权限", "- 查看日志"]
STEPS_LAYOUT = [PARAGRAPH, PARAGRAPH, FIRST_ITEM, ITEM, LAST_ITEM, PARAGRAPH, FIRST_ITEM, LAST_ITEM]


def test_a_start_on_the_first_item_moves_onto_the_title_above():
    points = {0: (2, True), 2: (3, False), 6: (3, False)}
    assert starts_on_titles_above_lists(points, STEPS, STEPS_LAYOUT) == {0: (2, True), 1: (3, True), 5: (3, True)}


def test_the_engine_moves_a_late_start_onto_the_missed_title():
    def late(window) -> str:  # finds the first title, then starts each step on its first item
        return format_answer(ChunkStart(i, 1 if i == 0 else 2, i == 0) for i in (0, 2, 6))

    result = infer_points(STEPS, ScriptedModel(late, window_tokens=400), layout=STEPS_LAYOUT)
    assert sorted(result.points) == [0, 1, 5] and result.points[1][1]


def test_numbered_headings_lines_introducing_a_list_and_found_titles_stay():
    numbered = ["Overview", "1. Introduction", "This manual explains the tool.", "2. Installing", "Run make."]
    layout = [PARAGRAPH, PARAGRAPH, PARAGRAPH, PARAGRAPH, PARAGRAPH]
    points = {1: (1, True), 3: (1, True)}
    assert starts_on_titles_above_lists(points, numbered, layout) == points  # no sibling item right below
    intro = ["The wizard then does this:", "1. Creates the app", "2. Starts the gateway"]
    assert starts_on_titles_above_lists({1: (3, False)}, intro, [PARAGRAPH, FIRST_ITEM, LAST_ITEM]) == {1: (3, False)}
    found = {1: (3, True), 2: (3, False)}  # the title is a start already: the item's start is the model's own
    assert starts_on_titles_above_lists(found, STEPS, STEPS_LAYOUT) == found
    skipped = ["机器人收不到消息", "1. 检查应用", "3. 重启网关"]  # not the next number: no list evidence
    assert starts_on_titles_above_lists({1: (3, False)}, skipped, [PARAGRAPH, FIRST_ITEM, LAST_ITEM]) == {1: (3, False)}
    assert starts_on_titles_above_lists({2: (3, False)}, STEPS, None) == {2: (3, False)}


def test_a_start_on_a_later_item_of_a_tight_list_is_dropped():
    """ "3. 方便个性化定制" right under "2." is the list's third item, not a numbered heading: it ends nothing."""
    faq = ["相比于 airbnb 规则有什么优势", "1. 拥有官方维护的规则", "2. 先进性", "3. 方便个性化定制，包含中文讲解",
           "你这个确实很好", "没关系。", "- 检查权限", "- 查看日志"]
    layout = [PARAGRAPH, FIRST_ITEM, ITEM, LAST_ITEM, PARAGRAPH, PARAGRAPH, FIRST_ITEM, LAST_ITEM]
    points = {0: (2, True), 3: (1, True), 4: (2, True), 7: (3, False)}
    assert starts_on_titles_above_lists(points, faq, layout) == {0: (2, True), 4: (2, True)}
    # numbered headings with text under them, a list's first item, an item after a blank line and a number
    # that does not follow the one above keep their starts
    numbered = ["1. Introduction", "This manual explains the tool.", "2. Installing", "Run make."]
    kept = {0: (1, True), 2: (1, True)}
    assert starts_on_titles_above_lists(kept, numbered, [PARAGRAPH] * 4) == kept
    loose = ["1. 检查应用", "2. 检查事件订阅"]
    assert starts_on_titles_above_lists({1: (2, False)}, loose, [PARAGRAPH, PARAGRAPH]) == {1: (2, False)}
    skipped = ["1. 检查应用", "3. 重启网关"]
    assert starts_on_titles_above_lists({1: (2, False)}, skipped, [FIRST_ITEM, LAST_ITEM]) == {1: (2, False)}
