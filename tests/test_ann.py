"""The approximate search backends (usearch HNSW graph, FAISS inverted lists; exact re-scoring) and
sharded indexes.

Small indexes make either backend return every leaf, so it must give exactly the exact backend's
results; a larger synthetic pool checks recall; the graph (or lists) file follows every commit, is never
trusted when missing or stale, and survives kill -9 like the rest of the index."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from fakes import HashEmbedder
from test_index import DOCS, ROOT, state, write_docs

from hichunk.errors import HichunkError
from hichunk.retrieval import FillOptions, Index, IndexConfig, ShardedIndex
from hichunk.retrieval.index import candidates, ivf
from hichunk.retrieval.index.ann import Graph, backend, import_usearch
from hichunk.retrieval.index.candidates import AnnRanker, ExactRanker, KeyTable
from hichunk.retrieval.index.store import Pool

try:
    import_usearch()  # imports Ray first when it is installed (see import_usearch)
except HichunkError:
    pytest.skip("usearch is not installed", allow_module_level=True)

try:
    ivf.import_faiss()
    APPROXIMATE = ["ann", "ivf"]
except HichunkError:  # the graph is still tested; the lists' tests need faiss-cpu (test extra)
    APPROXIMATE = ["ann"]

QUERIES = ["how often should I clean the panels?", "茶叶怎么储存？", "kneading the dough", "the"]


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_docs("docs")
    return tmp_path


def build(path: str, search: str, paths=("docs",)) -> Index:
    index = Index.create(path, IndexConfig(leaf_tokens=24, search=search), embedder=HashEmbedder())
    index.add_paths(list(paths))
    return index


def reopen(path: str) -> Index:
    return Index.open(path, embedder=HashEmbedder())


def same_results(a, b, budgets=(20, 50, 400), docs=None) -> None:
    for query in QUERIES:
        for budget in budgets:
            assert a.search(query, FillOptions(budget=budget), docs=docs).to_dict() == \
                   b.search(query, FillOptions(budget=budget), docs=docs).to_dict(), (query, budget)


def graph_keys(index: Index) -> np.ndarray:
    entry = index.store.manifest["ann"]
    cls, params, _ = backend(index.config.search)
    with open(os.path.join(index.store.path, entry["file"]), "rb") as fh:
        return cls.from_bytes(fh.read(), params(**entry["params"])).keys()


@pytest.mark.parametrize("search", APPROXIMATE)
def test_ann_equals_exact_on_a_small_index_and_follows_every_commit(corpus, search):
    exact, ann = build("exact", "exact"), build("ann", search)
    same_results(exact, ann)
    assert np.array_equal(graph_keys(ann), np.sort(ann.store.key_table().keys))
    assert os.listdir("ann/ann") == [os.path.basename(ann.store.manifest["ann"]["file"])]

    write_docs("docs", {"solar.md": DOCS["solar.md"].replace("twice a year", "every spring and every autumn")})
    for index in (exact, ann):
        index.add_paths(["docs"])
        index.remove(["docs/tea.md"])
    ann = reopen("ann")
    same_results(exact, ann)
    assert "every spring" in ann.search("when do I clean the glass?", FillOptions(budget=40)).context
    assert np.array_equal(graph_keys(ann), np.sort(ann.store.key_table().keys))  # removed rows left the graph
    assert len(os.listdir("ann/ann")) == 1 and ann.store.manifest["ann"]["rows"] == ann.n_leaves
    info = json.loads(subprocess.run([sys.executable, "-m", "hichunk", "index", "info", "--index", "ann"],
                                     capture_output=True, text=True, check=True).stdout)
    assert info["config"]["search"] == search
    assert info["ann"]["library"].startswith({"ann": "usearch", "ivf": "faiss-cpu"}[search])


@pytest.mark.parametrize("search", APPROXIMATE)
def test_memory_index_with_ann_equals_exact(corpus, search):
    exact = Index.memory(IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    ann = Index.memory(IndexConfig(leaf_tokens=24, search=search), embedder=HashEmbedder())
    for index in (exact, ann):
        index.add_paths(["docs"])
    same_results(exact, ann)
    same_results(exact, ann, docs=["docs/tea.md", "docs/bread.md"])


@pytest.mark.parametrize("search", APPROXIMATE)
def test_compaction_rebuilds_the_graph(corpus, search):
    ann = build("ann", search)
    for _ in range(4):  # rewrite one document again and again: its old rows die, then are compacted away
        text = open("docs/solar.md", encoding="utf-8").read() + "\nOne more line about panels.\n"
        write_docs("docs", {"solar.md": text})
        ann.add_paths(["docs"])
    rows = sum(s["rows"] for s in ann.store.manifest["segments"].values())
    assert rows <= 2 * ann.n_leaves
    assert np.array_equal(graph_keys(ann), np.sort(ann.store.key_table().keys))
    same_results(build("exact", "exact"), reopen("ann"))


@pytest.mark.parametrize("search", APPROXIMATE)
@pytest.mark.parametrize("damage", ["missing", "corrupt", "stale"])
def test_a_missing_or_stale_graph_is_rebuilt_never_trusted(corpus, damage, search, caplog):
    exact, ann = build("exact", "exact"), build("ann", search)
    path = os.path.join("ann", ann.store.manifest["ann"]["file"])
    if damage == "missing":
        os.remove(path)
    elif damage == "corrupt":
        with open(path, "r+b") as fh:
            fh.seek(100)
            fh.write(b"\x00garbage\x00")
    else:  # a valid graph file, named by its content, that holds other rows: an older commit's graph
        shutil.copytree("ann", "ann-old")
        reopen("ann-old").remove(["docs/tea.md"])
        old = json.load(open("ann-old/manifest.json"))["ann"]["file"]
        shutil.copy(os.path.join("ann-old", old), os.path.join("ann", old))
        manifest = json.load(open("ann/manifest.json"))
        manifest["ann"]["file"] = old
        with open("ann/manifest.json", "w") as fh:
            json.dump(manifest, fh)
    with caplog.at_level(logging.WARNING, logger="hichunk"):
        again = reopen("ann")
        same_results(exact, again)
    assert "rebuilding it from the vectors" in caplog.text
    again.add_paths(["docs"])  # nothing changed: no commit, the next one writes a good graph
    write_docs("docs", {"kites.md": "# Kites\n\nKites fly in steady wind.\n"})
    again.add_paths(["docs"])
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="hichunk"):
        assert np.array_equal(graph_keys(reopen("ann")), np.sort(reopen("ann").store.key_table().keys))
        reopen("ann").search("kites")
    assert "rebuilding" not in caplog.text


UPDATE_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from fakes import HashEmbedder
from hichunk.retrieval.index import Index
print(Index.open("idx", embedder=HashEmbedder()).add_paths(["docs"]).encoded)
"""


