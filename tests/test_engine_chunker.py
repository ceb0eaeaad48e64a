"""The hichunk method: documents through the engine into lossless trees; hints; the prompt format; properties."""

import pytest
from engine_doubles import ScriptedModel, oracle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hichunk.chunkers import ChunkOptions, chunk_document, get_chunker
from hichunk.document import parse_document
from hichunk.engine import merge_with_headings, model_units, relative_headings
from hichunk.errors import HichunkError
from hichunk.models.prompt import INSTRUCTION, build_prompt, format_answer, load_instruction, parse_answer
from hichunk.protocol import ChunkStart, LineLayout, ParseError, check_starts
from hichunk.sentences import split_sentences
from hichunk.tree import Boundary

DOC = """# Solar panels

Solar panels turn light into power. They work best in the sun.

## Mounting

Mount the panels facing south. Use the supplied brackets.
Check the roof first. It must carry the weight.

## Wiring

Connect the panels in series. Then run the cable to the inverter.
"""


def texts_of(tree):
    return [(t, lv) for t, lv in tree.split_texts()]


def test_model_units_hide_heading_markers_and_stay_one_line():
    doc = parse_document(DOC, "markdown")
    units = model_units(doc, split_sentences(doc))
    assert [u.text for u in units][:3] == ["Solar panels", "Solar panels turn light into power.", "They work best in the sun."]
    assert units[3].text == "Mounting"
    assert all("\n" not in u.text and u.text == u.text.strip() for u in units)
    sentences = split_sentences(doc)
    body = [u for u in units if not doc.lines[sentences[u.sentence].line].heading]
    assert body and all(doc.clean.startswith(u.text, u.offset) for u in body)
    long = parse_document("x" * 2500 + "\n", "text")
    assert [len(u.text) for u in model_units(long, split_sentences(long))] == [1000]


def test_units_carry_their_layout_and_the_model_sees_it(tokenizer):
    doc = parse_document(DOC, "markdown")
    units = model_units(doc, split_sentences(doc))
    layout = {u.text: u.layout for u in units}
    assert layout["Mounting"] == LineLayout(True, True, True, True, False)  # a whole line between blank lines
    assert layout["Solar panels turn light into power."] == LineLayout(True, False, True, False, False)
    assert layout["They work best in the sun."] == LineLayout(False, True, False, True, False)
    assert layout["Check the roof first."] == LineLayout(True, False, False, False, False)  # no blank line above
    model = ScriptedModel([""], window_tokens=60)
    chunk_document(doc, "hichunk", ChunkOptions(hints="ignore", merge_over_chunk=False, tokenizer=tokenizer), model=model)
    for window in model.seen:
        assert len(window.layout) == len(window.lines)
        assert all(x == layout[t] for t, x in zip(window.lines, window.layout))
    indented = parse_document("Intro line\n\n    code here\n", "markdown")
    assert [u.layout.indented for u in model_units(indented, split_sentences(indented))] == [False, True]


def test_hints_ignore_takes_every_start_from_the_model(tokenizer):
    levels = {"Solar panels": 1, "Mounting": 2, "Wiring": 2, "Check the roof first.": 3}
    model = ScriptedModel(oracle(levels), window_tokens=60)
    tree = chunk_document(parse_document(DOC, "markdown"), "hichunk", ChunkOptions(hints="ignore", merge_over_chunk=False, tokenizer=tokenizer), model=model)
    assert "".join(t for t, _ in tree.split_texts()) == DOC
    assert [lv for _, lv in tree.split_texts()] == [1, 2, 3, 2]
    assert tree.split_texts().__next__()[0].startswith("# Solar panels")
    assert tree.meta["method"] == "hichunk" and tree.meta["model"] == "scripted" and tree.meta["windows"] > 1
    assert model.seen[0].lines[0] == "Solar panels"  # markers hidden from the model


