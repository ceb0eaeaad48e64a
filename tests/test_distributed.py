"""Distributed builds: the Ray pipeline gives the local build's index, honours the cache, and survives
crashes of a worker or of the driver.

The fast tier runs the pipeline on ``InlineExecutor`` (same driver, tasks in this process); the slow
tier starts a local Ray with 2 CPUs (in this process, and in subprocesses killed at checkpoints)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from fakes import HashEmbedder
from test_index import DOCS, state, write_docs

from hichunk.kvcache import KVCache
from hichunk.retrieval.index import Index, IndexConfig
from hichunk.retrieval.index.distributed import InlineExecutor, RaySettings, embed_task
from hichunk.tree import to_dict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")

MORE = {f"extra{i}.md": f"# Extra {i}\n\nLine about topic {i}. It has words.\n\n## Part\n\nMore words on {i} and kites.\n"
        for i in range(5)}
CHANGED = {"solar.md": DOCS["solar.md"].replace("twice a year", "every spring and every autumn"),
           "new.md": "# New\n\nA brand new document about kites. Kites fly in steady wind.\n"}


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_docs("docs", {**DOCS, **MORE})
    return tmp_path


def assert_same_index(a: Index, b: Index) -> None:
    """Same documents, sources, trees, leaves and vectors (up to float tolerance)."""
    assert sorted(a.docs) == sorted(b.docs)
    for doc in a.docs:
        assert {k: a.docs[doc][k] for k in ("source", "sha256", "leaves")} == \
               {k: b.docs[doc][k] for k in ("source", "sha256", "leaves")}
        assert to_dict(a.tree(doc)) == to_dict(b.tree(doc))
    (va, da, na, names_a), (vb, db, nb, names_b) = a.pool(), b.pool()
    assert names_a == names_b and np.array_equal(da, db) and np.array_equal(na, nb)
    assert np.allclose(va, vb, atol=1e-6)


def statuses(report) -> dict[str, str]:
    return {d.doc: d.status for d in report.docs}


class RecordingExecutor(InlineExecutor):
    """Runs tasks inline and keeps every embedding batch it was given."""

    def __init__(self, workers: int = 2):
        super().__init__(workers)
        self.batches: list[list[str]] = []

    def submit(self, fn, *args):
        if fn is embed_task:
            self.batches.append(list(args[1]))
        return super().submit(fn, *args)


def test_pipeline_builds_and_updates_the_local_index(corpus):
    local = Index.create("local", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    want = local.add_paths(["docs"])
    spread = Index.create("spread", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    got = spread.add_paths(["docs"], ray=InlineExecutor(2))
    assert_same_index(local, spread)
    assert statuses(got) == statuses(want) and set(statuses(got).values()) == {"added"}
    assert (got.leaves, got.encoded, got.cache_hits) == (want.leaves, want.encoded, want.cache_hits)
    assert Index.open("spread", embedder=HashEmbedder()).search("kites").to_dict() == local.search("kites").to_dict()

    write_docs("docs", CHANGED)
    want = local.add_paths(["docs"])
    got = spread.add_paths(["docs"], ray=InlineExecutor(3))
    assert_same_index(local, spread)
    assert statuses(got) == statuses(want)
    assert statuses(got)["docs/solar.md"] == "updated" and statuses(got)["docs/new.md"] == "added"
    assert got.recompute_ratio == pytest.approx(want.recompute_ratio) and 0 < got.recompute_ratio < 1
    assert got.encoded == want.encoded and got.cache_hits == want.cache_hits
    again = spread.add_paths(["docs"], ray=InlineExecutor(2))
    assert set(statuses(again).values()) == {"unchanged"} and again.encoded == 0


def test_pipeline_sends_only_cache_misses_in_length_sorted_batches(corpus):
    settings = RaySettings(texts_per_task=5, docs_per_task=2)
    index = Index.memory(IndexConfig(leaf_tokens=24), embedder=HashEmbedder(), cache="emb.sqlite")
    executor = RecordingExecutor()
    from hichunk.retrieval.index.distributed import ingest_distributed
    from hichunk.retrieval.index.ingest import Ingestor
    from hichunk.retrieval.index.reports import UpdateReport

    paths = sorted(os.path.join("docs", n) for n in os.listdir("docs"))
    from hichunk.document import load_document

    items = [(p, (lambda p=p: load_document(p))) for p in paths]
    report = UpdateReport()
    with index.store.writing():
        written = ingest_distributed(Ingestor(index.store, index.embedder, report), items, executor,
                                     index._base_embedder, settings, index.store.write)
        index.store.commit(written, set(), index.embedder.id)
    sent = [t for batch in executor.batches for t in batch]
    assert len(sent) == len(set(sent)) == report.encoded  # every distinct input once
    assert all(len(b) <= 5 for b in executor.batches)
    assert all([len(t) for t in b] == sorted((len(t) for t in b), reverse=True) for b in executor.batches)

    # a second index sharing the cache file sends nothing: the driver found everything in the cache
    executor = RecordingExecutor()
    other = Index.memory(IndexConfig(leaf_tokens=24), embedder=HashEmbedder(), cache="emb.sqlite")
    report = other.add(items, ray=executor)
    assert executor.batches == [] and report.encoded == 0 and report.cache_hits == report.leaves > 0
    for got, want in zip(other.pool(), index.pool()):
        assert np.array_equal(got, want)


def test_failed_documents_are_reported_not_staged(corpus):
    with open("docs/broken.md", "wb") as fh:
        fh.write(b"\x00\x01\x02 binary \x00\x00" * 20)
    index = Index.create("idx", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    report = index.add_paths(["docs"], ray=InlineExecutor(2))
    assert statuses(report)["docs/broken.md"] == "failed" and "docs/broken.md" not in index.docs
    assert report.count("added") == len(DOCS) + len(MORE)


def test_ray_settings_and_a_missing_ray(corpus, monkeypatch, capsys):
    from hichunk.cli import main
    from hichunk.errors import HichunkError

    assert RaySettings.of(True) == RaySettings("local") and RaySettings.of("auto", 3) == RaySettings("auto", 3)
    assert RaySettings.of(None) is None
    with pytest.raises(HichunkError, match="workers= needs ray="):
        RaySettings.of(None, 2)
    with pytest.raises(HichunkError, match="at least 1"):
        RaySettings("local", 0)
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    assert main(["-q", "index", "build", "docs", "--index", "idx", "--ray"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ['hichunk: error: a distributed build needs ray: pip install "hichunk[ray]"']
    assert not os.path.exists("idx")
    with pytest.raises(HichunkError, match="hichunk\\[ray\\]"):
        Index.memory(IndexConfig(leaf_tokens=24), embedder=HashEmbedder()).add_paths(["docs"], ray="local")
    assert main(["-q", "index", "build", "docs", "--index", "idx", "--ray-workers", "2"]) == 2
    assert "--ray-workers needs --ray" in capsys.readouterr().err


# -- on a local Ray (slow tier) ----------------------------------------------------------------

@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": TESTS, "HF_HUB_OFFLINE": "1"}})
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_ray_build_and_update_equal_the_local_ones(corpus, local_ray, capsys):
    from hichunk.cli import main

    local = Index.create("local", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    local.add_paths(["docs"])
    spread = Index.create("spread", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    report = spread.add_paths(["docs"], ray="local", workers=2)  # the running local Ray is used
    assert_same_index(local, spread) and report.count("added") == len(DOCS) + len(MORE)
    write_docs("docs", CHANGED)
    want, got = local.add_paths(["docs"]), spread.add_paths(["docs"], ray=True)
    assert_same_index(local, spread)
    assert statuses(got) == statuses(want) and got.recompute_ratio == pytest.approx(want.recompute_ratio)

    # the CLI, with the default embedder, against a local build of the same files
    assert main(["-q", "index", "build", "docs", "--index", "cli-local", "--method", "structure"]) == 0
    assert main(["-q", "index", "build", "docs", "--index", "cli-ray", "--method", "structure", "--ray",
                 "--ray-workers", "2", "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{"):])["encoded"] > 0
    assert_same_index(Index.open("cli-local"), Index.open("cli-ray"))


RAY_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from fakes import HashEmbedder
from hichunk.retrieval.index import Index
from hichunk.retrieval.index.distributed import RaySettings
settings = RaySettings("local", 2, docs_per_task=2, texts_per_task=4)  # several tasks of each kind
report = Index.open("idx", embedder=HashEmbedder()).add_paths(["docs"], ray=settings)
print(report.encoded)
"""


