"""``EncoderModel``: the offline default split-point model (a SplitPointModel).

It labels every line of a window as "no chunk starts here" or "a chunk of
level k starts here", from hashed character n-grams, layout cues and (version 4)
pretrained multilingual subword embeddings read by a small BiGRU (see
``features``, ``features_v4``, ``pieces`` and ``net``). A window's size is
counted in lines, one "token" per line. Weights live in a folder with
``config.json`` (network shape and decoding settings) and ``weights.safetensors``
(or, for models written before version 4, ``weights.pt``); ``load_encoder()``
with no argument loads the copy that ships inside this package, never anything
from the network. Inference runs in numpy (``numpy_net``): torch is needed only
to train, or to read an old ``weights.pt``.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hichunk.errors import HichunkError
from hichunk.protocol import ChunkStart, LineLayout, Prediction, Window

SHIPPED_DIR = os.path.join(os.path.dirname(__file__), "weights")
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "weights.safetensors"
LEGACY_WEIGHTS_FILE = "weights.pt"  # models written before version 4 (read through torch)
LINE_CACHE = 1 << 16  # lines whose own vectors a loaded model keeps


@dataclass
class DecodeConfig:
    """How per-line probabilities become chunk starts (tuned on the dev split, stored with the weights)."""

    threshold: float = 0.5  # a line starts a chunk when P(start) >= threshold
    max_jump: int = 0  # > 0: a start may be at most this many levels deeper than the previous start
    compact: bool = False  # close gaps between the levels used in a window ({1, 3, 4} -> {1, 2, 3})
    rel_weight: float = 0.0  # weight of the level-change scores against the absolute level scores

@dataclass
class EncoderConfig:
    """Everything ``config.json`` holds."""

    name: str = "hichunk-encoder"
    window_lines: int = 1024
    net: dict = field(default_factory=dict)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    info: dict = field(default_factory=dict)  # provenance: data, versions, metrics, date
    outline: dict = field(default_factory=dict)  # the outline head's shape (``OutlineHeadConfig``; its further
    # members, levels averaged, under "members"), when it has one

    def to_json(self) -> str:
        data = {"name": self.name, "window_lines": self.window_lines, "net": self.net,
                "decode": self.decode.__dict__, "info": self.info}
        if self.outline:
            data["outline"] = self.outline
        return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> EncoderConfig:
        data = json.loads(text)
        return cls(data["name"], int(data["window_lines"]), dict(data["net"]), DecodeConfig(**data.get("decode", {})),
                   dict(data.get("info", {})), dict(data.get("outline", {})))


def count_lines(text: str) -> int:
    """Lines in ``text``: the encoder's unit of window size."""
    return len(text.splitlines())


def _compact(levels: list[int]) -> dict[int, int]:
    """Level map that closes gaps above the shallowest level used: {1, 3, 4} -> {1: 1, 3: 2, 4: 3}."""
    used = sorted(set(levels))
    out: dict[int, int] = {}
    for i, lv in enumerate(used):
        out[lv] = lv if i == 0 else out[used[i - 1]] + 1
    return out


REL_MIN = -3  # level change classes: -3 or shallower, -2, -1, 0, +1, ... (the last class takes larger steps too)


def rel_class(change: int, n_classes: int) -> int:
    """Class index of a level change from the previous start (clipped into the ``n_classes`` classes)."""
    return min(max(change - REL_MIN, 0), n_classes - 1)


def best_levels(level_probs: np.ndarray, rel_probs: np.ndarray | None, cfg: DecodeConfig) -> list[int]:
    """The most likely levels of a sequence of chunk starts (Viterbi over levels).

    ``level_probs`` [k, max_level]: each start's level distribution; ``rel_probs``
    [k, rel_classes] (optional): its level change from the previous start. A
    sequence scores the sum of log level probabilities plus ``rel_weight``
    times the log change probabilities, and may go at most ``max_jump`` levels
    deeper from one start to the next (when ``max_jump`` > 0).
    """
    k, n_levels = level_probs.shape
    if k == 0:
        return []
    log_abs = np.log(np.maximum(level_probs, 1e-9))
    levels = np.arange(1, n_levels + 1)
    change = levels[None, :] - levels[:, None]  # [previous, current]
    allowed = change <= cfg.max_jump if cfg.max_jump > 0 else np.ones_like(change, dtype=bool)
    use_rel = rel_probs is not None and cfg.rel_weight > 0
    if use_rel:
        classes = np.clip(change - REL_MIN, 0, rel_probs.shape[1] - 1)
        log_rel = np.log(np.maximum(rel_probs, 1e-9))
    score = log_abs[0]
    back = np.zeros((k, n_levels), dtype=np.int64)
    for t in range(1, k):
        trans = np.where(allowed, 0.0, -np.inf)
        if use_rel:
            trans = trans + cfg.rel_weight * log_rel[t][classes]
        total = score[:, None] + trans
        back[t] = total.argmax(axis=0)
        score = total.max(axis=0) + log_abs[t]
    path = [int(score.argmax())]
    for t in range(k - 1, 0, -1):
        path.append(int(back[t, path[-1]]))
    return [lv + 1 for lv in reversed(path)]