def test_hints_use_keeps_headings_and_adds_model_starts_below_them(tokenizer):
    # The model marks the headings at odd levels and one body sentence; the markup wins on heading
    # lines and the body start is placed one level below its section heading.
    levels = {"Solar panels": 3, "Mounting": 1, "Wiring": 1, "Check the roof first.": 1}
    tree = chunk_document(parse_document(DOC, "markdown"), "hichunk", ChunkOptions(hints="use", merge_over_chunk=False, tokenizer=tokenizer),
                          model=ScriptedModel(oracle(levels), window_tokens=60))
    assert [(t.split("\n")[0], lv) for t, lv in tree.split_texts()] == [
        ("# Solar panels", 1), ("## Mounting", 2), ("Check the roof first. It must carry the weight.", 3), ("## Wiring", 2)]
    assert "".join(t for t, _ in tree.split_texts()) == DOC


def test_hints_use_leaves_fallback_starts_out(tokenizer):
    doc = parse_document(DOC, "markdown")
    garbage = chunk_document(doc, "hichunk", ChunkOptions(hints="use", merge_over_chunk=False, tokenizer=tokenizer),
                             model=ScriptedModel(["no idea"], window_tokens=40))
    assert garbage.meta["errors"] == garbage.meta["windows"] > 1
    structure = chunk_document(doc, "structure", ChunkOptions(merge_over_chunk=False, tokenizer=tokenizer))
    assert list(garbage.split_texts()) == list(structure.split_texts())
    plain = parse_document(DOC, "text")  # no explicit headings: fallbacks stay, as in the reference
    kept = chunk_document(plain, "hichunk", ChunkOptions(hints="use", merge_over_chunk=False, tokenizer=tokenizer), model=ScriptedModel(["no idea"], window_tokens=40))
    assert len(kept.splits) == kept.meta["windows"]


def test_merge_with_headings_rule():
    heads = [Boundary(10, 1, True), Boundary(50, 2, True)]
    predicted = [Boundary(0, 2), Boundary(5, 3), Boundary(10, 4), Boundary(20, 2), Boundary(30, 4), Boundary(60, 9)]
    merged = merge_with_headings(heads, predicted)
    assert [(b.offset, b.level) for b in merged] == [(0, 1), (5, 2), (10, 1), (20, 2), (30, 4), (50, 2), (60, 3)]
    assert merge_with_headings([], predicted) == predicted
    assert merge_with_headings(heads, [Boundary(70, 1)])[-1] == Boundary(70, 3)
    assert merge_with_headings([Boundary(0, 9, True)], [Boundary(5, 1), Boundary(6, 4)])[-1].level == 10  # capped


def test_relative_headings_shift_to_level1():
    doc = parse_document("## A\ntext\n### B\nmore\n## C\n", "markdown")
    assert [(b.level, b.title) for b in relative_headings(doc)] == [(1, True), (2, True), (1, True)]
    assert relative_headings(parse_document("plain\ntext\n", "text")) == []


def test_hichunk_defaults_to_the_shipped_encoder(tokenizer, monkeypatch):
    tree = chunk_document(parse_document(DOC, "markdown"), "hichunk", ChunkOptions(hints="ignore", merge_over_chunk=False, tokenizer=tokenizer))
    assert tree.meta["model"].startswith("hichunk-encoder#") and tree.meta["errors"] == 0
    assert "".join(t for t, _ in tree.split_texts()) == DOC
    from hichunk.models import registry

    monkeypatch.delitem(registry.MODELS, registry.DEFAULT_MODEL)
    with pytest.raises(HichunkError, match="no default split-point model"):
        get_chunker("hichunk")


def test_fold_and_merge_options_apply_to_predictions(tokenizer):
    levels = {"Solar panels": 1, "Mounting": 2, "Wiring": 2, "Check the roof first.": 3}
    doc = parse_document(DOC, "markdown")
    folded = chunk_document(doc, "hichunk", ChunkOptions(hints="ignore", max_level=2, merge_over_chunk=False, tokenizer=tokenizer),
                            model=ScriptedModel(oracle(levels), window_tokens=60))
    assert [lv for _, lv in folded.split_texts()] == [1, 2, 2]
    merged = chunk_document(doc, "hichunk", ChunkOptions(hints="ignore", merge_over_chunk=True, tokenizer=tokenizer),
                            model=ScriptedModel(oracle(levels), window_tokens=60))
    assert [lv for _, lv in merged.split_texts()] == [1]


# -- prompt format -------------------------------------------------------------

