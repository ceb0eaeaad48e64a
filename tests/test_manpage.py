"""A manual page's standard sections start its sections, translated or not."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.manpage import man_section, man_sections_as_starts
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

PAGE = ["LSATTR(1)", "NAME(名称)", "lsattr - 显示文件属性", "总览 SYNOPSIS", "lsattr [ -RVadv ] [ files... ]",
        "DESCRIPTION(描述)", "显示文件属性。", "OPTIONS 选项", "-R 递归地列出目录。", "BUGS", "没有。",
        "参见 SEE ALSO 章节里的页面。", "SEE ALSO", "chattr(1)"]


def _apart(texts: list[str], joined: tuple[int, ...] = ()) -> list[LineLayout]:
    return [LineLayout(blank_before=u not in joined, blank_after=u + 1 not in joined) for u in range(len(texts))]


def test_section_names_with_or_without_a_translation():
    assert [man_section(t) for t in ("NAME(名称)", "总览 SYNOPSIS", "SEE ALSO", "退出状态 EXIT STATUS", "ＢＵＧＳ")] == [
        "NAME", "SYNOPSIS", "SEE ALSO", "EXIT STATUS", "BUGS"]
    # running text that mentions a section, lower case, and capitals that name no section are none
    assert [man_section(t) for t in ("参见 SEE ALSO 章节里的页面。", "Name", "DESCRIPTION of the tool", "WARNING",
                                     "lsattr - 显示文件属性")] == [None] * 5


def test_the_sections_go_one_level_under_the_page_title():
    points = {0: (1, True), 9: (1, True)}  # the model found the title and BUGS, on the title's level
    out = man_sections_as_starts(points, PAGE, _apart(PAGE))
    assert out == {0: (1, True), 1: (2, True), 3: (2, True), 5: (2, True), 7: (2, True), 9: (2, True), 12: (2, True)}
    # without a page title: the level the model gave most of them, else the top
    plain = ["Manual", *PAGE[1:]]
    untitled = {2: (1, True), 3: (3, True), 5: (3, True), 9: (2, True)}
    assert {man_section(plain[u]): lv for u, (lv, _) in man_sections_as_starts(untitled, plain, _apart(plain)).items()
            if man_section(plain[u])} == dict.fromkeys(("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "BUGS", "SEE ALSO"), 3)
    # the title on the document's first line opens its first chunk, on level 1, started or not
    assert man_sections_as_starts({9: (1, True)}, PAGE, _apart(PAGE))[1] == (2, True)
    assert man_sections_as_starts({}, PAGE[1:], None)[0] == (1, True)


def test_only_a_manual_page_with_standalone_sections_is_touched():
    points = {0: (1, True)}
    # glued to the line above, a name is a word of the paragraph: two standalone ones are too few
    assert man_sections_as_starts(points, PAGE, _apart(PAGE, joined=(1, 3, 5, 7))) == points
    readme = ["Tool", "USAGE", "Run it.", "EXAMPLES", "tool x", "LICENSE", "MIT"]  # no NAME nor SYNOPSIS: no page
    assert man_sections_as_starts(points, readme, _apart(readme)) == points
    assert man_sections_as_starts(points, PAGE[:4], _apart(PAGE[:4])) == points  # two sections only
    guide = ["Writing a manual page", "Use this template:", "```", *PAGE, "```", "Then build it."]
    assert man_sections_as_starts(points, guide, _apart(guide)) == points  # an example in a code block
    unfenced = ["Contributing", "Writing a manual page", "Use this template:", *PAGE, "Then build it."]
    found = {0: (1, True), 1: (2, True)}  # the guide's own sections above the page it shows, fences lost
    assert man_sections_as_starts(found, unfenced, _apart(unfenced)) == found


def test_the_engine_starts_the_sections_a_model_missed():
    def answer(window) -> str:
        return format_answer([ChunkStart(0, 1, True), ChunkStart(9, 2, True)])

    result = infer_points(PAGE, ScriptedModel(answer, window_tokens=400), layout=_apart(PAGE))
    assert {u for u, (lv, title) in result.points.items() if title and lv == 2} == {1, 3, 5, 7, 9, 12}
