"""The iterative engine, driven by a scripted model through hand-checked cases.

Units are single words, so every numbered line costs 3 tokens (see
engine_doubles) and a window of overhead 10 + 3k tokens holds k lines.
"""

import pytest
from engine_doubles import ScriptedModel, oracle

from hichunk.engine import EngineSettings, PredictionCache, infer_points, residual_units, window_key
from hichunk.engine.windows import LineCounter, fill_window
from hichunk.errors import HichunkError
from hichunk.protocol import LineLayout, Window


def window_for(lines: int, overhead: int = 10) -> int:
    return overhead + 3 * lines


def test_single_window_keeps_every_start_and_numbers_from_zero():
    texts = ["Intro", "alpha", "beta", "Details", "gamma"]
    model = ScriptedModel(["0, Level One, True\n3, Level Two, False"], window_tokens=window_for(10))
    result = infer_points(texts, model)
    assert result.points == {0: (1, True), 3: (2, False)}
    [w] = model.seen
    assert w.lines == tuple(texts) and w.n_residual == 0 and w.is_last
    [rec] = result.windows
    assert (rec.first, rec.new_lines, rec.residual_lines, rec.tokens) == (0, 5, 0, 10 + 15)
    assert (rec.status, rec.action, rec.next, rec.starts, rec.cache) == ("ok", "last", 5, 2, "off")
    assert rec.answer == "0, Level One, True\n3, Level Two, False"


def three_sections():
    """3 sections x 2 subsections x 3 body lines: H0 S0.0 t t t S0.1 t t t H1 ..."""
    texts, levels = [], {}
    for h in range(3):
        texts.append(f"H{h}")
        levels[f"H{h}"] = 1
        for s in range(2):
            texts.append(f"S{h}.{s}")
            levels[f"S{h}.{s}"] = 2
            texts.extend(f"t{h}.{s}.{k}" for k in range(3))
    return texts, levels


def test_windows_restart_at_the_last_level1_start():
    texts, levels = three_sections()  # 27 units; sections start at 0, 9, 18
    model = ScriptedModel(oracle(levels), window_tokens=window_for(11))
    result = infer_points(texts, model)
    assert [(w.first, w.new_lines, w.action, w.next) for w in result.windows] == [
        (0, 11, "restart", 9), (9, 11, "restart", 18), (18, 9, "last", 27)]
    assert all(w.n_residual == 0 for w in model.seen)
    assert model.seen[1].lines[0] == "H1" and model.seen[2].lines[0] == "H2"
    expected = {i: (levels[t], True) for i, t in enumerate(texts) if t in levels}
    assert result.points == expected
    assert result.errors == 0


def reference_example():
    """60 units; level 1 at 0, 10, 50; level 2 at 2, 12, 15, 20, 25, 30, 33, 40, 45 (REFERENCE worked example)."""
    texts = [f"u{i}" for i in range(60)]
    levels = {"u0": 1, "u10": 1, "u50": 1}
    levels.update({f"u{i}": 2 for i in (2, 12, 15, 20, 25, 30, 33, 40, 45)})
    return texts, levels


def test_residual_lines_are_carried_and_shrunk():
    texts, levels = reference_example()
    model = ScriptedModel(oracle(levels), window_tokens=window_for(28))  # 28 lines; residual limit 84 // 2 = 42 tokens
    result = infer_points(texts, model)
    first, second, third, fourth = result.windows
    assert (first.first, first.new_lines, first.action, first.next) == (0, 28, "restart", 10)
    assert (second.first, second.new_lines, second.action, second.next) == (10, 28, "continue", 38)
    # Segment [10, 38) has 7 clips; (2, 3, 20) keeps 18 lines = 54 tokens > 42, so (1, 2, 15) keeps
    # the first clip [10, 12) and the last two [30, 33), [33, 38): 10 lines = 30 tokens.
    carried = [10, 11, 30, 31, 32, 33, 34, 35, 36, 37]
    w = model.seen[2]
    assert w.n_residual == 10 and list(w.lines[:10]) == [f"u{i}" for i in carried]
    assert (third.first, third.new_lines, third.residual_lines) == (38, 18, 10)  # (84 - 30) / 3 new lines
    assert third.action == "continue" and third.next == 56
    # The oracle also marks residual line 0 (u10) as level 1: it is context, so it is dropped and
    # the window counts only u50 as a level-1 start (no restart).
    assert model.seen[2].lines[0] == "u10"
    # Next segment starts at u50 with no level-2 start after it: one clip [50, 56).
    assert list(model.seen[3].lines[: model.seen[3].n_residual]) == [f"u{i}" for i in range(50, 56)]
    assert fourth.action == "last" and fourth.next == 60
    assert result.points == {int(t[1:]): (lv, True) for t, lv in levels.items()}