@pytest.mark.parametrize("search", APPROXIMATE)
@pytest.mark.parametrize("fault", ["ann-written", "before-manifest", "after-manifest"])
def test_kill_during_an_ann_commit_leaves_before_or_after(corpus, fault, search):
    build("idx", search).close()
    before = state()
    write_docs("docs", {"solar.md": DOCS["solar.md"].replace("south", "the equator"), "new.md": "# New\n\nKites.\n"})
    env = dict(os.environ, HF_HUB_OFFLINE="1", HICHUNK_FAULT=fault)
    crashed = subprocess.run([sys.executable, "-c", UPDATE_SCRIPT.format(tests=os.path.join(ROOT, "tests"))], env=env,
                             capture_output=True, text=True)
    assert crashed.returncode == -9, crashed.stderr
    after_crash = state()
    index = reopen("idx")
    assert np.array_equal(graph_keys(index), np.sort(index.store.key_table().keys))  # the committed graph matches
    index.add_paths(["docs"])
    assert after_crash in (before, state()) and state() != before
    same_results(build("exact", "exact"), reopen("idx"))
    assert len(os.listdir("idx/ann")) == 1 and not [n for n in os.listdir("idx") if n.endswith(".tmp")]


def synthetic_table(n: int, dim: int = 64, clusters: int = 40, seed: int = 0) -> tuple[KeyTable, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((clusters, dim)).astype(np.float32)
    vectors = centers[rng.integers(0, clusters, n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    docs = n // 50
    slots = np.repeat(np.arange(docs, dtype=np.int32), 50)
    nodes = np.tile(np.arange(1, 51, dtype=np.int32), docs)
    names = [f"d{i:05d}" for i in range(docs)]
    table = KeyTable(np.arange(n, dtype=np.uint64), slots, nodes, names, lambda pos: vectors[pos], dim)
    return table, vectors


def test_ann_recall_at_128_on_a_larger_pool():
    table, vectors = synthetic_table(20_000)
    ranker = AnnRanker(Graph.build(table.keys, vectors), table)
    exact = ExactRanker(Pool(vectors, table.slots, table.nodes, table.names))
    rng = np.random.default_rng(1)
    recalls = []
    for q in vectors[rng.integers(0, len(vectors), 30)]:
        q = q + 0.1 * rng.standard_normal(q.shape).astype(np.float32)
        q /= np.linalg.norm(q)
        got = [(d, n) for d, n, _ in _take(ranker.ranked(q), 128)]
        want = [(d, n) for d, n, _ in _take(exact.ranked(q), 128)]
        recalls.append(len(set(got) & set(want)) / 128)
        scores = [s for _, _, s in _take(ranker.ranked(q), 128)]
        assert scores == sorted(scores, reverse=True)  # one block: exact scores, best first
    assert np.mean(recalls) >= 0.98
    # the walk can ask for more than one block: later blocks bring new leaves only
    many = [(d, n) for d, n, _ in _take(ranker.ranked(vectors[0]), 600)]
    assert len(many) == len(set(many)) == 600


def test_filtered_queries_scan_small_selections_exactly_and_search_large_ones(monkeypatch):
    table, vectors = synthetic_table(5_000)
    ranker = AnnRanker(Graph.build(table.keys, vectors), table)
    exact = ExactRanker(Pool(vectors, table.slots, table.nodes, table.names))
    few = table.names[:3]
    assert list(_take(ranker.ranked(vectors[7], few), 100)) == list(_take(exact.ranked(vectors[7], few), 100))
    monkeypatch.setattr(candidates, "EXACT_BELOW", 0)
    monkeypatch.setattr(candidates, "EXACT_SHARE", 0.0)
    many = table.names[:60]  # 3,000 of 5,000 leaves: through the graph, oversampled and filtered
    got = list(_take(ranker.ranked(vectors[7], many), 128))
    want = list(_take(exact.ranked(vectors[7], many), 128))
    assert all(d in many for d, _, _ in got)
    assert len({(d, n) for d, n, _ in got} & {(d, n) for d, n, _ in want}) >= 0.95 * 128
    with pytest.raises(HichunkError, match="no document"):
        ranker.ranked(vectors[0], ["nope"])


@pytest.mark.parametrize("search", APPROXIMATE)
def test_concurrent_graph_searches_with_different_lists_give_their_own_results(search):
    """usearch keeps the candidate list length on the index, FAISS takes it per call; either way each
    search must use its own."""
    from concurrent.futures import ThreadPoolExecutor

    table, vectors = synthetic_table(5_000)
    graph = backend(search)[0].build(table.keys, vectors)
    rng = np.random.default_rng(2)
    queries = vectors[rng.integers(0, len(vectors), 24)] + 0.3 * rng.standard_normal((24, vectors.shape[1])).astype(np.float32)
    jobs = [(i, expansion) for i in range(len(queries)) for expansion in (1, 4096)] * 4
    alone = {(i, e): graph.search(queries[i], 128, e).tolist() for i, e in set(jobs)}
    assert any(alone[(i, 1)] != alone[(i, 4096)] for i in range(len(queries)))  # the setting matters here
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda job: graph.search(queries[job[0]], 128, job[1]).tolist(), jobs))
    assert together == [alone[job] for job in jobs]


def _take(iterator, n):
    out = []
    for item in iterator:
        out.append(item)
        if len(out) == n:
            break
    return out


def test_search_backend_is_checked_and_needs_usearch(corpus, monkeypatch, capsys):
    from hichunk.cli import main

    with pytest.raises(HichunkError, match="unknown search backend"):
        IndexConfig(search="faiss")
    monkeypatch.setitem(sys.modules, "usearch", None)
    monkeypatch.setitem(sys.modules, "usearch.index", None)
    assert main(["-q", "index", "build", "docs", "--index", "idx", "--search", "ann"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        'hichunk: error: the ann search backend needs usearch: pip install "hichunk[ann]"']
    monkeypatch.setitem(sys.modules, "faiss", None)
    assert main(["-q", "index", "build", "docs", "--index", "idx2", "--search", "ivf"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        'hichunk: error: the ivf search backend needs faiss-cpu: pip install "hichunk[ivf]"']
    with pytest.raises(HichunkError, match="search 'ivf' is the directory format's own"):
        IndexConfig(search="ivf", store="embedded")


# -- shards ---------------------------------------------------------------------------------

@pytest.mark.parametrize("search", ["exact", *APPROXIMATE])
def test_two_shards_give_the_result_of_one_index(corpus, search):
    one = build("one", search)
    a = build("a", search, ["docs/solar.md", "docs/tea.md"])
    b = build("b", search, ["docs/bread.md"])
    both = ShardedIndex([reopen("a"), reopen("b")])
    assert sorted(both.docs) == sorted(one.docs) and both.n_leaves == one.n_leaves
    same_results(one, both)
    same_results(one, both, docs=["docs/tea.md", "docs/bread.md"])
    same_results(one, ShardedIndex([b, a]))  # shard order does not matter
    with pytest.raises(HichunkError, match="no document"):
        both.search("tea", docs=["docs/nope.md"])


def test_shards_must_hold_disjoint_documents_of_one_embedder(corpus):
    a, b = build("a", "exact"), build("b", "exact", ["docs/solar.md"])
    with pytest.raises(HichunkError, match="in two shards"):
        ShardedIndex([a, b])
    other = Index.memory(IndexConfig(leaf_tokens=24, embedder="minilm"), embedder=HashEmbedder())
    with pytest.raises(HichunkError, match="shards must share"):
        ShardedIndex([a, other])


def test_the_graph_search_list_can_be_set_per_index(corpus, capsys):
    from hichunk.cli import main

    ann, exact = build("ann", "ann"), build("exact", "exact")
    assert ann.ann_expansion == 8 and ann.ranker().expansion == 8  # a small graph: the shortest default list
    ann.ann_expansion = 2
    assert ann.ranker().expansion == 2
    same_results(exact, ann)
    with pytest.raises(HichunkError, match="at least 1"):
        ann.ann_expansion = 0
    assert main(["query", "--index", "ann", "--ann-expansion", "3", "--budget", "30", "kites"]) == 2  # other embedder
    assert "built with embedder" in capsys.readouterr().err


def test_the_default_search_list_grows_with_the_graph():
    from hichunk.retrieval.index.ann import default_expansion

    assert [default_expansion(n) for n in (10, 20_000, 100_000, 400_000, 1_000_000)] == [8, 8, 16, 32, 64]
    assert [default_expansion(n, "ivf") for n in (10, 20_000, 100_000, 400_000, 1_000_000)] == [800, 800, 200, 160, 112]


# -- inverted lists -----------------------------------------------------------------------------

needs_faiss = pytest.mark.skipif("ivf" not in APPROXIMATE, reason="faiss-cpu is not installed")


@needs_faiss
def test_lists_follow_the_size_and_train_on_enough_rows():
    assert [ivf.lists_for(n) for n in (1, 1_999, 2_000, 10_000, 100_000, 1_000_000)] == [1, 1, 32, 256, 1024, 4096]
    assert all(ivf.lists_for(n) * ivf.MIN_TRAIN_PER_LIST <= n for n in (2_000, 5_000, 9_000, 50_000))
    assert ivf.lists_for(3_000_000) > ivf.lists_for(1_000_000)
    rows = ivf.sample_rows(1_000_000)
    assert len(rows) == 4096 * ivf.TRAIN_SAMPLE_PER_LIST and np.array_equal(rows, ivf.sample_rows(1_000_000))


@needs_faiss
def test_lists_recall_at_128_grows_with_the_share_probed():
    table, vectors = synthetic_table(20_000)
    lists = ivf.IvfLists.build(table.keys, vectors)
    exact = ExactRanker(Pool(vectors, table.slots, table.nodes, table.names))
    rng = np.random.default_rng(1)
    queries = vectors[rng.integers(0, len(vectors), 30)] + 0.1 * rng.standard_normal((30, vectors.shape[1])).astype(np.float32)
    recall = {}
    for expansion in (8, 800):  # 1% and all of the lists
        ranker = AnnRanker(lists, table, expansion)
        found = []
        for q in queries / np.linalg.norm(queries, axis=1, keepdims=True):
            got = {(d, n) for d, n, _ in _take(ranker.ranked(q), 128)}
            found.append(len(got & {(d, n) for d, n, _ in _take(exact.ranked(q), 128)}) / 128)
        recall[expansion] = np.mean(found)
    assert lists.probes(8 * 128) == -(-lists.params.lists // 100) and lists.probes(800 * 128) == lists.params.lists
    assert recall[8] < recall[800] and recall[800] >= 0.99  # all lists: only the 8-bit codes stand between
    many = [(d, n) for d, n, _ in _take(AnnRanker(lists, table, 96).ranked(vectors[0]), 600)]
    assert len(many) == len(set(many)) == 600


@needs_faiss
def test_lists_are_trained_again_when_the_index_outgrows_them(corpus, monkeypatch):
    monkeypatch.setattr(ivf, "SINGLE_LIST_BELOW", 0)
    monkeypatch.setattr(ivf, "MIN_TRAIN_PER_LIST", 1)
    index = build("idx", "ivf", ["docs/tea.md"])
    first = index.store.manifest["ann"]["params"]
    assert first["trained_rows"] == index.n_leaves
    monkeypatch.setattr(ivf, "RETRAIN_FACTOR", 1.2)
    index.add_paths(["docs"])
    grown = index.store.manifest["ann"]["params"]
    assert grown["trained_rows"] == index.n_leaves > 1.2 * first["trained_rows"]
    assert np.array_equal(graph_keys(reopen("idx")), np.sort(index.store.key_table().keys))
    same_results(build("exact", "exact"), reopen("idx"))
