"""A start predicted on the description under an API entry's signature line moves onto the signature."""

from __future__ import annotations

from engine_doubles import ScriptedModel

from hichunk.engine import infer_points
from hichunk.engine.signatures import signature_shaped, starts_on_signatures_above
from hichunk.models.prompt import format_answer
from hichunk.protocol import ChunkStart, LineLayout

PARAGRAPH = LineLayout(blank_before=True, blank_after=True)
# An API reference as its lines read with heading markers hidden: each signature, then its description.
REFERENCE = ["Module article", "class Article()", "专栏类", "def json()", "转换为 JSON 数据", "请先调用 fetch_content()",
             r"async def set\_like()", "设置专栏点赞状态", "Returns: dict"]


def on_descriptions(window) -> str:
    """A model that sees each entry begin but takes signatures for code: starts on the line after them."""
    return format_answer(ChunkStart(i, 1 if i == 0 else 2, True) for i, t in enumerate(window.lines)
                         if i == 0 or signature_shaped(window.lines[i - 1]))


def test_starts_under_signatures_move_onto_them():
    layout = [PARAGRAPH] * len(REFERENCE)
    result = infer_points(REFERENCE, ScriptedModel(on_descriptions, window_tokens=400), layout=layout)
    assert sorted(result.points) == [0, 1, 3, 6]
    assert all(title for _, title in result.points.values())


def test_signature_shapes():
    for text in ("def json()", "async def get_info()", "class Api()", r"def \_\_init\_\_()", "Widget.render(ctx)",
                 "get_info() -> dict", "ｄｅｆ ｊｓｏｎ（）", "`console.log([data][, ...args])`", "`new Console(options)`"):
        assert signature_shaped(text), text
    for text in (".. versionadded:: 3.11", ">>> int(Shape.CIRCLE) 1", "Set the arena allocator.", "StrEnum",
                 "print(x) is fine here", "Returns: dict", "`pip install hichunk`", "`foo()", "see `foo()`"):
        assert not signature_shaped(text), text


def test_only_standalone_signatures_above_unstyled_starts_take_the_start():
    texts = ["def json()", "转换为 JSON 数据"]
    points = {1: (2, True)}
    assert starts_on_signatures_above(points, texts, [PARAGRAPH, PARAGRAPH]) == {0: (2, True)}
    inline = LineLayout(blank_before=True, blank_after=False)  # the signature runs on into the next line
    assert starts_on_signatures_above(points, texts, [inline, PARAGRAPH]) == points
    assert starts_on_signatures_above(points, texts, [PARAGRAPH, LineLayout()]) == points  # no blank line between
    toc = LineLayout(blank_before=True, blank_after=True, role="toc")
    assert starts_on_signatures_above(points, texts, [toc, PARAGRAPH]) == points
    numbered = ["def json()", "2.1 转换"]  # the start's own line has heading style: it is the heading
    assert starts_on_signatures_above(points, numbered, [PARAGRAPH, PARAGRAPH]) == points
    assert starts_on_signatures_above({0: (1, True), 1: (2, True)}, texts, [PARAGRAPH] * 2) == {0: (1, True), 1: (2, True)}
    assert starts_on_signatures_above(points, texts, None) == points