def test_residual_rule_matches_the_reference_worked_example():
    points = {0: (1, True), 10: (1, True), **{u: (2, True) for u in (2, 12, 15, 20, 25, 30, 33)}}
    lines = lambda units: 3 * len(units)  # noqa: E731
    big = residual_units(points, 38, 10_000, lines)
    assert big == [10, 11, 12, 13, 14, *range(25, 38)]  # 18 lines, numbered 0..17 in the next window
    assert residual_units(points, 38, 42, lines) == [10, 11, *range(30, 38)]
    assert residual_units(points, 38, 29, lines) == []  # (1, 2, 15) still too big: nothing is carried
    # At most 20 lines per clip; with no level-1 start the segment starts at the document start.
    assert residual_units({}, 50, 10_000, lines) == list(range(20))


def test_recurrent_mode_1_carries_nothing():
    texts, levels = reference_example()
    model = ScriptedModel(oracle(levels), window_tokens=window_for(28))
    infer_points(texts, model, EngineSettings(recurrent=1))
    assert all(w.n_residual == 0 for w in model.seen)


BAD_ANSWERS = {
    "garbage": "The document is about cats.",
    "out of range": "0, Level One, True\n99, Level Two, False",
    "decreasing": "5, Level Two, True\n3, Level Two, True",
    "negative": "-1, Level One, True",
    "unknown level": "2, Level Eleven, True",
    "missing field": "2, Level One",
    "no spaces but bad flag": "2,Level One,Maybe",
}


@pytest.mark.parametrize("kind", sorted(BAD_ANSWERS))
def test_malformed_answers_fall_back_to_one_level1_start_at_the_first_new_line(kind):
    texts, levels = reference_example()
    good = oracle(levels)
    # Window 3 (the one after the residual lines are carried) gets the bad answer.
    model = ScriptedModel(lambda w: BAD_ANSWERS[kind] if len(model.seen) == 3 else good(w), window_tokens=window_for(28))
    result = infer_points(texts, model)
    bad = result.windows[2]
    assert bad.status in ("parse_error", "invalid") and bad.error
    assert bad.residual_lines == 10 and bad.first == 38
    assert result.points[38] == (1, False)  # the first NEW line, not residual line 0
    assert all(u not in result.points for u in range(39, 56))  # nothing else from that window
    assert result.errors == 1
    assert bad.answer == BAD_ANSWERS[kind]


def test_empty_answer_means_no_starts_unless_strict():
    texts = [f"w{i}" for i in range(12)]
    lenient = infer_points(texts, ScriptedModel([""], window_tokens=window_for(5)))
    assert lenient.points == {} and lenient.errors == 0
    assert [w.first for w in lenient.windows] == [0, 5, 10]
    strict = infer_points(texts, ScriptedModel([""], window_tokens=window_for(5), strict_empty=True))
    assert strict.points == {0: (1, False), 5: (1, False), 10: (1, False)}
    assert strict.errors == 3 and {w.status for w in strict.windows} == {"parse_error"}


def test_a_line_given_two_levels_keeps_the_shallowest_and_line0_keeps_its_level():
    model = ScriptedModel(["0, Level Three, False\n1, Level Two, True\n1, Level One, False"], window_tokens=window_for(9))
    result = infer_points(["a", "b", "c"], model, EngineSettings(document_levels=False))  # the windows' own levels
    assert result.points == {0: (3, False), 1: (1, False)}


def test_restart_point_keeps_its_level_when_the_next_window_is_silent_there():
    texts = [f"w{i}" for i in range(10)]
    model = ScriptedModel(["0, Level One, True\n4, Level One, True", "2, Level Two, False"], window_tokens=window_for(6))
    result = infer_points(texts, model)
    assert [w.first for w in result.windows] == [0, 4]
    assert result.points == {0: (1, True), 4: (1, True), 6: (2, False)}


