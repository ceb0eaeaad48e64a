"""The LanceDB store (``IndexConfig(store="embedded")``, ``--store``): the same index as the directory
format (add, update, remove, info, search, the recompute-ratio report, ``hichunk serve``), and a kill -9
at any point of a write leaves it as before or as after."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from fakes import HashEmbedder
from test_index import DOCS, ROOT, write_docs

from hichunk.errors import HichunkError
from hichunk.retrieval.index import Index, IndexConfig
from hichunk.retrieval.search import FillOptions

pytest.importorskip("lancedb")

CONFIG = {"leaf_tokens": 24, "method": "structure"}
QUERIES = ["solar panels south", "knead the dough", "绿茶", "cables after storms", "bake crust"]
FILLS = [FillOptions(budget=40), FillOptions(budget=120), FillOptions(budget=80, mode="reference"),
         FillOptions(budget=60, auto_merge=False), FillOptions(budget=100, order="document")]


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_docs("docs")
    return tmp_path


def both() -> tuple[Index, Index]:
    store = Index.create("idx-store", IndexConfig(store="embedded", **CONFIG), embedder=HashEmbedder())
    directory = Index.create("idx-dir", IndexConfig(**CONFIG), embedder=HashEmbedder())
    for index in (store, directory):
        index.add_paths(["docs"])
    return store, directory


def same_search(a: Index, b: Index, docs=None, full: bool = False) -> None:
    for fill in FILLS if full else FILLS[1:3]:
        for query in QUERIES if full else QUERIES[:3]:
            x, y = a.search(query, fill, docs=docs), b.search(query, fill, docs=docs)
            assert x.to_dict() == y.to_dict()


def test_store_index_equals_the_directory_index_through_add_update_remove(corpus):
    store, directory = both()
    assert os.path.isdir("idx-store/lancedb") and not os.path.exists("idx-store/manifest.json")
    same_search(store, directory, full=True)
    same_search(store, directory, docs=["docs/bread.md"])
    reopened = Index.open("idx-store", embedder=HashEmbedder())
    assert reopened.config == store.config and reopened.docs == store.docs
    assert {d: reopened.tree(d).text for d in reopened.docs} == {d: directory.tree(d).text for d in directory.docs}
    write_docs("docs", {"solar.md": DOCS["solar.md"].replace("south", "the equator"),
                        "kites.md": "# Kites\n\nKites fly on windy days.\n\n## Lines\n\nUse a strong line.\n"})
    reports = [index.add_paths(["docs"]) for index in (reopened, directory)]
    assert [r.to_dict() | {"seconds": 0, "encode_seconds": 0} for r in reports] == \
        [reports[1].to_dict() | {"seconds": 0, "encode_seconds": 0}] * 2  # the same R, the same counts
    assert reports[0].recompute_ratio is not None
    same_search(reopened, directory)
    for index in (reopened, directory):
        assert index.remove(["docs/bread.md"]).count("removed") == 1
    same_search(reopened, directory)
    assert reopened.store.info()["rows"] == reopened.n_leaves == directory.n_leaves  # replaced rows are gone
    with pytest.raises(HichunkError, match="no document"):
        reopened.remove(["docs/bread.md"])
    with pytest.raises(HichunkError, match="no document"):
        reopened.search("x", docs=["docs/bread.md"])


def test_store_settings_are_checked(corpus):
    with pytest.raises(HichunkError, match="search 'ann'"):
        IndexConfig(store="embedded", search="ann")
    Index.create("idx-store", IndexConfig(store="embedded", **CONFIG), embedder=HashEmbedder())
    with pytest.raises(HichunkError, match="other settings"):
        Index.create("idx-store", IndexConfig(store="embedded", leaf_tokens=99), embedder=HashEmbedder())
    with pytest.raises(HichunkError, match="other settings"):  # an existing store index keeps its store
        Index.create("idx-store", IndexConfig(**CONFIG), embedder=HashEmbedder())
    os.makedirs("busy")
    open("busy/file", "w").close()
    with pytest.raises(HichunkError, match="not an empty directory"):
        Index.create("busy", IndexConfig(store="embedded"))
    shared = str(corpus / "shared-db")  # a database reached by URI (here: a path) holds one index
    Index.create("idx-a", IndexConfig(store=shared, **CONFIG), embedder=HashEmbedder()).add_paths(["docs/tea.md"])
    assert len(Index.open("idx-a", embedder=HashEmbedder())) == 1
    with pytest.raises(HichunkError, match="already holds a hichunk index"):
        Index.create("idx-b", IndexConfig(store=shared, **CONFIG))


def test_cli_build_info_update_remove_query_on_a_store(corpus, capsys, monkeypatch):
    from hichunk.cli import main

    monkeypatch.setattr("hichunk.retrieval.index.index.load_embedder", lambda name=None: HashEmbedder())
    assert main(["-q", "index", "build", "docs", "--index", "idx", "--store", "embedded", "--method", "structure",
                 "--leaf-tokens", "24"]) == 0
    capsys.readouterr()
    assert main(["index", "info", "--index", "idx", "--docs"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["store"] == "lancedb" and info["uri"] == "embedded" and info["documents"] == 3
    assert info["config"]["store"] == "embedded" and info["rows"] == info["leaves"]
    write_docs("docs", {"bread.md": DOCS["bread.md"] + "\n## Storage\n\nKeep bread in a paper bag.\n"})
    assert main(["index", "update", "docs", "--index", "idx", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [d["status"] for d in report["docs"] if d["doc"] == "docs/bread.md"] == ["updated"]
    assert main(["query", "--index", "idx", "--budget", "60", "--json", "paper bag"]) == 0
    assert "paper bag" in json.loads(capsys.readouterr().out)["context"]
    assert main(["index", "remove", "docs/tea.md", "--index", "idx"]) == 0
    capsys.readouterr()
    assert main(["index", "info", "--index", "idx"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 2


def test_serve_on_a_store_index(corpus):
    pytest.importorskip("fastapi")
    from test_serve import request

    from hichunk.serve import BackgroundServer

    store, directory = both()
    with BackgroundServer(store, allow_update=True) as url:
        status, body = request(url, "/query", {"query": "knead the dough", "budget": 60})
        assert status == 200 and body == directory.search("knead the dough", FillOptions(budget=60)).to_dict()
        status, report = request(url, "/index/update", {"documents": [{"id": "kites.md", "text": "# Kites\n\nFly kites.\n",
                                                                        "format": "markdown"}], "remove": ["docs/tea.md"]})
        assert status == 200 and sorted(d["status"] for d in report["docs"]) == ["added", "removed"]
        status, health = request(url, "/health")
        assert status == 200 and health["documents"] == 3


# -- crash safety -----------------------------------------------------------------------

UPDATE_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {tests!r})
from fakes import HashEmbedder
from hichunk.retrieval.index import Index
index = Index.open("idx", embedder=HashEmbedder())
index.add_paths(["docs"], group_size=1)
index.remove(["docs/tea.md"])
"""

