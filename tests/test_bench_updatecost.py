"""Update cost: controlled edits, the recompute ratio, the null-edit control, the runner's report."""

from __future__ import annotations

import json
import random

import pytest
from bench_support import breadcrumb_inputs

from hichunk.bench.data.hicbench_format import load_dataset, write_dataset
from hichunk.bench.runners.methods import parse_methods
from hichunk.bench.updatecost.cost import Cost, leaf_inputs, recompute_cost
from hichunk.bench.updatecost.edits import EDIT_KINDS, body_sentences, make_edit
from hichunk.bench.updatecost.runner import run_update_cost, update_cost_report
from hichunk.chunkers import ChunkOptions, chunk_document
from hichunk.document.markdown import parse_markdown

OTHER = ["A completely different sentence about rivers and boats.", "Another sentence, this one about mountains."]


def document(n_sections: int = 4, seed: int = 0) -> str:
    rng = random.Random(seed)
    vocab = "cache index query vector token budget merge leaf tree node section heading".split()
    parts = ["# Handbook\n\nThe handbook explains the system in detail.\n"]
    for s in range(n_sections):
        parts.append(f"\n## Part {s}\n")
        for p in range(3):
            sents = [" ".join(rng.choice(vocab) for _ in range(12)).capitalize() + f" p{s}{p}{k}." for k in range(5)]
            parts.append("\n" + " ".join(sents) + "\n")
    return "".join(parts)


@pytest.mark.parametrize("kind", EDIT_KINDS)
def test_every_edit_kind_changes_what_it_says(kind):
    text = document()
    edit = make_edit(kind, text, random.Random(1), OTHER)
    assert edit is not None and edit.old == text
    if kind == "null":
        assert edit.new == text and not edit.changed
        return
    assert edit.new != text
    for a, b in edit.changed:
        assert 0 <= a < b <= len(edit.new)
    new_text = "".join(edit.new[a:b] for a, b in edit.changed)
    if kind.startswith("insert-"):
        assert len(edit.new) - len(text) >= 0.01 * len(text)
        assert edit.new.replace(new_text + "\n\n", "", 1).replace("\n" + new_text + "\n", "", 1) == text
        assert new_text.startswith(OTHER[0]) or new_text.startswith(OTHER[1])
    if kind == "insert-start":
        assert edit.new.startswith("# Handbook\n\n" + new_text)
    if kind == "insert-top":
        assert edit.new == new_text + "\n\n" + text
    if kind == "insert-end":
        assert edit.new.endswith(new_text + "\n")
    if kind == "replace-sentence":
        assert new_text in OTHER
    if kind in ("delete-paragraph", "move-section"):
        assert not edit.changed
    if kind == "move-section":
        assert sorted(edit.new.splitlines()) == sorted(text.splitlines())
        titles = lambda t: [ln for ln in t.splitlines() if ln.startswith("#")]  # noqa: E731
        assert titles(edit.new) != titles(text) and sorted(titles(edit.new)) == sorted(titles(text))


def test_edits_that_do_not_apply_return_none():
    flat = "# Only\n\nOne paragraph with one sentence that is long enough.\n"
    assert make_edit("move-section", flat, random.Random(0), OTHER) is None
    assert make_edit("delete-paragraph", flat, random.Random(0), OTHER) is None


def test_recompute_cost_hand_example(tokenizer):
    old = ["alpha beta", "gamma delta", "shared"]
    # new: one cached input, one new input half made of unchanged text, one duplicate of the new one
    new = [("alpha beta", (0, 10)), ("gamma epsilon", (11, 24)), ("gamma epsilon", (11, 24)), ("shared", (25, 31))]
    cost = recompute_cost(old, new, [(17, 24)], tokenizer)
    t = tokenizer.count
    assert cost.unique_inputs == 3 and cost.recomputed_inputs == 1
    assert cost.unique_tokens == t("alpha beta") + t("gamma epsilon") + t("shared")
    assert cost.recomputed_tokens == t("gamma epsilon")
    assert cost.ratio == pytest.approx(t("gamma epsilon") / cost.unique_tokens)
    assert cost.unchanged_share == pytest.approx(6 / 13)
    assert Cost(0, 0, ()).ratio == 0.0


