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


def _bag_mean(table: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Mean of ``table`` rows per bag (bags given flat with start offsets; none is empty)."""
    sums = np.add.reduceat(np.take(table, ids, axis=0).astype(np.float32, copy=False), offsets, axis=0)
    counts = np.diff(np.append(offsets, len(ids))).astype(np.float32)
    return sums / counts[:, None]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _gru(x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray) -> np.ndarray:
    """One direction of a one-layer GRU over ``x`` [n, in] (torch's gate order: reset, update, new)."""
    n, size = x.shape[0], w_hh.shape[1]
    gi = x @ w_ih.T + b_ih
    w_hh_t = np.ascontiguousarray(w_hh.T)
    h = np.zeros(size, dtype=np.float32)
    out = np.empty((n, size), dtype=np.float32)
    for t in range(n):
        gh = h @ w_hh_t + b_hh
        r = _sigmoid(gi[t, :size] + gh[:size])
        z = _sigmoid(gi[t, size : 2 * size] + gh[size : 2 * size])
        cand = np.tanh(gi[t, 2 * size :] + r * gh[2 * size :])
        h = (1.0 - z) * cand + z * h
        out[t] = h
    return out


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


_TABLES = ("ngrams.weight", "sem.table")


class NumpyLabeller:
    """``LineLabeller``'s eval-mode forward pass for one window, from its arrays.

    ``arrays`` holds the network's state dict as numpy arrays, except that a version-4
    network keeps ``sem.table`` (the pretrained piece table already mapped by ``sem``,
    [pieces, sem_dim]) and ``sem.bias`` in place of the table and the map.
    """

    def __init__(self, cfg: NetConfig, arrays: dict[str, np.ndarray]):
        self.cfg = cfg
        # the big lookup tables keep their stored dtype (float16 on disk): only the rows a window
        # gathers are widened, which gives the same float32 values without converting megabytes at load
        self.a = {k: np.ascontiguousarray(v, dtype=None if k in _TABLES else np.float32) for k, v in arrays.items()}

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
            f = _gru(x, a[f"rnn.fwd.{i}.weight_ih_l0"], a[f"rnn.fwd.{i}.weight_hh_l0"], a[f"rnn.fwd.{i}.bias_ih_l0"],
                     a[f"rnn.fwd.{i}.bias_hh_l0"])
            b = _gru(x[::-1], a[f"rnn.bwd.{i}.weight_ih_l0"], a[f"rnn.bwd.{i}.weight_hh_l0"],
                     a[f"rnn.bwd.{i}.bias_ih_l0"], a[f"rnn.bwd.{i}.bias_hh_l0"])[::-1]
            x = np.concatenate([f, b], axis=1)
        return x @ a["out.weight"].T + a["out.bias"]


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
