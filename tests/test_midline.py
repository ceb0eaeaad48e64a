"""A section opens at the start of its line: a start inside a paragraph's first line moves to the line's start."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.midline import starts_at_line_starts
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

LINE_START = LineLayout(ends_line=False, blank_before=True)
LINE_END = LineLayout(starts_line=False, blank_after=True, underline="~")
WHOLE = LineLayout(blank_before=True, blank_after=True)
MID = LineLayout(starts_line=False, ends_line=False)
TEXTS = ["Questions about installation", "Question 2.1.", "Is it possible to install Asymptote on Mac OS X?",
         "It is easy to compile Asymptote.", "Question 2.2.", "Why do I get the error Bad CPU type?",
         "Run the installer again."]
LAYOUT = [WHOLE, LINE_START, LINE_END, WHOLE, LINE_START, LINE_END, WHOLE]


def test_a_start_after_a_label_on_the_same_line_moves_to_the_label():
    points = {0: (1, True), 2: (2, True), 5: (2, True)}
    assert starts_at_line_starts(points, TEXTS, LAYOUT) == {0: (1, True), 1: (2, True), 4: (2, True)}


def test_a_start_already_on_the_line_or_inside_a_paragraph_stays():
    assert starts_at_line_starts({1: (2, True), 2: (3, True)}, TEXTS, LAYOUT) == {1: (2, True), 2: (3, True)}
    texts = ["Some running text ends here.", "Then a new topic starts.", "And goes on."]
    layout = [LineLayout(ends_line=False), MID, LineLayout(starts_line=False)]  # no blank line above the line
    assert starts_at_line_starts({1: (2, False)}, texts, layout) == {1: (2, False)}
    assert starts_at_line_starts({2: (2, True)}, TEXTS, None) == {2: (2, True)}
    assert starts_at_line_starts({2: (2, True)}, TEXTS, LAYOUT, fixed={2}) == {2: (2, True)}  # a fallback start


def test_a_caption_line_never_takes_the_start_and_a_long_line_is_no_title():
    caption = [LineLayout(ends_line=False, blank_before=True, role="aside"), LINE_END]
    assert starts_at_line_starts({1: (2, True)}, ["Figure 2.21.", "Purchase Of 3 Jeans"], caption) == {1: (2, True)}
    long_line = ["Foo.", "Bar baz " * 40]
    assert starts_at_line_starts({1: (2, True)}, long_line, LAYOUT[1:3]) == {0: (2, False)}


def test_the_engine_moves_a_models_start_onto_the_question_label():
    def on_questions(window) -> str:
        return format_answer(ChunkStart(i, 1 if i == 0 else 2, True) for i in (0, 2, 5))

    result = infer_points(TEXTS, ScriptedModel(on_questions, window_tokens=400), layout=LAYOUT)
    assert {1, 4} <= set(result.points) and not {2, 5} & set(result.points)
