"""The split-point benchmark: labelled documents of every kind, one runner, one scorer."""

from __future__ import annotations

import json

import pytest
from engine_doubles import ScriptedModel

from hichunk.bench import split_eval
from hichunk.bench.metrics.splits import count_tree
from hichunk.document import parse_document
from hichunk.models.train.corpus.truth import Truth, markup_truth, placed_truth, record_truth
from hichunk.tokens import load_tokenizer
from hichunk.tree import Boundary, build_tree

MD = "# Guide\n\nIntro text here.\n\n## 1. Install\n\nRun it.\n\n## 2. Use\n\nType a command.\n"
TEXT = "GUIDE\n=====\n\nIntro text here.\n\n1. Install\n\nRun it.\n\n2. Use\n\nType a command.\n"


def test_truth_from_markup_offsets_and_titles():
    doc = parse_document(MD, "markdown")
    assert sorted(markup_truth(doc).at.values()) == [1, 2, 2]
    text = parse_document(TEXT, "text")
    truth = placed_truth(text, [{"level": 1, "offset": 0}, {"level": 2, "offset": TEXT.index("1. Install")},
                                {"level": 2, "title": "2. Use", "page": None}, {"level": 3, "title": "a command"},
                                {"level": 3, "title": "Nowhere"}, {"level": 3, "title": "C"}, {"level": 3, "title": "a"}])
    assert truth.at == {0: 1, TEXT.index("1. Install"): 2, TEXT.index("2. Use"): 2}
    # printed but not on a line of its own ("a command", "a"): headings the reading lost, which cost recall; a
    # long title found nowhere: garbled or reworded, still a heading; a short one never printed ("C" only
    # inside "command"): none
    assert truth.missing == [3, 3, 3] and truth.unprinted == [3]
    assert truth.levels == [1, 2, 2, 3, 3, 3]


def test_a_heading_is_credited_once():
    doc = parse_document(MD, "markdown")
    at = MD.index("## 1.")
    tree = build_tree(doc, [Boundary(0, 1, True), Boundary(at - 1, 2), Boundary(at, 2, True)], load_tokenizer(), None, None, {})
    counts = count_tree(tree, markup_truth(doc))
    assert counts.hit_no_level == 2 and sum(counts.pred.values()) == 3  # the blank-line chunk and the heading chunk


def test_starts_below_a_pdf_outline_are_not_scored_unless_asked():
    """A real PDF's outline lists chapters only: a level-2 start on an unlisted line says nothing wrong;
    an unlisted start at the outline's own depth is still false, and a listed one still a hit."""
    doc = parse_document(TEXT, "text")
    record = {"kind": "pdf", "real": True, "headings": [{"level": 1, "offset": 0}]}
    truth = record_truth(doc, record)
    assert truth.deepest == 1 and record_truth(doc, {**record, "real": False}).deepest is None
    at1, at2 = TEXT.index("1. Install"), TEXT.index("2. Use")
    tree = build_tree(doc, [Boundary(0, 1, True), Boundary(at1, 2, True), Boundary(at2, 1, True)], load_tokenizer(), None, None, {})
    counts = count_tree(tree, truth)
    assert dict(counts.pred) == {1: 2} and counts.hit_no_level == 1 and counts.hit[1] == 1
    strict = count_tree(tree, truth, below_truth=True)
    assert dict(strict.pred) == {1: 2, 2: 1} and strict.hit_no_level == 1


def errors_on_first_window(settings) -> ScriptedModel:
    """Registry loader: an unreadable answer on a document's first window, a valid start elsewhere."""

    def answer(window) -> str:
        return "not an answer" if window.n_residual == 0 and window.lines[0].lower().startswith("guide") else "0, Level Two, True"

    return ScriptedModel(answer, window_tokens=30, overhead=10)


