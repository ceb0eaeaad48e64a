"""In a numbered document, an unnumbered start below the top level is not a section."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.numbered import missed_outline_numbers, numbered_outline_only
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

SOLVER = ["第1章 求解器选项", "求解器有以下选项。", "1.1 进化算法", "Setting", "Learning Cycles", "循环次数。",
          "1.2 线性求解器", "F11 设置全屏模式", "1.3 群体求解器", "粒子群。", "第2章 结果", "结果如下。", "参考文献", "[1] 某书。"]


def test_unnumbered_starts_below_the_top_are_dropped_and_the_top_keeps_its_own():
    points = {0: (1, True), 2: (2, True), 3: (3, True), 6: (2, True), 7: (2, True), 8: (2, True), 10: (1, True),
              12: (1, True)}
    # "Setting" (a table row) and a menu entry go; "参考文献" beside the chapters stays
    assert numbered_outline_only(points, SOLVER) == {0: (1, True), 2: (2, True), 6: (2, True), 8: (2, True),
                                                     10: (1, True), 12: (1, True)}


def test_documents_not_mostly_numbered_keep_every_start():
    few = {0: (1, True), 2: (2, True), 3: (2, True), 4: (2, True)}  # two numbered of four
    assert numbered_outline_only(few, SOLVER) == few
    readme = ["Overview", "Install", "1. Download", "Usage", "2. Run", "FAQ"]
    mostly_plain = {0: (1, True), 1: (2, True), 2: (3, False), 3: (2, True), 4: (3, False), 5: (2, True)}
    assert numbered_outline_only(mostly_plain, readme) == mostly_plain
    assert numbered_outline_only({}, SOLVER) == {}


def test_the_engine_drops_a_table_row_the_model_read_as_a_heading():
    def answer(window) -> str:
        starts = {0: 1, 2: 2, 3: 3, 6: 2, 8: 2, 10: 1, 12: 1}
        return format_answer(ChunkStart(i, lv, True) for i, lv in starts.items())

    layout = [LineLayout(blank_before=True, blank_after=True)] * len(SOLVER)
    result = infer_points(SOLVER, ScriptedModel(answer, window_tokens=400), layout=layout)
    assert 3 not in result.points
    assert {0, 2, 6, 8, 10, 12} <= set(result.points)


FAQ = ["2. General problems", "2.1 G1. What is fetchmail?", "A mail client.", "2.2 G2. Where is the FAQ?",
       "On the web.", "2.3 G3. Something does not work. Will you fix it?", "Maybe.", "2.4 G4. I have an idea.",
       "Send it.", "See also 2.5 for more.", "3. Build-time problems", "3.1 B1. Make dies on FreeBSD.", "Use gmake."]


def _apart(texts: list[str], joined: tuple[int, ...] = ()) -> list[LineLayout]:
    """Every unit a paragraph of its own, except those ``joined`` to the line above."""
    return [LineLayout(blank_before=u not in joined, blank_after=u + 1 not in joined) for u in range(len(texts))]


def test_a_missed_line_that_continues_the_outline_numbers_starts_a_section():
    points = {0: (1, True), 1: (2, True), 3: (2, True), 10: (1, True), 11: (2, True)}
    # "2.3" follows "2.2" and "2.4" then follows "2.3"; "See also 2.5" is running text, not opened by a number
    assert missed_outline_numbers(points, FAQ, _apart(FAQ)) == points | {5: (2, True), 7: (2, True)}
    # a numbered line inside a paragraph (no blank line above) is not a heading
    assert missed_outline_numbers(points, FAQ, _apart(FAQ, joined=(5,))) == points


def test_typeset_documents_and_unfound_depths_are_left_alone():
    points = {0: (1, True), 1: (2, True), 3: (2, True), 10: (1, True), 11: (2, True)}
    typeset = [LineLayout(blank_before=True, size=1.4 if u in (0, 10) else 1.0) for u in range(len(FAQ))]
    assert missed_outline_numbers(points, FAQ, typeset) == points  # its typography says what is a heading
    assert missed_outline_numbers(points, FAQ, None) == points
    chapters_only = {0: (1, True), 10: (1, True)}  # no found start of depth two: nothing to continue
    assert missed_outline_numbers(chapters_only, FAQ, _apart(FAQ)) == chapters_only


def test_the_engine_finds_the_numbered_questions_the_model_missed():
    def answer(window) -> str:
        starts = {0: 1, 1: 2, 3: 2, 10: 1, 11: 2}
        return format_answer(ChunkStart(i, lv, True) for i, lv in starts.items())

    result = infer_points(FAQ, ScriptedModel(answer, window_tokens=400), layout=_apart(FAQ))
    assert {5, 7} <= set(result.points)
    assert result.points[5][0] == result.points[3][0]


README = ["<div align=right>English</div>", "1. NexT", "Thanks for coming.", "1. Read the guide", "1.1 Contents",
          "The list.", "1.2 How to help", "Send a patch."]


def test_a_missed_chapter_line_over_its_found_first_section_starts_the_chapter():
    points = {0: (1, False), 4: (2, True), 6: (2, True)}
    # of the lines numbered 1 above "1.1", the first standalone one: a line joined to its paragraph is none
    assert missed_outline_numbers(points, README, _apart(README)) == points | {1: (1, True)}
    assert missed_outline_numbers(points, README, _apart(README, joined=(1,))) == points | {3: (1, True)}
    # a list "1. ... 2. ..." above "1.1" is running text; so is any line once a start lies between it and "1.1"
    listed = [*README[:4], "2. Write a patch", *README[4:]]
    shifted = {0: (1, False), 5: (2, True), 7: (2, True)}
    assert missed_outline_numbers(shifted, listed, _apart(listed)) == shifted
    assert missed_outline_numbers(points | {2: (2, True)}, README, _apart(README)) == points | {2: (2, True), 3: (1, True)}
    # a first section already on the top level has no level above it
    top = {0: (1, False), 4: (1, True), 6: (1, True)}
    assert missed_outline_numbers(top, README, _apart(README)) == top