def decode_levels(probs: np.ndarray, n_residual: int, cfg: DecodeConfig, max_level: int) -> list[ChunkStart]:
    """Chunk starts on the window's new lines from per-line probabilities [n, 1 + max_level (+ rel_classes)].

    A line starts a chunk when P(start) reaches the threshold; the levels of
    all starts are then chosen together (``best_levels``). Residual lines take
    part in the decoding (their starts give the level context) but only
    starts on new lines are returned.
    """
    n_levels = max_level
    p_start = 1.0 - probs[:, 0]
    lines = np.flatnonzero(p_start >= cfg.threshold)
    level_probs = probs[lines, 1 : 1 + n_levels]
    level_probs = level_probs / np.maximum(level_probs.sum(axis=1, keepdims=True), 1e-9)
    rel = probs[lines, 1 + n_levels :] if probs.shape[1] > 1 + n_levels else None
    levels = best_levels(level_probs, rel, cfg)
    remap = _compact(levels) if cfg.compact else {}
    return [ChunkStart(i, remap.get(lv, lv), True) for i, lv in zip(lines.tolist(), levels) if i >= n_residual]


def network_arrays(state: dict) -> dict[str, np.ndarray]:
    """A state dict (torch tensors or arrays) as the arrays inference reads.

    A version-4 network's frozen pretrained piece table and its linear map become one
    table already mapped (``sem.table`` = table @ map.T, float16), since the mean of
    mapped rows is the map of the mean: inference never loads the pretrained table.
    """
    arrays = {k: (v.detach().cpu().float().numpy() if hasattr(v, "detach") else np.asarray(v)) for k, v in state.items()}
    if "pieces.weight" in arrays:
        table, weight = arrays.pop("pieces.weight"), arrays.pop("sem.weight")
        arrays["sem.table"] = (table @ weight.T).astype(np.float16)
    if "ngrams.weight" in arrays:
        arrays["ngrams.weight"] = arrays["ngrams.weight"].astype(np.float16, copy=False)
    return arrays