# trees written but not their leaves, leaves written, all written but not committed, committed but not
# collected, in the middle of collecting
FAULTS = ["tree-written", "segment-vectors", "before-manifest", "after-manifest", "gc", "before-manifest:2"]


def snapshot(path="idx") -> dict:
    index = Index.open(path, embedder=HashEmbedder())
    return {d: (e["sha256"], index.tree(d).text, index.store.rows(d)[1].tolist()) for d, e in index.docs.items()}


@pytest.mark.slow  # four processes per fault, each loading the database client (~30 s on 2 busy cores)
@pytest.mark.parametrize("fault", FAULTS)
def test_kill_during_a_store_write_leaves_before_or_after(corpus, fault):
    import shutil

    index = Index.create("idx", IndexConfig(store="embedded", **CONFIG), embedder=HashEmbedder())
    index.add_paths(["docs"])
    before = snapshot()
    write_docs("docs", {"solar.md": DOCS["solar.md"].replace("south", "the equator"),
                        "new.md": "# New\n\nA brand new document about kites.\n\n## Lines\n\nUse strong line.\n"})
    shutil.copytree("idx", "idx-clean")
    script = UPDATE_SCRIPT.format(root=ROOT, tests=os.path.join(ROOT, "tests"))
    clean = subprocess.run([sys.executable, "-c", script.replace('"idx"', '"idx-clean"')], capture_output=True,
                           text=True)
    assert clean.returncode == 0, clean.stderr
    after_update = snapshot("idx-clean")
    crashed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             env=dict(os.environ, HICHUNK_FAULT=fault))
    assert crashed.returncode == -9, crashed.stderr
    seen = snapshot()
    add_only = {k: v for k, v in after_update.items()} | ({"docs/tea.md": before["docs/tea.md"]})
    assert seen in (before, add_only, after_update)  # two commits (add, then remove): each before or after
    reopened = Index.open("idx", embedder=HashEmbedder())
    assert reopened.search("kites", FillOptions(budget=60)).passages is not None
    rerun = subprocess.run([sys.executable, "-c", script.replace('index.remove(["docs/tea.md"])', "")],
                           capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    if "docs/tea.md" in Index.open("idx", embedder=HashEmbedder()).docs:
        Index.open("idx", embedder=HashEmbedder()).remove(["docs/tea.md"])
    final = Index.open("idx", embedder=HashEmbedder())
    assert snapshot() == after_update
    with final.store.writing():  # garbage of the crashed write is collected by the next writer
        pass
    assert final.store.info()["rows"] == final.n_leaves


@pytest.mark.slow
def test_store_bench_speed_prints_every_store(capsys):
    from hichunk.integrations.store_bench import main

    assert main(["speed", "--sizes", "300", "--queries", "5", "--stores", "directory,lancedb"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "leaves/s" not in line]
    assert [r.split("|")[2].strip() for r in rows] == ["directory", "lancedb"]