@pytest.fixture
def labels_dir(tmp_path):
    (tmp_path / "t.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "m.md").write_text(MD, encoding="utf-8")
    heads = [{"level": 1, "offset": 0, "title": "GUIDE", "page": None},
             {"level": 2, "offset": TEXT.index("1. Install"), "title": "1. Install", "page": None}]
    records = [{"id": "text:a", "split": "test", "lang": "en", "kind": "text", "path": "t.txt", "headings": heads},
               {"id": "md:a", "split": "test", "lang": "en", "kind": "markdown", "path": "m.md", "real": True,
                "headings": [{"level": 1, "offset": 0}, {"level": 2, "offset": MD.index("## 1.")},
                             {"level": 2, "offset": MD.index("## 2.")}]},
               {"id": "text:b", "split": "train", "lang": "en", "kind": "text", "path": "t.txt", "headings": heads}]
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(tmp_path)


def test_runs_every_method_over_every_kind_and_counts_fallbacks(labels_dir, monkeypatch):
    from hichunk.models import registry

    monkeypatch.setitem(registry.MODELS, "scripted-errors", "test_split_eval:errors_on_first_window")
    docs = split_eval.rendered_documents(labels_dir, "test", None, progress=False)
    assert sorted((d.group, d.id) for d in docs) == [("markdown-real", "md:a"), ("text", "text:a")]
    results = split_eval.evaluate(docs, "numbering,scripted-errors,fixed", progress=False)
    assert set(results) == {"numbering", "scripted-errors", "fixed"}
    res = results["scripted-errors"]
    assert all(w >= 2 for w in res.windows) and all(f >= 1 for f in res.fallbacks)
    rows = split_eval.summarise(docs, results, boot=20)
    assert {r["group"] for r in rows} == {"markdown-real [en]", "text [en]"}
    numbering = next(r for r in rows if r["method"] == "numbering" and r["group"] == "markdown-real [en]")
    # headings hidden: "1. Install" and "2. Use" are found by their numbers (as level 1, their depth, so no
    # level-2 hit); "Guide" opens the document's first chunk, which every method predicts at level 1
    assert numbering["recall"] == pytest.approx(1.0) and numbering["f1_l2"] == 0 and numbering["f1_l1"] == pytest.approx(0.5)
    assert 0 < next(r for r in rows if r["method"] == "scripted-errors")["fallback_rate"] <= 1
    assert "fallbk%" in split_eval.format_rows(rows)


def test_even_sample_takes_the_same_share_of_each_group():
    doc = parse_document("x\n", "text")
    items = [split_eval.Labelled(f"{g}{i}", g, "en", doc, Truth(), 0.0, 1) for g in ("pdf", "text") for i in range(10)]
    picked = split_eval.even_sample(items, 4)
    assert [d.id for d in picked] == ["pdf0", "pdf2", "pdf5", "pdf7", "text0", "text2", "text5", "text7"]
    assert split_eval.even_sample(items, 50) == items


def test_command_line(labels_dir, tmp_path, capsys):
    out = tmp_path / "rows.json"
    assert split_eval.main(["--labels", labels_dir, "--methods", "numbering", "--json", str(out), "-q"]) == 0
    assert "text [en]" in capsys.readouterr().out and json.loads(out.read_text())["docs"] == ["md:a", "text:a"]
    assert split_eval.main(["--labels", labels_dir, "--kinds", "pdf", "-q"]) == 2


def _labelled(text: str, group: str = "markdown-corpus", lang: str = "en") -> split_eval.Labelled:
    doc = parse_document(text, "markdown")
    return split_eval.Labelled("d", group, lang, doc, markup_truth(doc), 0.0, 10)


def test_written_markdown_is_also_scored_by_whether_its_headings_carry_numbers():
    """An unnumbered title over numbered sections is numbered; three headings at least; numbers-stripped
    copies and other kinds stay out of the numbering rows."""
    numbered = _labelled("# Guide\n\nx\n\n## 1. Install\n\ny\n\n## 2. Use\n\nz\n\n### 2.1 Flags\n\nw\n")
    plain = _labelled("# Guide\n\nx\n\n## Install\n\ny\n\n## Use\n\nz\n", lang="zh")
    mixed = _labelled("# Guide\n\nx\n\n## 1. Install\n\ny\n\n## Use\n\nz\n")
    assert [split_eval.heading_numbering(d) for d in (numbered, plain, mixed)] == ["numbered", "no numbers", None]
    assert split_eval.heading_numbering(_labelled("# Guide\n\nx\n\n## 1. Install\n\ny\n")) is None
    stripped = _labelled(numbered.doc.clean, group="markdown-unnumbered")
    names = dict(split_eval.group_selections([numbered, plain, mixed, stripped]))
    assert names["markdown numbered [en]"] == [0] and names["markdown no numbers [zh]"] == [1]
    assert names["markdown-corpus [en]"] == [0, 2] and names["markdown-unnumbered [en]"] == [3]
