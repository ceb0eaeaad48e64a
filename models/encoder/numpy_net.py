"""The encoder network's forward pass in numpy: inference without importing torch.

Chunking a document with the shipped model needs one small network over a few thousand
lines; importing torch for it cost more than the whole prediction (about a second of every
CLI call). This module runs the same network (``hichunk.models.encoder.net.LineLabeller``,
in eval mode) from a dict of arrays, to float32 rounding of torch's own results
(``tests/test_encoder_numpy.py`` compares them). Training stays in torch.
"""

from __future__ import annotations

import numpy as np

from hichunk.models.encoder.net_config import SIM_SPAN, NetConfig

BAG_BLOCK = 16  # bags that ``_bag_mean`` sums at once: their gathered rows stay in the CPU's cache


def _bag_mean(table: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Mean of ``table`` rows per bag (bags given flat with start offsets; none is empty).

    ``BAG_BLOCK`` bags at a time: gathering a whole window's rows first (tens of MB) and summing
    them afterwards read them back from memory, three times slower. A bag's sum is the same
    ``reduceat`` over the same rows either way, so the same to the bit.
    """
    ends = np.append(offsets, len(ids))
    sums = np.empty((len(offsets), table.shape[1]), dtype=table.dtype)
    for first in range(0, len(offsets), BAG_BLOCK):
        last = min(first + BAG_BLOCK, len(offsets))
        start, stop = ends[first], ends[last]
        rows = np.take(table, ids[start:stop], axis=0)
        sums[first:last] = np.add.reduceat(rows, offsets[first:last] - start, axis=0)
    return sums / np.diff(ends).astype(np.float32)[:, None]


def _bigru(x: np.ndarray, fwd: tuple[np.ndarray, ...], bwd: tuple[np.ndarray, ...]) -> np.ndarray:
    """Both directions of one bidirectional GRU layer over ``x`` [n, in] -> [n, 2 * hidden].

    ``fwd`` and ``bwd`` are each direction's (weight_ih, weight_hh, bias_ih, bias_hh) in torch's gate
    order (reset, update, new). Why one loop for both: at this size every step costs numpy call
    overhead, not arithmetic, so the two directions step together (one matrix-vector product over a
    block-diagonal matrix, one set of gate operations on [2, hidden]), a third faster than two loops.
    The reset and update rows are halved so that sigmoid(v) = 0.5 + 0.5 tanh(v / 2) costs one tanh;
    halving is exact in binary floating point, and the zero blocks add exact zeros, so the results are
    the same numbers as one direction at a time.
    """
    n, size = x.shape[0], fwd[1].shape[1]
    gates = 3 * size
    half = np.ones(gates, dtype=np.float32)
    half[: 2 * size] = 0.5
    gi = np.empty((n, 2, gates), dtype=np.float32)
    gi[:, 0] = (x @ fwd[0].T + fwd[2]) * half
    gi[:, 1] = ((x @ bwd[0].T + bwd[2]) * half)[::-1]  # the backward direction in reversed time
    w = np.zeros((2 * size, 2 * gates), dtype=np.float32)
    w[:size, :gates] = fwd[1].T * half
    w[size:, gates:] = bwd[1].T * half
    b_hh = np.stack([fwd[3] * half, bwd[3] * half])
    h = np.zeros((2, size), dtype=np.float32)
    out = np.empty((n, 2, size), dtype=np.float32)
    for t in range(n):
        gh = (h.reshape(-1) @ w).reshape(2, gates) + b_hh
        rz = 0.5 + 0.5 * np.tanh(gi[t, :, : 2 * size] + gh[:, : 2 * size])
        cand = np.tanh(gi[t, :, 2 * size :] + rz[:, :size] * gh[:, 2 * size :])
        z = rz[:, size:]
        h = (1.0 - z) * cand + z * h
        out[t] = h
    return np.concatenate([out[:, 0], out[::-1, 1]], axis=1)


def _similarity(sem: np.ndarray) -> np.ndarray:
    """[n, 2]: cosine of each line's meaning with the mean of the next / previous ``SIM_SPAN`` lines."""
    n = len(sem)
    out = np.zeros((n, 2), dtype=np.float32)
    norms = np.linalg.norm(sem, axis=1)
    for col, sign in enumerate((1, -1)):
        total = np.zeros_like(sem)
        count = np.zeros(n, dtype=np.float32)
        for k in range(1, SIM_SPAN + 1):
            if k >= n:
                break
            if sign > 0:
                total[:-k] += sem[k:]
                count[:-k] += 1
            else:
                total[k:] += sem[:-k]
                count[k:] += 1
        mean = total / np.maximum(count, 1.0)[:, None]
        cos = (sem * mean).sum(1) / (norms * np.linalg.norm(mean, axis=1) + 1e-6)
        out[:, col] = np.where(count > 0, cos, 0.0)
    return out


def _band_attention(x: np.ndarray, a: dict[str, np.ndarray], heads: int, span: int) -> np.ndarray:
    """``nn.MultiheadAttention`` (eval mode) over one window restricted to a band of ``span`` lines,
    then the residual and ``LayerNorm``: ``LineLabeller``'s attention layer."""
    n, width = x.shape
    d = width // heads
    qkv = x @ a["attn.in_proj_weight"].T + a["attn.in_proj_bias"]
    q, k, v = (qkv[:, i * width : (i + 1) * width].reshape(n, heads, d).transpose(1, 0, 2) for i in range(3))
    scores = (q / np.float32(np.sqrt(d))) @ k.transpose(0, 2, 1)  # [heads, n, n]
    pos = np.arange(n)
    scores = np.where(np.abs(pos[None, :] - pos[:, None]) <= span, scores, np.float32(-np.inf))
    ctx = (softmax(scores) @ v).transpose(1, 0, 2).reshape(n, width)
    y = x + ctx @ a["attn.out_proj.weight"].T + a["attn.out_proj.bias"]
    mean = y.mean(axis=1, keepdims=True)
    var = ((y - mean) ** 2).mean(axis=1, keepdims=True)
    return (y - mean) / np.sqrt(var + np.float32(1e-5)) * a["attn_norm.weight"] + a["attn_norm.bias"]


class NumpyLabeller:
    """``LineLabeller``'s eval-mode forward pass for one window, from its arrays.

    ``arrays`` holds the network's state dict as numpy arrays, except that a version-4
    network keeps ``sem.table`` (the pretrained piece table already mapped by ``sem``,
    [pieces, sem_dim]) and ``sem.bias`` in place of the table and the map.
    """

    def __init__(self, cfg: NetConfig, arrays: dict[str, np.ndarray]):
        self.cfg = cfg
        # the big lookup tables are stored in float16 and widened once here (about 10 ms each, the same
        # float32 values): widening only the rows a window gathers cost three times as much per window
        self.a = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in arrays.items()}

    def line_vectors(self, ngram_ids: np.ndarray, ngram_offsets: np.ndarray, piece_ids: np.ndarray | None = None,
                     piece_offsets: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """What each line contributes on its own: its n-gram vector and (version 4) its meaning vector.

        Both depend on the line's text only, so callers may keep them per line (``EncoderModel`` does).
        """
        a = self.a
        ngrams = _bag_mean(a["ngrams.weight"], ngram_ids, ngram_offsets)
        if not self.cfg.sem_dim:
            return ngrams, None
        return ngrams, _bag_mean(a["sem.table"], piece_ids, piece_offsets) + a["sem.bias"]

    def window_logits(self, ngrams: np.ndarray, cues: np.ndarray, sem: np.ndarray | None = None) -> np.ndarray:
        """Logits [n, classes] of one window from its lines' vectors (``line_vectors``) and cue matrix."""
        a, cfg = self.a, self.cfg
        parts = [ngrams, np.tanh(cues @ a["cues.0.weight"].T + a["cues.0.bias"])]
        if cfg.sem_dim:
            parts += [sem, _similarity(sem)]
        x = np.tanh(np.concatenate(parts, axis=1) @ a["proj.0.weight"].T + a["proj.0.bias"])
        for i in range(cfg.layers):
            x = _bigru(x, *(tuple(a[f"rnn.{d}.{i}.{p}_l0"] for p in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
                            for d in ("fwd", "bwd")))
        if cfg.attn_heads:
            x = _band_attention(x, a, cfg.attn_heads, cfg.attn_span)
        return x @ a["out.weight"].T + a["out.bias"]


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
