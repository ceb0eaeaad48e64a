"""A heading stands apart: no start on a plain line glued to the lines above and below it."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.apart import starts_set_apart
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

APART = LineLayout(blank_before=True, blank_after=True)
FIRST = LineLayout(blank_before=True, blank_after=False)
INSIDE = LineLayout(blank_before=False, blank_after=False)
LAST = LineLayout(blank_before=False, blank_after=True)
COLOURS = ["传统中国颜色", "这是一个色卡。", "粉红", "妃色", "品红", "靛青", "黯", "正黄", "繁體字體", "以下是繁體名稱。"]
COLOURS_LAYOUT = [APART, APART, FIRST, INSIDE, INSIDE, INSIDE, INSIDE, LAST, APART, APART]


def test_a_start_inside_a_run_of_short_lines_is_dropped():
    points = {0: (1, True), 3: (2, True), 6: (2, True), 8: (2, True)}
    assert starts_set_apart(points, COLOURS_LAYOUT) == {0: (1, True), 8: (2, True)}


def test_set_apart_by_type_a_rule_an_indent_or_a_blank_line_on_one_side_stays():
    points = {0: (1, True), 2: (2, True), 3: (2, True), 4: (2, True), 5: (2, True), 7: (2, True), 8: (2, True)}
    layout = list(COLOURS_LAYOUT)
    layout[3] = LineLayout(size=1.3)  # larger type
    layout[4] = LineLayout(bold=True)
    layout[5] = LineLayout(underline="=")
    layout[6] = LineLayout(indented=True)
    kept = starts_set_apart(points, layout)
    assert {2, 3, 4, 5, 7, 8} <= set(kept)  # the list's first and last lines have a blank line on one side
    assert starts_set_apart({0: (1, True), 6: (2, True)}, layout) == {0: (1, True), 6: (2, True)}
    assert starts_set_apart(points, None) == points


def test_a_document_without_blank_lines_keeps_every_start():
    texts = ["Title", "INTRODUCTION", "Some text.", "METHODS", "More text.", "RESULTS", "End."]
    points = {0: (1, True), 1: (2, True), 3: (2, True), 5: (2, True)}
    assert starts_set_apart(points, [INSIDE] * len(texts)) == points


def test_the_engine_drops_a_models_start_in_a_list_of_names():
    def on_names(window) -> str:
        return format_answer(ChunkStart(i, 1 if i == 0 else 2, True) for i in (0, 6, 8))

    result = infer_points(COLOURS, ScriptedModel(on_names, window_tokens=400), layout=COLOURS_LAYOUT)
    assert 6 not in result.points and {0, 8} <= set(result.points)
