"""Lines of a heading style the model mostly found become headings too: a man page's capitalised sections."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.peers import styled_peers_as_titles, type_peers_as_titles
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

PARAGRAPH = LineLayout(blank_before=True, blank_after=True)
# A man page with its heading markers hidden: capitalised section names, each followed by a paragraph.
MAN_PAGE = ["ls", "NAME(名称)", "ls - 列目录内容", "SYNOPSIS(总览)", "ls [选项] [文件...]",
            "DESCRIPTION(描述)", "程序 ls 先列出非目录的文件项，然后是每一个目录中的可显示文件。",
            "OPTIONS(选项)", "-a, --all 列出目录中的所有文件。", "SEE ALSO(另见)", "dir(1), vdir(1)"]


def all_but_options(window) -> str:
    """A model that finds the capitalised sections, except one it takes for part of an option list."""
    return format_answer(ChunkStart(i, 1 if i == 0 else 2, True) for i, t in enumerate(window.lines)
                         if i == 0 or (t.split("(")[0].isupper() and t != "OPTIONS(选项)"))


def test_a_missed_section_of_a_found_style_becomes_a_heading_of_its_level():
    layout = [PARAGRAPH] * len(MAN_PAGE)
    result = infer_points(MAN_PAGE, ScriptedModel(all_but_options, window_tokens=400), layout=layout)
    assert result.points[7] == (2, True)
    assert sorted(result.points) == [0, 1, 3, 5, 7, 9]


def test_peers_need_a_found_majority_of_their_style_and_of_their_level():
    texts = ["Title", "NAME", "body", "SYNOPSIS", "body", "OPTIONS", "body", "BUGS", "body"]
    layout = [PARAGRAPH] * len(texts)
    found_two = {0: (1, True), 1: (2, True), 3: (2, True)}
    assert styled_peers_as_titles(found_two, texts, layout) == found_two | {5: (2, True), 7: (2, True)}
    found_one = {0: (1, True), 1: (2, True)}  # one of four: not enough evidence
    assert styled_peers_as_titles(found_one, texts, layout) == found_one
    # two keyword lines taken for titles among many real level-2 headings of another style: not that level's style
    others = {u: (2, True) for u in (10, 12, 14, 16, 18)}
    mixed = texts + ["Plain heading", "body"] * 5
    assert styled_peers_as_titles(found_two | others, mixed, [PARAGRAPH] * len(mixed)) == found_two | others
    assert styled_peers_as_titles(found_two, texts, None) == found_two


def test_peers_skip_lines_inside_paragraphs_right_under_a_start_and_with_roles():
    texts = ["NAME", "body", "SYNOPSIS", "body", "OPTIONS", "body", "BUGS", "body"]
    points = {0: (1, True), 2: (1, True)}
    inline = LineLayout(blank_before=True, blank_after=False)
    aside = LineLayout(blank_before=True, blank_after=True, role="aside")
    layout = [PARAGRAPH, PARAGRAPH, PARAGRAPH, PARAGRAPH, inline, PARAGRAPH, aside, PARAGRAPH]
    assert styled_peers_as_titles(points, texts, layout) == points
    under = ["NAME", "SYNOPSIS", "body", "OPTIONS", "body"]  # "SYNOPSIS" sits right under the start "NAME"
    assert styled_peers_as_titles({0: (1, True), 3: (1, True)}, under, [PARAGRAPH] * 5) == {0: (1, True), 3: (1, True)}


def test_missed_signatures_join_the_found_ones():
    texts = ["synonyms", "nearby(word [, size = 10])", "近义词", "compare(s1, s2, seg=True)", "比较",
             "display(word)", "打印", "describe()", "说明"]
    found = {0: (1, True), 1: (2, True), 3: (2, True)}
    assert styled_peers_as_titles(found, texts, [PARAGRAPH] * len(texts)) == found | {5: (2, True), 7: (2, True)}


def test_a_fifth_of_an_api_references_signatures_found_is_enough_whatever_their_levels_share():
    """Short entries are the ones missed: two of eight found still make all eight entries; prose headings of the
    same level (``Usage``, ``Examples``) outnumbering them do not stop it."""
    entries = [f"def has_{name}()" for name in ("buvid3", "buvid4", "sessdata", "bili_jct", "dedeuserid",
                                                   "ac_time", "cookies", "proxy")]
    texts = ["Module credential"]
    for entry in entries:
        texts += [entry, "是否提供该字段"]
    prose = ["Usage", "Examples", "Errors", "Changes", "Authors"]
    for heading in prose:
        texts += [heading, "Some prose about it."]
    layout = [PARAGRAPH] * len(texts)
    prose_at = {u: (2, True) for u in range(17, 27, 2)}
    found = {0: (1, True), 1: (2, True), 7: (2, True)} | prose_at
    assert styled_peers_as_titles(found, texts, layout) == found | {u: (2, True) for u in range(1, 17, 2)}
    one_found = {0: (1, True), 7: (2, True)} | prose_at  # one signature is no evidence
    assert styled_peers_as_titles(one_found, texts, layout) == one_found
    few = texts + [f"def extra_{i}()" if i % 2 == 0 else "说明" for i in range(6)]  # two of eleven: under a fifth
    assert styled_peers_as_titles(found, few, [PARAGRAPH] * len(few)) == found


def test_entries_named_by_a_code_span_alone_join_the_found_ones():
    """Node.js's error codes: two of six found make all six; a file path in a code span is no entry name."""
    codes = ["ERR_FS_EISDIR", "ERR_HTTP_HEADERS_SENT", "ERR_HTTP_INVALID_STATUS_CODE", "ERR_HTTP_REQUEST_TIMEOUT",
             "ERR_HTTP_TRAILER_INVALID", "ERR_INVALID_ARG_TYPE"]
    texts = ["Errors"]
    for code in codes:
        texts += [f"`{code}`", "Thrown when it happens."]
    texts += ["`~/.config/node/settings.json`", "Where settings live."]
    found = {0: (1, True), 1: (2, True), 5: (2, True)}
    out = styled_peers_as_titles(found, texts, [PARAGRAPH] * len(texts))
    assert out == found | {u: (2, True) for u in range(1, 13, 2)}