def test_prompt_lines_are_numbered_from_zero_after_the_instruction():
    assert build_prompt(["First.", "Second."], "INSTR\n") == "INSTR\n0 @ First.\n1 @ Second.\n"
    assert build_prompt(["x"]).startswith(INSTRUCTION) and INSTRUCTION.endswith("\n")


def test_answers_round_trip_and_parse_leniently():
    starts = [ChunkStart(0, 1, True), ChunkStart(3, 2, False), ChunkStart(7, 10, True)]
    text = format_answer(starts)
    assert text == "0, Level One, True\n3, Level Two, False\n7, Level Ten, True"
    assert parse_answer(text) == starts
    assert parse_answer(" 3 ,level two,  FALSE \n\n") == [ChunkStart(3, 2, False)]
    assert parse_answer("") == [] and parse_answer("\n \n") == []
    for bad in ("3, Level Eleven, True", "3, Level Two", "three, Level Two, True", "3, Level 2, True", "Sure! 0, Level One, True"):
        with pytest.raises(ParseError) as info:
            parse_answer(bad)
        assert info.value.raw == bad
    with pytest.raises(ParseError, match="empty"):
        parse_answer("  \n", strict_empty=True)


def test_check_starts_validates_every_level():
    ok = [ChunkStart(0, 1), ChunkStart(2, 2), ChunkStart(1, 3), ChunkStart(4, 2)]
    assert check_starts(ok, 5) is None
    assert "outside the window" in check_starts([ChunkStart(5, 1)], 5)
    assert "does not increase" in check_starts([ChunkStart(3, 2), ChunkStart(3, 2)], 5)
    assert "does not increase" in check_starts([ChunkStart(3, 4), ChunkStart(1, 4)], 5)
    assert "level 11" in check_starts([ChunkStart(1, 11)], 5)


def test_prompt_file_is_read_byte_for_byte(tmp_path):
    path = tmp_path / "prompt.txt"
    path.write_bytes(b"Segment this.\r\n>>> Input:\n")
    assert load_instruction(str(path)) == "Segment this.\r\n>>> Input:\n"
    with pytest.raises(HichunkError, match="cannot read"):
        load_instruction(str(tmp_path / "missing.txt"))
    (tmp_path / "empty.txt").write_text("  \n")
    with pytest.raises(HichunkError, match="empty"):
        load_instruction(str(tmp_path / "empty.txt"))


# -- properties -----------------------------------------------------------------

WORDS = st.sampled_from(["Alpha.", "beta", "Gamma rays.", "# Head", "## Sub", "中文句子。", "e.g. this", "", "  ", "\t", "x" * 30])
TEXT = st.lists(st.lists(WORDS, max_size=5).map(" ".join), max_size=25).map("\n".join)
ANSWER_LINE = st.one_of(
    st.builds(lambda i, lv, t: f"{i}, Level {lv}, {t}", st.integers(-3, 40),
              st.sampled_from(["One", "Two", "Three", "Ten", "Eleven", "two", "1"]), st.sampled_from(["True", "False", "x"])),
    st.text(max_size=20),
)
ANSWER = st.lists(ANSWER_LINE, max_size=6).map("\n".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT, fmt=st.sampled_from(["markdown", "text"]), answers=st.lists(ANSWER, min_size=1, max_size=4),
       window=st.integers(20, 80), hints=st.sampled_from(["use", "ignore"]), recurrent=st.sampled_from([1, 2]))
def test_any_answer_any_document_gives_a_lossless_tree(text, fmt, answers, window, hints, recurrent, tokenizer):
    from hichunk.engine import EngineSettings

    model = ScriptedModel(answers, window_tokens=window)
    doc = parse_document(text, fmt, "prop")
    tree = chunk_document(doc, "hichunk", ChunkOptions(leaf_tokens=16, hints=hints, tokenizer=tokenizer), model=model,
                          settings=EngineSettings(recurrent=recurrent))
    assert "".join(t for t, _ in tree.split_texts()) == text
    assert "".join(tree.raw_text(x) for x in tree.leaves()) == text
    assert all(1 <= s.level <= 10 for s in tree.splits)
    assert tree.meta["errors"] <= tree.meta["windows"]
