"""A start on an HTML comment moves onto the heading above it, or goes when a start follows the comment."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.comments import starts_off_comments
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

API = ["Command-line API", "Options", "`--abort-on-uncaught-exception`", "<!-- YAML", "added: v0.10.8", "-->",
       "Aborting causes a core file.", "`--allow-addons`", "<!-- YAML added: v21.6.0 -->", "Allows addons.",
       "See the list below:", "<!-- a note for editors -->", "More text."]


def _apart(texts: list[str], joined: tuple[int, ...] = ()) -> list[LineLayout]:
    return [LineLayout(blank_before=u not in joined, blank_after=u + 1 not in joined) for u in range(len(texts))]


def test_a_start_on_a_comment_moves_onto_the_heading_above():
    points = {0: (1, True), 1: (2, True), 3: (3, True), 8: (3, True)}
    assert starts_off_comments(points, API, _apart(API)) == {0: (1, True), 1: (2, True), 2: (3, True), 7: (3, True)}
    # running text above (it ends on a colon) is no heading: the start stays where the model put it
    assert starts_off_comments({0: (1, True), 11: (2, True)}, API, _apart(API)) == {0: (1, True), 11: (2, True)}


def test_a_start_on_a_comment_right_before_a_start_goes():
    readme = ["Ruff", "> An extremely fast linter, quoted at length by a happy user.", "<!-- End section: Overview -->",
              "Table of Contents", "1. Getting Started"]
    points = {0: (1, True), 2: (2, False), 3: (2, True)}
    assert starts_off_comments(points, readme, _apart(readme)) == {0: (1, True), 3: (2, True)}
    # nothing to move onto and no start after it: left alone; so is any start when there is no layout
    assert starts_off_comments({0: (1, True), 2: (2, False)}, readme, _apart(readme)) == {0: (1, True), 2: (2, False)}
    assert starts_off_comments(points, readme, None) == points


def test_a_heading_glued_to_the_comment_or_already_a_start_keeps_things_as_they_are():
    points = {0: (1, True), 1: (2, True), 3: (3, True)}
    assert starts_off_comments(points, API, _apart(API, joined=(3,))) == points  # the comment continues a paragraph
    started = {0: (1, True), 2: (3, True), 3: (3, True)}
    assert starts_off_comments(started, API, _apart(API)) == started


def test_the_engine_starts_an_entry_on_its_heading_not_on_its_metadata():
    def answer(window) -> str:
        return format_answer(ChunkStart(i, lv, True) for i, lv in {0: 1, 1: 2, 3: 3, 8: 3}.items())

    result = infer_points(API, ScriptedModel(answer, window_tokens=400), layout=_apart(API))
    assert 2 in result.points and 7 in result.points and 3 not in result.points and 8 not in result.points
