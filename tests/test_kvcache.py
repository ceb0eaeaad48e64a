"""The key-value cache under every hichunk cache, and its one failure policy."""

from __future__ import annotations

import logging
import os
import sqlite3

import numpy as np
import pytest

from hichunk.errors import HichunkError
from hichunk.kvcache import MEMORY, KVCache


def corrupt_file(path) -> str:
    path.write_bytes(b"this is not a database" * 100)
    return str(path)


def read_only_dir(tmp_path) -> str:
    """A directory nothing can be created in (root ignores permission bits, so it gets /proc)."""
    if os.geteuid() == 0:
        return "/proc"
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    return str(folder)


def test_round_trip_batches_and_reopening(tmp_path):
    path = str(tmp_path / "sub" / "c.sqlite")  # missing folders are made
    cache = KVCache(path)
    cache.put_many([(b"a", b"1"), (b"b", b"22")])
    cache.put(b"a", b"3")
    assert cache.get_many([b"a", b"b", b"c", b"a"]) == {b"a": b"3", b"b": b"22"}
    assert cache.get(b"c") is None and len(cache) == 2
    cache.close()
    assert KVCache(path).get(b"b") == b"22"


def test_memory_cache_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cache = KVCache(MEMORY)
    keys = [i.to_bytes(2, "big") for i in range(600)]  # more keys than one query takes
    cache.put_many((k, k * 3) for k in keys)
    assert cache.get_many(keys) == {k: k * 3 for k in keys}
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("where", ["read-only directory", "file as parent", "directory in its place"])
def test_a_path_that_cannot_be_opened_is_a_one_line_error(tmp_path, where):
    if where == "read-only directory":
        path = os.path.join(read_only_dir(tmp_path), "cache.sqlite")
    elif where == "file as parent":
        (tmp_path / "file").write_text("x")
        path = str(tmp_path / "file" / "cache.sqlite")
    else:
        path = str(tmp_path)
    with pytest.raises(HichunkError, match="cannot open the embedding cache") as info:
        KVCache(path, "embedding cache")
    assert "\n" not in str(info.value) and path in str(info.value)


def test_a_corrupt_file_switches_the_cache_off_with_one_warning(tmp_path, caplog):
    path = corrupt_file(tmp_path / "c.sqlite")
    with caplog.at_level(logging.WARNING):
        cache = KVCache(path, "tree cache")
        cache.put(b"k", b"v")
        assert cache.get(b"k") is None and len(cache) == 0 and not cache.enabled
    assert caplog.text.count("switched off") == 1 and "tree cache" in caplog.text
    assert open(path, "rb").read(22) == b"this is not a database"  # left as it was


def test_a_failure_mid_run_switches_the_cache_off_once(tmp_path, caplog):
    path = str(tmp_path / "c.sqlite")
    cache = KVCache(path, timeout=0.05)
    cache.put(b"kept", b"1")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another writer holds the file: our writes cannot get in
    with caplog.at_level(logging.WARNING):
        cache.put_many([(b"a", b"1"), (b"b", b"2")])
        cache.put(b"c", b"3")
        assert cache.get(b"kept") is None and not cache.enabled
    other.execute("ROLLBACK")
    assert caplog.text.count("switched off") == 1 and "locked" in caplog.text
    assert KVCache(path).get_many([b"kept", b"a", b"c"]) == {b"kept": b"1"}  # the failed batch left nothing


def test_every_cache_runs_on_without_a_corrupt_store(tmp_path, tokenizer, caplog):
    from fakes import HashEmbedder

    from hichunk.bench.runners.chunk import TreeCache, chunk_one
    from hichunk.bench.runners.methods import parse_method
    from hichunk.document import parse_document
    from hichunk.engine import PredictionCache
    from hichunk.retrieval.embedders import CachedEmbedder

    with caplog.at_level(logging.WARNING):
        predictions = PredictionCache(corrupt_file(tmp_path / "p.sqlite"))
        assert not predictions.enabled and predictions.get(b"k") is None
        embedder = CachedEmbedder(HashEmbedder(), KVCache(corrupt_file(tmp_path / "e.sqlite")))
        assert np.allclose(embedder.embed_passages(["one", "two"]), HashEmbedder().embed_passages(["one", "two"]))
        assert embedder.encoded == 2
        (tmp_path / "trees").mkdir()
        corrupt_file(tmp_path / "trees" / "trees.sqlite")
        spec = parse_method("structure")
        doc = parse_document("# A\n\nSome text here.\n", "markdown", "a")
        tree, _ = chunk_one(spec.chunker_for(tokenizer), spec, tokenizer, doc, TreeCache(str(tmp_path / "trees")))
        assert tree.text == doc.text
    assert caplog.text.count("switched off") == 3
