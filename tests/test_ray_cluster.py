"""The Ray build on a multi-node cluster simulated on one machine (its own module: it starts its own Ray,
so no other module's Ray may be running)."""

from __future__ import annotations

import os

import pytest
from fakes import HashEmbedder
from index_checks import MORE, assert_same_index, make_corpus
from test_index import DOCS

from hichunk.kvcache import KVCache
from hichunk.retrieval.index import Index, IndexConfig
from hichunk.retrieval.index.distributed import RaySettings

TESTS = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    return make_corpus(tmp_path, monkeypatch)


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
