"""The title line above a reST ``.. module::`` directive opens a section (Sphinx sources read as text)."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.rest import starts_on_module_titles
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

PARAGRAPH = LineLayout(blank_before=True, blank_after=True)
ASIDE = LineLayout(blank_before=True, blank_after=True, role="aside")
API = ["API Reference", "Distutils provides these modules.",
       ":mod:`distutils.core` --- Core Distutils functionality", ".. module:: distutils.core",
       "The core module is the only one that needs to be installed.",
       ":mod:`distutils.util` --- Miscellaneous utility functions", ".. py:module:: distutils.util",
       "This module covers everything else."]
API_LAYOUT = [PARAGRAPH, PARAGRAPH, PARAGRAPH, ASIDE, PARAGRAPH, PARAGRAPH, ASIDE, PARAGRAPH]


def test_titles_above_module_directives_start_sections_below_the_page_title():
    def page_title_only(window) -> str:
        return format_answer([ChunkStart(0, 1, True)])

    result = infer_points(API, ScriptedModel(page_title_only, window_tokens=400), layout=API_LAYOUT)
    assert result.points == {0: (1, True), 2: (2, True), 5: (2, True)}


def test_a_first_module_title_is_level_one_and_found_titles_keep_their_level():
    page = API[2:5]
    assert starts_on_module_titles({}, page, API_LAYOUT[2:5]) == {0: (1, True)}
    found = {0: (1, True), 2: (3, True)}
    assert starts_on_module_titles(found, API, API_LAYOUT) == found | {5: (2, True)}
    running = ["The module is imported first.", ".. module:: spam"]  # not a title line: a sentence in a paragraph
    inline = LineLayout(blank_before=True, blank_after=False)
    assert starts_on_module_titles({}, running, [inline, ASIDE]) == {}
    assert starts_on_module_titles({}, API, None) == {}
    typeset = [LineLayout(blank_before=True, blank_after=True, size=1.4), ASIDE, PARAGRAPH]
    assert starts_on_module_titles({}, page, typeset) == {}
