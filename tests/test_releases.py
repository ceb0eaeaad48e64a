"""A changelog's release lines are its sections, all on one level (headings hidden or plain text)."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.releases import release_categories, release_lines, releases_as_sections
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

CHANGELOG = ["Changelog", "",
             "1.20.8 `2026-09-17`", "Features", "- Form: a new flag", "Bug Fixes", "- Menu: a crash",
             "Release 1.20.7 (2026-08-27)", "Bug Fixes", "- Select: stale callback",
             "v1.19.0 (2026-04-10)", "Features", "- Steps: vertical layout",
             "Avahi 0.8, the 'Dobro Jutro' release", "Notes on this one."]


def test_falling_versions_with_text_between_are_releases():
    assert release_lines(CHANGELOG) == [2, 7, 10, 13]
    prereleases = ["v2.14.0 (2026-10-01)", "x", "v2.14.0b2 (2026-09-09)", "x", "v2.14.0a1 (2026-05-22)", "x",
                   "v2.13.0 (2026-03-31)", "x"]
    assert release_lines(prereleases) == [0, 2, 4, 6]  # PEP 440 pre-releases are versions
    news = ["libpipeline 1.5.7 (13 November 2022)", "x", "libpipeline 1.5.6 (24 April 2022)", "x",
            "iso-codes 1.5.5", "x", "the WCAG 1.4.2 guidelines say", "x", "libpipeline 1.5.4 [7 Nov 2021]", "x"]
    # a lower-case project name alone before its version (dates in words aside) opens a release; words after do not
    assert release_lines(news) == [0, 2, 4, 8]


def test_release_lines_share_one_form():
    emoji = ["🌈 1.20.8 `2026-09-17`", "text", "🌈 1.20.7 `2026-08-27`", "text", "🌈 1.19.0 `2026-04-10`", "text"]
    assert release_lines(emoji) == [0, 2, 4]
    avif = ["[0.11.1] - 2022-10-19", "* Bump cmake_minimum_required from 3.5 to 3.13", "text",
            "[0.11.0] - 2022-10-12", "text", "[0.10.1] - 2022-04-11", "text"]
    assert release_lines(avif) == [0, 3, 5]  # the list item opens unlike the releases
    debian = ["dbus (1.14.6-1) unstable; urgency=medium", "", "  * New upstream stable release 1.14.4",
              "", "  * Standards-Version: 4.6.2 (no changes required)", "", "  * Standards-Version: 4.6.1", ""]
    assert release_lines(debian) == []  # indented items are no release lines
    copyright = ["Files: *", "Copyright: 2008-2010, 2012-2016 William Ahern", "License: MIT", "",
                 "Files: lib/*", "Copyright: 2003-2007, Free Software Foundation", "License: GPL", "",
                 "Files: doc/*", "Copyright: 1999-2000, Werner Koch", "License: GPL"]
    assert release_lines(copyright) == []  # year ranges are no versions


def test_rising_outline_numbers_and_lists_of_versions_are_not_releases():
    outline = ["Manual", "1.1 Installing", "Run make.", "1.2 Configuring", "Edit the file.", "2.1 Usage", "Call it."]
    assert release_lines(outline) == []  # numbers go up: an outline
    dependencies = ["Tested with", "jQuery 2.1.0", "jQuery 2.0.2", "jQuery 1.11.0", "jQuery 1.9.1", "and more."]
    assert release_lines(dependencies) == []  # nothing between them: a list
    bullets = ["Notes", "- inkscape 1.2 compatibility", "text", "- gtk 1.1 port", "text", "- qt 1.0 port", "text"]
    assert release_lines(bullets) == []  # list items, not headings
    sentences = ["Intro", "Version 3.2 of the library was released last year with many fixes and a new parser.", "x",
                 "Version 3.1 of the library was the first one to support the parser and the old format too.", "y",
                 "Version 3.0 of the library came out in the spring, after a long beta with many users and reports.", "z"]
    assert release_lines(sentences) == []  # running text that mentions versions
    others = ["Notes", "192.168.212             REJECT", "x", "1.005 fixed that.", "y", "    0.8 -0.8 scale", "z",
              "/Coords [113.13708 207.87465 0 113.13708]", "w"]
    assert release_lines(others) == []  # an address, a sentence, indented code, a row of numbers


def test_releases_become_one_level_and_what_was_found_inside_goes_below():
    points = {0: (1, True), 3: (1, True), 5: (2, True), 8: (3, True), 11: (3, True)}  # every release line missed
    releases = release_lines(CHANGELOG)
    assert releases_as_sections(points, releases) == {
        0: (1, True), 2: (2, True), 3: (3, True), 5: (3, True), 7: (2, True), 8: (3, True),
        10: (2, True), 11: (3, True), 13: (2, True)}
    untitled = {3: (2, True), 4: (4, False)}  # no title before the first release: releases on level 1
    assert releases_as_sections(untitled, [2, 7, 10]) == {2: (1, True), 3: (2, True), 4: (3, False), 7: (1, True),
                                                          10: (1, True)}
    # found by the model (an FAQ's "If your file predates 6.4.0" under its section): their level stays, and
    # the section after the releases does not move
    faq = {0: (1, True), 1: (1, True), 2: (2, True), 7: (2, True), 8: (3, True), 10: (3, True), 14: (1, True)}
    assert releases_as_sections(faq, [2, 7, 10]) == {0: (1, True), 1: (1, True), 2: (2, True), 7: (2, True),
                                                     8: (3, True), 10: (2, True), 14: (1, True)}
    # missed by the model: they go below the section they are in, and the run ends at the FAQ's next
    # section (on the level most titles before them have), which keeps its level
    missed = {0: (1, True), 1: (2, True), 3: (2, True), 4: (2, True), 8: (2, True), 12: (2, True), 14: (2, True)}
    assert releases_as_sections(missed, [5, 9, 11]) == {0: (1, True), 1: (2, True), 3: (2, True), 4: (2, True),
                                                        5: (3, True), 8: (4, True), 9: (3, True), 11: (3, True),
                                                        12: (2, True), 14: (2, True)}
    assert releases_as_sections(points, []) == points


def test_bare_news_entries_end_at_the_next_section_on_their_level():
    # a README's news ("Update 2026.07.04: V2.3.3") over its sections: no release holds a heading, so the
    # first section after the last one on their level is their sibling, not the last release's child
    readme = {0: (1, True), 2: (2, True), 4: (2, True), 6: (2, True), 8: (2, True), 9: (3, True), 11: (2, True)}
    assert releases_as_sections(readme, [2, 4, 6]) == readme
    # a changelog whose releases hold their own sections: what follows the last release is still its own
    changelog = readme | {3: (3, True)}
    assert releases_as_sections(changelog, [2, 4, 6]) == changelog | {8: (3, True), 11: (3, True)}


def test_the_engine_makes_a_changelogs_releases_siblings():
    def answer(window) -> str:  # the model nests later releases under the first, as outline numbers
        starts = {0: 1, 2: 1, 3: 2, 7: 3, 10: 3, 13: 3}
        return format_answer(ChunkStart(i, lv, True) for i, lv in starts.items())

    layout = [LineLayout(blank_before=True, blank_after=True)] * len(CHANGELOG)
    result = infer_points(CHANGELOG, ScriptedModel(answer, window_tokens=400), layout=layout)
    levels = {result.points[u][0] for u in (2, 7, 10, 13)}
    assert len(levels) == 1 and min(levels) > result.points[0][0]  # siblings, under "Changelog"
    assert result.points[3][0] > min(levels)  # "Features" inside its release


def test_a_releases_category_lines_are_its_sections():
    """Every standalone "Features" / "Bug Fixes" inside the releases goes one level below them, found or not."""
    points = {0: (1, True), 2: (2, True), 3: (3, True), 7: (2, True), 10: (2, True), 13: (2, True)}
    apart = [LineLayout(blank_before=True, blank_after=True)] * len(CHANGELOG)
    releases = release_lines(CHANGELOG)
    assert release_categories(points, CHANGELOG, releases, apart) == points | {5: (3, True), 8: (3, True), 11: (3, True)}
    # decorated or translated names count too; running text and list items do not
    # a label over a list ("Fixes:", "**Fixed**") is text, as GNU-style NEWS files write it
    assert [_category_found(t) for t in ("🐛 Bug Fixes", "修复", "Fixes:", "**Fixed**", "Fixed a crash", "- Fixed")] == [
        True, True, False, False, False, False]
    # glued to the line above a name is a word of a paragraph; fewer than three inside the releases: nothing
    glued = [LineLayout(blank_before=u not in (5, 8), blank_after=True) for u in range(len(CHANGELOG))]
    assert release_categories(points, CHANGELOG, releases, glued) == points
    # after the releases, under a section on their level or above, a name is that section's own
    tail = [*CHANGELOG, "License", "Fixed"]
    ended = points | {len(CHANGELOG): (2, True)}
    out = release_categories(ended, tail, releases, [LineLayout(blank_before=True)] * len(tail))
    assert len(tail) - 1 not in out
    assert release_categories(points, CHANGELOG, [], apart) == points


def _category_found(text: str) -> bool:
    lines = ["1.2.0", "x", text, "y", "1.1.0", "Added", "z", "1.0.0", "Removed", "w", "Changed"]
    points = {0: (1, True), 4: (1, True), 7: (1, True)}
    out = release_categories(points, lines, [0, 4, 7], [LineLayout(blank_before=True)] * len(lines))
    return 2 in out