@pytest.mark.parametrize("method", ["fixed", "recursive", "cdc", "structure"])
def test_null_edit_recomputes_nothing_and_fixed_size_shifts_everything(method, tokenizer):
    text = document(6)
    opts = ChunkOptions(leaf_tokens=64, tokenizer=tokenizer)
    old = leaf_inputs(chunk_document(parse_markdown(text), method, opts), breadcrumb_inputs)
    same = recompute_cost([t for t, _ in old], leaf_inputs(chunk_document(parse_markdown(text), method, opts), breadcrumb_inputs), [], tokenizer)
    assert same.ratio == 0.0
    edit = make_edit("insert-start", text, random.Random(0), OTHER)
    new = leaf_inputs(chunk_document(parse_markdown(edit.new), method, opts), breadcrumb_inputs)
    cost = recompute_cost([t for t, _ in old], new, edit.changed, tokenizer)
    if method == "fixed":
        assert cost.ratio > 0.9  # every window after the insertion moves
    else:
        assert cost.ratio < 0.5
    assert 0.0 <= cost.unchanged_share <= 1.0


def test_leaf_inputs_must_match_the_leaves(tokenizer):
    from hichunk.errors import HichunkError

    tree = chunk_document(parse_markdown(document(1)), "structure", ChunkOptions(tokenizer=tokenizer))
    with pytest.raises(HichunkError, match="inputs for"):
        leaf_inputs(tree, lambda t: ["one"])


def test_runner_report_and_control(tmp_path, tokenizer):
    docs = {f"d{i}": document(3 + i, seed=i) for i in range(3)}
    docs["flat"] = "# Flat\n\nJust one paragraph that cannot be moved or deleted from here.\n"
    write_dataset(str(tmp_path / "b"), "set", docs, [])
    ds = load_dataset(str(tmp_path / "b"))
    run = run_update_cost(ds, parse_methods("fixed:64,structure:64"), tokenizer, seed=0, progress=False,
                          encoder_inputs=breadcrumb_inputs)
    assert run.not_applicable["move-section"] == ["flat"]
    assert {(i.method, i.kind) for i in run.items} >= {("fixed:64", "null"), ("structure:64", "move-section")}
    out = str(tmp_path / "out")
    paths = update_cost_report(ds, run, out, ["hichunk", "bench", "update-cost"])
    report = open(paths[0], encoding="utf-8").read()
    assert "Null-edit control: R = 0 for every method." in report
    assert "data version" in report and ds.version in report and "hichunk bench update-cost" in report
    assert "(1 documents cannot take this edit)" in report
    results = json.load(open(paths[1], encoding="utf-8"))
    assert results["summary"]["fixed:64"]["null"]["R_pooled"] == 0.0
    assert results["summary"]["fixed:64"]["insert-start"]["R_pooled"] > results["summary"]["structure:64"]["insert-start"]["R_pooled"]
    assert paths[2].endswith("recompute_by_position.png")
    assert len([i for i in results["items"] if i["edit"] == "null"]) == 2 * len(docs)


def test_body_sentences_skip_headings():
    sents = body_sentences(parse_markdown("# T\n\nOne sentence here. Two sentences here.\n"))
    assert sents == ["One sentence here.", "Two sentences here."]


def test_a_nondeterministic_method_fails_the_null_control_even_with_a_tree_cache(tmp_path, tokenizer, monkeypatch):
    from hichunk.bench.runners.chunk import TreeCache
    from hichunk.chunkers import METHODS

    monkeypatch.setitem(METHODS, "jittery", "bench_support:JitteryChunker")
    write_dataset(str(tmp_path / "b"), "set", {"d0": document(3), "d1": document(4, seed=1)}, [])
    ds = load_dataset(str(tmp_path / "b"))
    cache = TreeCache(str(tmp_path / "trees"))
    for _ in range(2):  # the second run finds every old-version tree in the cache
        run = run_update_cost(ds, parse_methods("jittery,fixed:32"), tokenizer, kinds=["null"], progress=False,
                              encoder_inputs=breadcrumb_inputs, cache=cache)
        report = open(update_cost_report(ds, run, str(tmp_path / "out"))[0], encoding="utf-8").read()
        assert "Null-edit control FAILED for: jittery" in report
        assert all(i.cost.ratio == 0.0 for i in run.items if i.method == "fixed:32")


def test_spread_sample_covers_the_whole_id_range():
    from hichunk.bench.updatecost.runner import spread_sample

    ids = [f"a{i:02d}" for i in range(10)]
    assert spread_sample(ids, 3) == ["a00", "a03", "a06"]
    assert spread_sample(ids, None) == ids and spread_sample(ids, 50) == ids