def test_window_too_small_for_the_instruction_is_a_clear_error():
    with pytest.raises(HichunkError, match="no room for lines"):
        infer_points(["a"], ScriptedModel([""], window_tokens=10, overhead=10))


def test_a_window_always_takes_a_new_line():
    texts = ["one two three four five six seven eight", "x"]  # the first line alone exceeds the budget
    result = infer_points(texts, ScriptedModel([""], window_tokens=window_for(2)))
    assert [(w.first, w.new_lines, w.overflow) for w in result.windows] == [(0, 1, True), (1, 1, False)]


def test_residual_lines_give_way_when_no_new_line_fits():
    counter = LineCounter(lambda t: len(t.split()), ["a", "b", "c"])
    filled = fill_window(2, 3, [0, 1], 6, counter)  # residual 6 tokens leave no room for line 2
    assert filled.residual == () and filled.n_new == 1


def test_no_units_no_windows():
    result = infer_points([], ScriptedModel(["0, Level One, True"]))
    assert result.points == {} and result.windows == []


def test_settings_are_checked():
    with pytest.raises(HichunkError, match="recurrent"):
        EngineSettings(recurrent=3)
    with pytest.raises(HichunkError, match="window"):
        EngineSettings(window_tokens=0)


def test_prediction_cache_reruns_only_changed_windows(tmp_path):
    texts, levels = three_sections()
    cache = PredictionCache(str(tmp_path / "cache.sqlite"))
    first = ScriptedModel(oracle(levels), window_tokens=window_for(11))
    a = infer_points(texts, first, cache=cache)
    assert [w.cache for w in a.windows] == ["miss"] * 3
    again = ScriptedModel(oracle(levels), window_tokens=window_for(11))
    b = infer_points(texts, again, cache=cache)
    assert again.seen == [] and b.points == a.points and [w.cache for w in b.windows] == ["hit"] * 3
    assert all(w.seconds == 0 for w in b.windows)
    edited = texts[:-1] + ["t2.1.2-edited"]  # only the last window's input changes
    c = infer_points(edited, ScriptedModel(oracle(levels), window_tokens=window_for(11)), cache=cache)
    assert [w.cache for w in c.windows] == ["hit", "hit", "miss"]
    other = ScriptedModel(oracle(levels), window_tokens=window_for(11), name="another model")
    assert [w.cache for w in infer_points(texts, other, cache=cache).windows] == ["miss"] * 3


def test_layout_follows_the_lines_into_windows_and_cache_keys(tmp_path):
    texts, levels = reference_example()
    layout = [LineLayout(True, True, i % 2 == 0, i % 3 == 0, i % 5 == 0) for i in range(len(texts))]
    model = ScriptedModel(oracle(levels), window_tokens=window_for(28))
    plain = ScriptedModel(oracle(levels), window_tokens=window_for(28))
    assert infer_points(texts, model, layout=layout).points == infer_points(texts, plain).points
    assert any(w.n_residual for w in model.seen)
    for w in model.seen:
        assert w.layout == tuple(layout[int(t[1:])] for t in w.lines)
    assert all(w.layout == () for w in plain.seen)
    shown = model.seen[0]
    flipped = Window(shown.lines, shown.n_residual, shown.is_last, (LineLayout(False),) + shown.layout[1:])
    keys = {window_key("m", shown), window_key("m", flipped), window_key("m", Window(shown.lines, 0, shown.is_last))}
    assert len(keys) == 3
    with pytest.raises(HichunkError, match="layout"):
        infer_points(texts, model, layout=layout[:-1])


def test_parse_errors_are_cached_too(tmp_path):
    cache = PredictionCache(str(tmp_path / "cache.sqlite"))
    infer_points(["a", "b"], ScriptedModel(["nonsense"]), cache=cache)
    model = ScriptedModel(["0, Level Two, True"])
    result = infer_points(["a", "b"], model, cache=cache)
    assert model.seen == [] and result.windows[0].status == "parse_error" and result.windows[0].answer == "nonsense"


def test_a_cache_that_cannot_be_opened_is_switched_off(tmp_path, caplog):
    bad = tmp_path / "corrupt.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    result = infer_points(["a"], ScriptedModel(["0, Level One, True"]), cache=PredictionCache(str(bad)))
    assert result.points == {0: (1, True)}
    assert "switched off" in caplog.text
