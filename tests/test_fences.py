"""No section starts inside a fenced code block (Markdown with heading markers hidden)."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.fences import code_lines, starts_outside_fences
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

README = ["oicq", "Usage:", "```js", "const client = createClient(account)", "",
          "# scan, then press enter", "}).login()", "```", "注意：扫码登录现在仅能在同一ip下进行",
          "Api Reference", "Class: Client"]


def test_starts_on_code_lines_and_closing_fences_are_dropped():
    points = {0: (1, True), 2: (2, False), 5: (1, True), 6: (2, True), 7: (2, False), 9: (2, True), 10: (3, True)}
    assert code_lines(README) == {3, 4, 5, 6, 7}
    # the opening fence may start a chunk (it opens with the block); nothing inside or on the closing fence
    assert starts_outside_fences(points, README) == {0: (1, True), 2: (2, False), 9: (2, True), 10: (3, True)}


def test_only_closed_backtick_fences_count():
    unclosed = ["Intro", "```", "code", "Usage", "text"]
    assert code_lines(unclosed) == set()
    assert starts_outside_fences({3: (2, True)}, unclosed) == {3: (2, True)}
    tildes = ["Installing", "~~~~~~~~~~", "Run make.", "Options", "~~~~~~~", "None."]  # plain-text underlines
    assert code_lines(tildes) == set()
    shorter = ["````", "```", "inside", "````", "after"]  # a closing fence is at least as long as its opening
    assert code_lines(shorter) == {1, 2, 3}
    inline = ["Use ```code``` inline", "Heading", "```python", "x = 1", "```"]
    assert code_lines(inline) == {3, 4}
    assert code_lines(["    ```", "indented code, not a fence", "```"]) == set()


def test_a_tilde_fence_counts_when_it_names_its_language():
    readme = ["（1）安装sdk", "~~~python", "# 首次安装", "pip install adata", "~~~", "（2）使用示例"]
    assert code_lines(readme) == {2, 3, 4}
    assert starts_outside_fences({0: (2, True), 2: (2, True), 5: (2, True)}, readme) == {0: (2, True), 5: (2, True)}
    assert code_lines(["~~~ js", "x()", "```", "y()", "~~~~", "after"]) == {1, 2, 3, 4}  # closed by its own kind only
    bare = ["Installing", "~~~", "Run make.", "Options", "~~~", "None."]  # short underlines, not a fence
    assert code_lines(bare) == set()


def test_the_engine_drops_a_models_start_inside_a_code_block():
    def on_code(window) -> str:
        return format_answer(ChunkStart(i, 1 if i == 0 else 2, True) for i in (0, 6, 9, 10))

    layout = [LineLayout(blank_before=True, blank_after=True)] * len(README)
    result = infer_points(README, ScriptedModel(on_code, window_tokens=400), layout=layout)
    assert 6 not in result.points
    assert {0, 9, 10} <= set(result.points)


def test_no_start_inside_a_pages_front_matter():
    page = ["---", "docClass: timeline", "title: Changelog", "---", "", "1.20.8 2026-09-17", "Features", "Fixed a bug."]
    points = {0: (1, False), 1: (1, True), 3: (2, False), 5: (1, True), 6: (2, True)}
    assert starts_outside_fences(points, page) == {0: (1, False), 5: (1, True), 6: (2, True)}
    rule = ["---", "", "Text after a rule.", "---", "More"]  # a thematic break, not front matter: its first line is no key
    assert starts_outside_fences({2: (1, True), 4: (1, True)}, rule) == {2: (1, True), 4: (1, True)}
