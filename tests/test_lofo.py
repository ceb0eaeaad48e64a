"""Leave-family-out: folds over families, fold models that never see their families, scores per family."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from hichunk.bench.family_summary import distribution_row, family_counts
from hichunk.bench.metrics.splits import SplitCounts
from hichunk.errors import HichunkError
from hichunk.models.train.corpus.corpus import CorpusDoc
from hichunk.models.train.folds import fold_dir, load_plan, plan_folds

FAMILIES = ("alpha-doc", "beta-doc", "gamma-doc", "delta-doc")


def _cdoc(i: int, family: str) -> CorpusDoc:
    body = "This paragraph explains the section in some detail. It has a second sentence too."
    md = f"# {family} {i}\n\n{body}\n\n## Install\n\n{body}\n\n### Requirements\n\n{body}\n\n## Usage\n\n{body}\n"
    return CorpusDoc(id=f"{family}/{i}", corpus=family, lang="en", title=f"d{i}", source=f"{i}.md", markdown=md,
                     n_words=len(md.split()), n_chars=len(md), n_headings=4, max_depth=3, format="markdown")


@pytest.fixture(scope="module")
def family_corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    docs = {"train": [], "dev": [], "test": []}
    for f, family in enumerate(FAMILIES):
        for i in range(3 + f):  # families of different sizes
            docs[("train", "train", "dev", "test", "train", "train", "train")[i]].append(_cdoc(i, family))
    for split, items in docs.items():
        (root / f"{split}.jsonl").write_text("".join(d.to_json() + "\n" for d in sorted(items, key=lambda d: d.id)))
    return str(root)


def test_folds_deal_families_evenly_and_deterministically():
    sizes = {"a": 10, "b": 7, "c": 4, "d": 3, "e": 3}
    plan = plan_folds(sizes, 2)
    assert plan == plan_folds(dict(reversed(list(sizes.items()))), 2)
    totals = Counter()
    for fam, fold in plan.fold.items():
        totals[fold] += sizes[fam]
    assert sorted(totals.values()) == [13, 14]
    assert set(plan.held_out(0)) | set(plan.held_out(1)) == set(sizes)
    assert not set(plan.held_out(0)) & set(plan.held_out(1))
    with pytest.raises(HichunkError):
        plan_folds(sizes, 1)
    with pytest.raises(HichunkError):
        plan_folds({"a": 1}, 2)
    with pytest.raises(HichunkError, match="not in the fold plan"):
        plan.fold_of("zeta")


def test_family_distribution_takes_medians_over_families_and_names_the_worst():
    def counts(gt1, gt2, hit1, hit2, pred1, pred2):
        return SplitCounts(Counter({1: gt1, 2: gt2}), Counter({1: pred1, 2: pred2}), Counter({1: hit1, 2: hit2}),
                           hit1 + hit2)

    per_doc = [counts(1, 4, 1, 4, 1, 4), counts(1, 4, 1, 2, 1, 4), counts(1, 0, 1, 0, 1, 0), counts(1, 4, 0, 0, 1, 4)]
    per_family = family_counts(["a", "b", "c", "d"], per_doc)
    row = distribution_row(per_family, boot=200)
    assert row["n_families"] == 4
    assert row["f1_l2_n"] == 3  # family c has no level-2 heading: left out of the level-2 distribution
    assert row["f1_l2_median"] == pytest.approx(0.5, abs=1e-3)
    assert [f for f, _ in row["f1_worst"]][0] == "d"
    assert row["f1_ci"][0] <= row["f1_median"] <= row["f1_ci"][1]


@pytest.mark.slow
def test_fold_models_never_see_their_families_and_score_their_own(family_corpus, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from hichunk.bench import split_eval
    from hichunk.bench.runners import chunk as chunk_runner
    from hichunk.models.train.encoder import TrainSettings, train_folds

    settings = TrainSettings(epochs=1, max_steps=2, windows=(16,), batch_lines=64, window_lines=32,
                             net={"buckets": 1 << 10, "embed_dim": 8, "cue_dim": 8, "hidden": 8, "layers": 1})
    out = tmp_path / "folds"
    configs = train_folds(family_corpus, str(out), settings, 2, progress=False)
    plan = load_plan(str(out))
    for index, cfg in enumerate(configs):
        held = plan.held_out(index)
        assert tuple(cfg.info["settings"]["exclude_families"]) == held
        n_train = sum(1 for line in open(f"{family_corpus}/train.jsonl") if json.loads(line)["corpus"] not in held)
        assert cfg.info["train_docs"] == n_train
    used: dict[str, set[str]] = {}
    real_chunk_all = chunk_runner.chunk_all

    def recording(docs, spec, *args, **kwargs):  # the per-fold calls the runner makes
        used.setdefault(spec.model or spec.label, set()).update(docs)
        return real_chunk_all(docs, spec, *args, **kwargs)

    monkeypatch.setattr(chunk_runner, "chunk_all", recording)
    report = tmp_path / "lofo.json"
    assert split_eval.main(["--corpus", family_corpus, "--lofo", "--methods", f"v={out},numbering", "-q",
                            "--bootstrap", "50", "--json", str(report)]) == 0
    for index in range(2):
        families = {doc_id.split("/")[0].removeprefix("unnumbered:") for doc_id in used[fold_dir(str(out), index)]}
        assert families == set(plan.held_out(index))
    data = json.loads(report.read_text())
    assert data["lofo"] and {r["family"] for r in data["families"]} == set(FAMILIES)
    overall = [r for r in data["rows"] if r["group"] == "all kinds [en]" and r["method"] == "v"]
    assert overall and overall[0]["n_families"] == len(FAMILIES)
    groups = {r["group"] for r in data["rows"]}
    assert {"markdown-corpus [en]", "markdown-unnumbered [en]"} <= groups

    # a run stopped before its last fold: that fold's families are left out, the rest still scored
    (out / "fold-01" / "weights.safetensors").unlink()
    assert split_eval.main(["--corpus", family_corpus, "--lofo", "--methods", f"v={out},numbering", "-q",
                            "--bootstrap", "50", "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert {r["family"] for r in data["families"]} == set(plan.held_out(0))

    # a family added to the corpus after the folds were planned: left out too, not an error
    late = plan.held_out(0)[0]
    saved = json.loads((out / "folds.json").read_text())
    del saved["fold"][late]
    (out / "folds.json").write_text(json.dumps(saved))
    assert split_eval.main(["--corpus", family_corpus, "--lofo", "--methods", f"v={out},numbering", "-q",
                            "--bootstrap", "50", "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert {r["family"] for r in data["families"]} == set(plan.held_out(0)) - {late}


def test_document_ids_name_their_family():
    from hichunk.models.train.corpus.families import document_family

    assert document_family("unnumbered:r-doc-info/R-ints.info.gz#12") == "r"
    assert document_family("text:book:manpages-zh:zh:dev:2") == "manpages-zh"
    assert document_family("markdown:styled:kile-doc/en/kile/index.docbook") == "kde"
    assert document_family("real-pdf:r-doc-pdf/R-data.pdf") == "r"
    assert document_family("python3.11-doc__library__os") == "python"  # a benchmark id made from a corpus id


def test_a_family_cap_keeps_each_family_small():
    from hichunk.models.train.encoder import _capped

    items = [(f, i) for f in "ab" for i in range(10)] + [("c", 0)]
    kept = _capped(items, lambda it: it[0], 3)
    assert Counter(f for f, _ in kept) == {"a": 3, "b": 3, "c": 1}
    assert kept == sorted(kept)  # order kept
    assert _capped(items, lambda it: it[0], None) == items