def test_annotated_fields_are_not_the_peers_of_found_signatures():
    texts = ["get_info(uid)", "返回账号的信息", "uid (int): 用户 ID", "name (str): 姓名",
             "get_all(page)", "返回全部信息", "tel (str): 电话号码", "describe()", "说明"]
    points = {0: (2, True), 4: (2, True), 7: (2, True)}
    assert styled_peers_as_titles(points, texts, [PARAGRAPH] * len(texts)) == points


def test_missed_questions_of_an_faq_join_the_found_ones():
    texts = ["常见问题", "本页回答常见问题。", "什么是 Asymptote？", "一种矢量绘图语言。", "如何获得 Asymptote？",
             "从网站下载。", "能在 MacOS X 上安装吗？", "可以。", "Why is it called Asymptote?", "It is a pun."]
    found = {0: (1, True), 4: (2, True), 6: (2, True)}
    assert styled_peers_as_titles(found, texts, [PARAGRAPH] * len(texts)) == found | {2: (2, True), 8: (2, True)}


CHAPTER_TYPE = LineLayout(blank_before=True, blank_after=True, size=1.32)


def test_lines_in_the_chapter_type_of_found_chapters_become_chapters():
    """A thesis sets "摘 要", "致 谢" and its appendices in the type of "第一章": once the found chapters settle
    on level 1, the missed lines of that type join them (a line right under a start stays body)."""
    texts = ["摘 要", "body", "第一章 简介", "1.1 背景", "body", "第二章 方法", "body", "第三章 结果", "body",
             "致 谢", "body", "附录 A 常见问题", "附录 B 文件"]
    layout = [CHAPTER_TYPE if u in (0, 2, 5, 7, 9, 11, 12) else PARAGRAPH for u in range(len(texts))]
    points = {2: (1, True), 3: (2, True), 5: (1, True), 7: (1, True), 11: (1, True)}
    out = type_peers_as_titles(points, texts, layout)
    assert out == points | {0: (1, True), 9: (1, True)}
    # body-size lines and documents without typography are left alone
    assert type_peers_as_titles(points, texts, [PARAGRAPH] * len(texts)) == points
    assert type_peers_as_titles(points, texts, None) == points


def test_a_large_type_needs_a_share_of_found_lines_and_most_of_their_level():
    texts = [f"Large line {k}" for k in range(12)]
    layout = [CHAPTER_TYPE] * len(texts)
    two_of_twelve = {0: (1, True), 4: (1, True)}  # a title page's worth of large lines, two taken for chapters
    assert type_peers_as_titles(two_of_twelve, texts, layout) == two_of_twelve
    three = {0: (1, True), 4: (1, True), 8: (1, True)}
    mostly_elsewhere = three | {u: (1, True) for u in range(20, 32, 2)}  # level 1 is mostly set in another type
    body = texts + ["Chapter heading", "body"] * 6
    assert type_peers_as_titles(mostly_elsewhere, body, layout + [PARAGRAPH] * 12) == mostly_elsewhere
    added = type_peers_as_titles(three, texts, layout)
    # lines right under a start stay body, and so does line 2, before the first chapter found after the opening
    assert {u for u in added if u not in three} == {6, 10}


def test_a_cover_page_in_the_chapter_type_stays_one_opening_chunk():
    """A thesis cover sets its degree, author and date in the chapter type before the first chapter: those lines
    do not join the chapters, while front matter there ("摘 要") and back matter after them do."""
    texts = ["哈尔滨工业大学", "工学硕士学位论文", "body", "杨敬轩", "2020 年 6 月", "摘 要", "body",
             "第一章 绪论", "body", "第二章 方法", "body", "第三章 结果", "body", "致 谢", "body"]
    layout = [CHAPTER_TYPE if u in (0, 1, 3, 4, 5, 7, 9, 11, 13) else PARAGRAPH for u in range(len(texts))]
    points = {0: (1, True), 7: (1, True), 9: (1, True), 11: (1, True)}
    out = type_peers_as_titles(points, texts, layout)
    assert out == points | {5: (1, True), 13: (1, True)}