def run_ray_build(fault: str, once: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HICHUNK_FAULT=fault, PYTHONPATH=TESTS)
    if once:
        env["HICHUNK_FAULT_ONCE"] = once
    return subprocess.run([sys.executable, "-c", RAY_SCRIPT.format(tests=TESTS)], env=env, capture_output=True,
                          text=True, timeout=900)


@pytest.mark.slow
def test_a_killed_ray_worker_is_retried_and_the_build_completes(corpus):
    pytest.importorskip("ray")
    local = Index.create("local", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    local.add_paths(["docs"])
    Index.create("idx", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    done = run_ray_build("ray-embed-task", once=str(corpus / "killed-once"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert os.path.exists(corpus / "killed-once")  # a worker did die
    assert_same_index(local, Index.open("idx", embedder=HashEmbedder()))


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["ray-cache-put:1", "before-manifest", "after-manifest"])
def test_a_killed_ray_driver_leaves_before_or_after_and_the_rerun_encodes_only_the_rest(corpus, fault):
    pytest.importorskip("ray")
    import shutil

    index = Index.create("idx", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    index.add_paths(["docs/solar.md", "docs/bread.md"])
    index.close()
    before = state()
    shutil.copytree("idx", "idx-clean")
    needed = Index.open("idx-clean", embedder=HashEmbedder()).add_paths(["docs"]).encoded
    cached_before = len(KVCache("idx/cache.sqlite"))

    crashed = run_ray_build(fault)
    assert crashed.returncode == -9, crashed.stderr[-2000:]
    after_crash = state()
    cached_by_crash = len(KVCache("idx/cache.sqlite")) - cached_before
    rerun = Index.open("idx", embedder=HashEmbedder()).add_paths(["docs"], ray=InlineExecutor(2))
    assert after_crash in (before, state())
    assert_same_index(Index.open("idx-clean", embedder=HashEmbedder()), Index.open("idx", embedder=HashEmbedder()))
    assert cached_by_crash + rerun.encoded == needed
    if fault == "ray-cache-put:1":
        assert after_crash == before and 0 < cached_by_crash < needed
    assert not [n for n in os.listdir("idx") if n.endswith(".tmp")]



GRAPH_THEN_RAY = """
import sys
from hichunk.retrieval.index.ann import import_usearch
import_usearch()  # what an ANN index's first commit or search does
assert "torch" not in sys.modules and "tokenizers" not in sys.modules  # (either, loaded first, hides the problem)
import ray
ray.init(num_cpus=1, include_dashboard=False)
print(ray.get(ray.remote(lambda: "ok").remote()))
ray.shutdown()
"""


@pytest.mark.slow
def test_a_local_ray_starts_after_the_graph_library_is_loaded(tmp_path):
    """usearch's compiled module loaded before Ray made ``ray.init`` abort (std::regex_error); import_usearch
    imports Ray first."""
    pytest.importorskip("ray")
    pytest.importorskip("usearch")
    done = subprocess.run([sys.executable, "-c", GRAPH_THEN_RAY], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "ok"


@pytest.mark.slow
@pytest.mark.parametrize("store", ["", "embedded"])
def test_a_three_node_cluster_survives_a_killed_node_and_builds_the_local_index(corpus, store):
    """Three Ray nodes on this machine (``ray.cluster_utils.Cluster``); one worker node is killed while the
    build runs; its tasks are retried on the others and the index (directory or LanceDB store) equals a local
    build."""
    ray = pytest.importorskip("ray")
    from fakes import SlowHashEmbedder
    from ray.cluster_utils import Cluster

    if store:
        pytest.importorskip("lancedb")
    import threading
    import time

    local = Index.create("local", IndexConfig(leaf_tokens=24), embedder=HashEmbedder())
    local.add_paths(["docs"])
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": TESTS, "HF_HUB_OFFLINE": "1"}})
    try:
        assert len([n for n in ray.nodes() if n["Alive"]]) == 3
        spread = Index.create("spread", IndexConfig(leaf_tokens=24, store=store), embedder=SlowHashEmbedder())
        done = threading.Event()
        outcome: dict = {}

        def build():
            try:
                outcome["report"] = spread.add_paths(["docs"], ray=RaySettings("auto", None, docs_per_task=1,
                                                                               texts_per_task=2))
            except BaseException as exc:  # surfaced below
                outcome["error"] = exc
            finally:
                done.set()

        thread = threading.Thread(target=build)
        thread.start()
        deadline = time.time() + 300
        while not os.path.exists("spread/cache.sqlite") or len(KVCache("spread/cache.sqlite")) == 0:
            assert time.time() < deadline and not done.is_set(), outcome
            time.sleep(0.05)
        cluster.remove_node(workers[0], allow_graceful=False)  # a worker node dies mid-build
        killed_mid_build = not done.is_set()
        thread.join(600)
        assert "error" not in outcome, outcome.get("error")
        assert killed_mid_build
        gone = time.time() + 120  # the control store marks the node dead after its health checks fail
        while len([n for n in ray.nodes() if n["Alive"]]) != 2:
            assert time.time() < gone, "the removed node is still listed alive"
            time.sleep(0.5)
        assert outcome["report"].count("added") == len(DOCS) + len(MORE)
        assert_same_index(local, Index.open("spread", embedder=HashEmbedder()))
    finally:
        ray.shutdown()
        cluster.shutdown()
