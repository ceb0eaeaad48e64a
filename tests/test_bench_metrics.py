"""hicbench metrics: split points, evidence recall, Rouge-L, bootstrap intervals, evaluate modules."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hichunk.bench.metrics.evidence import EvidenceScorer, evidence_recall, normalize, prepare_evidence
from hichunk.bench.metrics.rouge import best_rouge_l, rouge_l
from hichunk.bench.metrics.splits import count_text_splits, hash_count, pooled, scores, split_point_scores
from hichunk.bench.stats import mean_ci, paired_diff_ci, statistic_ci

DOC = "# T\nintro\n## A\na text\n## B\nb\n# U\nu\n### C\nc\n"
SPLITS = [("# T\nintro\n", 1), ("## A\na text\n", 1), ("## B\nb\n# U\nu\n", 2), ("### C\n", 3), ("c\n", 2)]


def test_hash_count_reads_the_leading_run_of_spaces_and_hashes():
    assert hash_count("## Title") == 2
    assert hash_count("# # Title") == 2
    assert hash_count("#3 is a number") == 1
    assert hash_count("Title # not") == 0


def test_split_points_hand_worked_example():
    # ground truth: L1 = {T, U}, L2 = {A, B}, L3 = {C}
    # predictions: L1 = {"# T" hit, "## A" wrong level}, L2 = {"## B" hit, "c" miss}, L3 = {"### C" hit}
    # "# U" sits inside a chunk and earns nothing; without level 4 of 5 chunks start with '#'
    counts = count_text_splits(DOC, SPLITS)
    assert dict(counts.gt) == {1: 2, 2: 2, 3: 1}
    assert dict(counts.pred) == {1: 2, 2: 2, 3: 1}
    assert dict(counts.hit) == {1: 1, 2: 1, 3: 1}
    assert counts.hit_no_level == 4
    s = scores(counts)
    assert s["L1"] == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5})
    assert s["L2"] == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5})
    assert s["L3"] == pytest.approx({"precision": 1.0, "recall": 1.0, "f1": 1.0})
    assert s["no_level"] == pytest.approx({"precision": 0.8, "recall": 0.8, "f1": 0.8})


def test_split_points_are_micro_pooled_over_documents():
    perfect = ("# A\nx\n", [("# A\nx\n", 1)])
    bad = ("# A\nx\n# B\ny\n# C\nz\n", [("# A\nx\n# B\ny\n# C\nz\n", 2)])
    s = split_point_scores([perfect[0], bad[0]], [perfect[1], bad[1]])
    # pooled: L1 gt 4, pred 1, hit 1 -> P 1, R 0.25 (a macro mean would give R 0.5)
    assert s["L1"]["precision"] == pytest.approx(1.0)
    assert s["L1"]["recall"] == pytest.approx(0.25)
    assert s["no_level"]["precision"] == pytest.approx(1.0)
    assert s["no_level"]["recall"] == pytest.approx(2 / 4)


def test_only_column_zero_hashes_are_ground_truth_and_empty_classes_score_zero():
    counts = count_text_splits(" # indented\ntext\n#. list item\n", [(" # indented\ntext\n#. list item\n", 1)])
    assert dict(counts.gt) == {1: 1}  # "#. list item" counts, as in the HiCBench scorer
    s = scores(counts, [1, 2])
    assert s["L2"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_pooled_counts_add_up():
    c = pooled([count_text_splits(DOC, SPLITS), count_text_splits(DOC, SPLITS)])
    assert c.gt[1] == 4 and c.hit_no_level == 8


def test_normalize_follows_the_reference_order():
    assert normalize("The Cat, an  apple!") == "cat apple"
    assert normalize("“Curly” quotes stay") == "“curly” quotes stay"  # only ASCII punctuation goes
    assert normalize("“Curly”。", punctuation="unicode") == "curly"
    assert normalize("theory of a-b") == "theory of ab"  # articles only as whole words
    assert prepare_evidence("## Setup. It runs.") == "Setup.It runs."


def test_evidence_recall_is_character_weighted_and_reference_compatible():
    evidences = ["The cat sat on the mat.", "Dogs bark.", "Birds sing loudly in spring."]
    context = "the cat sat on a mat. birds sing loudly in spring"
    got = evidence_recall(evidences, context)
    weights = [len(e) for e in evidences]
    assert got == pytest.approx((weights[0] + weights[2]) / sum(weights))
    res = EvidenceScorer(evidences).score(context)
    assert (res.hits, res.total, res.all_found) == (2, 3, False)
    assert evidence_recall([], "anything") == 0.0


def test_glued_context_finds_evidence_with_an_inner_period_space():
    evidence = ["See Table 8.6. It lists the types."]
    context = "Intro. See Table 8.6. It lists the types. More."
    assert evidence_recall(evidence, context) == pytest.approx(1.0)
    # the reference glues only the evidence, so a lossless context misses it
    assert evidence_recall(evidence, context, glue_context=False) == 0.0
    # a context whose leaves were glued without a space matches either way
    assert evidence_recall(evidence, "See Table 8.6.It lists the types.", glue_context=False) == pytest.approx(1.0)


@given(st.lists(st.text(alphabet="ab .,#\n", min_size=1, max_size=30), min_size=1, max_size=5))
@settings(max_examples=60, deadline=None)
def test_evidence_copied_verbatim_into_the_context_is_always_found(evidences):
    context = "Prefix. " + " ".join(evidences) + " suffix."
    assert evidence_recall(evidences, context) == pytest.approx(1.0)


def test_rouge_l_hand_values_and_quirks():
    # distinct words: ref {the, cat, sat, on, mat} (5), cand {the, cat, sat} (3); LCS words {the, cat, sat}
    r, p = 3 / 5, 1.0
    assert rouge_l("the cat sat", "the cat sat on the mat") == pytest.approx(2 * p * r / (p + r + 1e-8))
    assert rouge_l("", "x") == 0.0 and rouge_l("x", "") == 0.0
    assert rouge_l("Cat", "cat") == 0.0  # no lower-casing
    assert rouge_l("3.5 m", "3 5 m") == pytest.approx(1.0, abs=1e-6)  # '.' splits sentences
    assert best_rouge_l("Answer: blue sky", ["red", "blue sky"]) == pytest.approx(1.0, abs=1e-6)
    assert rouge_l("天空是蓝色的", "天空蓝色", cjk_chars=True) > 0.5




def test_bootstrap_intervals_are_seeded_and_bracket_the_mean():
    values = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2]
    a, b = mean_ci(values), mean_ci(values)
    assert a == b
    assert a.low <= a.value <= a.high and a.n == 6
    assert mean_ci([]).n == 0 and math.isnan(mean_ci([]).value)
    d = paired_diff_ci(values, values)
    assert (d.value, d.low, d.high) == (0.0, 0.0, 0.0)
    shifted = paired_diff_ci([v + 0.1 for v in values], values)
    assert shifted.value == pytest.approx(0.1) and shifted.low == pytest.approx(0.1)
    with pytest.raises(ValueError):
        paired_diff_ci([1.0], [1.0, 2.0])


def test_statistic_ci_resamples_items():
    data = [1.0, 2.0, 3.0, 10.0]
    est = statistic_ci(len(data), lambda idx: float(sum(data[i] for i in idx)))
    assert est.value == 16.0 and est.low < est.value < est.high


def test_evaluate_modules_load_from_local_paths_offline(tmp_path, monkeypatch):
    evaluate = pytest.importorskip("evaluate")
    from hichunk.bench.metrics import evaluate_module_path

    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    sp = evaluate.load(evaluate_module_path("split_point_f1"))
    got = sp.compute(predictions=[[{"text": t, "level": lv} for t, lv in SPLITS]], references=[DOC])
    assert got["no_level_f1"] == pytest.approx(0.8) and got["L1_f1"] == pytest.approx(0.5)
    er = evaluate.load(evaluate_module_path("evidence_recall"))
    got = er.compute(predictions=["the cat sat. on a mat"], references=[["The cat sat.", "On the mat", "dog"]])
    assert got["evidence_recall"] == pytest.approx(22 / 25) and got["all_found"] == 0
    rl = evaluate.load(evaluate_module_path("hicbench_rouge_l"))
    assert rl.compute(predictions=["blue sky"], references=[["blue sky", "red"]])["rouge_l"] == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError):
        evaluate_module_path("nope")


def test_bootstrap_ci_for_any_statistic_with_axis():
    import numpy as np

    from hichunk.bench.stats import bootstrap_ci, fmt_ci

    value, low, high = bootstrap_ci([1.0, 2.0, 3.0, 100.0], np.median)
    assert value == 2.5 and low <= value <= high
    assert all(math.isnan(v) for v in bootstrap_ci([]))
    assert fmt_ci([1.0, 1.0, 1.0], np.mean) == "1 (95% CI 1-1, n=3)"