class EncoderModel:
    """Offline split-point model: hashed n-grams + cues (+ pretrained pieces) + BiGRU, run on CPU in numpy."""

    def __init__(self, config: EncoderConfig, state: dict):
        from hichunk.models.encoder.net_config import NetConfig
        from hichunk.models.encoder.numpy_net import NumpyLabeller

        self.config = config
        self.name = config.name
        self.window_tokens = config.window_lines
        self.net_cfg = NetConfig(**config.net)
        arrays = network_arrays(state)
        self.outline = None
        if config.outline:
            from hichunk.models.encoder.outline_head import load_outline_head

            self.outline = load_outline_head(config.outline, arrays)
        self.net = NumpyLabeller(self.net_cfg, arrays)
        self._cache: OrderedDict[str, tuple[np.ndarray, np.ndarray | None]] = OrderedDict()
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return count_lines(text)

    def overhead_tokens(self) -> int:
        return 0

    def _line_vectors(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
        """Each line's own vectors, from the cache when the line was seen before (residual lines, restarted
        windows, repeated lines): a line's vectors depend on its text alone."""
        with self._lock:  # a served model answers several requests at once
            return self._cached_vectors(texts)

    def _cached_vectors(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray | None]:
        from hichunk.models.encoder.features import hash_ngrams

        cache = self._cache
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        fresh: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        if missing:
            ids, offsets = hash_ngrams(missing, self.net_cfg.buckets)
            pieces = piece_offsets = None
            if self.net_cfg.sem_dim:
                from hichunk.models.encoder.pieces import piece_bags

                pieces, piece_offsets = piece_bags(missing)
            ngrams, sem = self.net.line_vectors(ids, offsets, pieces, piece_offsets)
            fresh = {t: (ngrams[i], None if sem is None else sem[i]) for i, t in enumerate(missing)}
        rows = [fresh[t] if t in fresh else cache[t] for t in texts]
        for t in texts:
            if t in fresh:
                cache[t] = fresh[t]
            cache.move_to_end(t)
        while len(cache) > LINE_CACHE:
            cache.popitem(last=False)
        # one concatenate of the rows, not np.stack (which reshapes every row first): the same array
        sem = np.concatenate([r[1] for r in rows]).reshape(len(rows), -1) if self.net_cfg.sem_dim else None
        return np.concatenate([r[0] for r in rows]).reshape(len(rows), -1), sem

    def probabilities(self, lines: Sequence[str], n_residual: int = 0, layout: Sequence[LineLayout] = ()) -> np.ndarray:
        """Per-line probabilities [n_lines, 1 + max_level + rel_classes].

        Column 0: no chunk starts here; then each level; then (when the network
        has them) each level change from the previous start, a distribution of its own.
        """
        from hichunk.models.encoder.numpy_net import softmax

        cfg = self.net_cfg
        if not lines:
            return np.zeros((0, cfg.max_level + 1 + cfg.rel_classes), dtype=np.float32)
        if cfg.features >= 4:
            from hichunk.models.encoder.features_v4 import normalise_line, window_cues4

            texts = [normalise_line(t) for t in lines]
            cues = window_cues4(texts, n_residual, layout)
        else:
            from hichunk.models.encoder.features import window_cues

            texts = [t.strip() for t in lines]
            cues = window_cues(texts, n_residual, layout)
        ngrams, sem = self._line_vectors(texts)
        from hichunk.cores import one_blas_thread

        with one_blas_thread():  # the recurrent loop is thousands of tiny products (hichunk.cores says why)
            logits = self.net.window_logits(ngrams, np.ascontiguousarray(cues[:, : cfg.n_cues]), sem)
        head = cfg.max_level + 1
        parts = [softmax(logits[:, :head])] + ([softmax(logits[:, head:])] if cfg.rel_classes else [])
        return np.concatenate(parts, axis=1).astype(np.float32)

    def outline_levels(self, points: dict[int, tuple[int, bool]], texts: Sequence[str],
                       layout: Sequence[LineLayout] | None) -> dict[int, tuple[int, bool]]:
        """The levels of a whole document's titled starts as the outline head reads them (unchanged without one)."""
        if self.outline is None:
            return points
        return self.outline.levels(points, texts, layout, self._line_vectors)

    def predict(self, window: Window) -> Prediction:
        probs = self.probabilities(window.lines, window.n_residual, window.layout)
        return Prediction(decode_levels(probs, window.n_residual, self.config.decode, self.net_cfg.max_level))


def save_encoder(directory: str, config: EncoderConfig, state: dict) -> None:
    """Write ``config.json`` and ``weights.safetensors`` (n-gram and piece tables in float16 to keep it small)."""
    from safetensors.numpy import save

    os.makedirs(directory, exist_ok=True)
    arrays = {k: np.ascontiguousarray(v) for k, v in network_arrays(state).items()}
    with open(os.path.join(directory, WEIGHTS_FILE), "wb") as fh:  # plain open: the file gets the user's umask
        fh.write(save(arrays))
    with open(os.path.join(directory, CONFIG_FILE), "w", encoding="utf-8") as fh:
        fh.write(config.to_json())


def weights_path(directory: str) -> str | None:
    """The weight file of an encoder folder (``weights.safetensors``, else a legacy ``weights.pt``), or None."""
    for name in (WEIGHTS_FILE, LEGACY_WEIGHTS_FILE):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    return None


def _read_weights(path: str) -> dict:
    if path.endswith(".safetensors"):
        from safetensors.numpy import load_file

        return load_file(path)
    try:
        import torch
    except ImportError:
        raise HichunkError(f"{path}: a model written before version 4 needs torch to load (pip install torch)") from None
    return torch.load(path, map_location="cpu", weights_only=True)


def load_encoder(directory: str | None = None) -> EncoderModel:
    """The encoder model in ``directory`` (default: the weights shipped with hichunk)."""
    directory = directory or SHIPPED_DIR
    cfg_path, w_path = os.path.join(directory, CONFIG_FILE), weights_path(directory)
    if not (os.path.isfile(cfg_path) and w_path):
        raise HichunkError(f"{directory}: no encoder model here (needs {CONFIG_FILE} and {WEIGHTS_FILE})")
    try:
        with open(cfg_path, encoding="utf-8") as fh:
            config = EncoderConfig.from_json(fh.read())
        return EncoderModel(config, _read_weights(w_path))
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise HichunkError(f"{directory}: cannot load the encoder model ({exc})") from None
