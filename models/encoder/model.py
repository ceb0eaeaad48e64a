"""``EncoderModel``: the offline default split-point model (a SplitPointModel).

It labels every line of a window as "no chunk starts here" or "a chunk of
level k starts here", from hashed character n-grams and layout cues read by a
small BiGRU (see ``features`` and ``net``). It needs no tokenizer: a window's
size is counted in lines, one "token" per line. Weights live in a folder with
``config.json`` (network shape and decoding settings) and ``weights.pt``
(a plain state dict); ``load_encoder()`` with no argument loads the copy that
ships inside this package, never anything from the network.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

from hichunk.errors import HichunkError
from models.protocol import ChunkStart, Prediction, Window

SHIPPED_DIR = os.path.join(os.path.dirname(__file__), "weights")
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "weights.pt"


@dataclass
class DecodeConfig:
    """How per-line probabilities become chunk starts (tuned on the dev split, stored with the weights)."""

    threshold: float = 0.5  # a line starts a chunk when P(start) >= threshold
    max_jump: int = 0  # > 0: a start may be at most this many levels deeper than the previous start
    compact: bool = False  # close gaps between the levels used in a window ({1, 3, 4} -> {1, 2, 3})


@dataclass
class EncoderConfig:
    """Everything ``config.json`` holds."""

    name: str = "hichunk-encoder"
    window_lines: int = 1024
    net: dict = field(default_factory=dict)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    info: dict = field(default_factory=dict)  # provenance: data, versions, metrics, date

    def to_json(self) -> str:
        data = {"name": self.name, "window_lines": self.window_lines, "net": self.net,
                "decode": self.decode.__dict__, "info": self.info}
        return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "EncoderConfig":
        data = json.loads(text)
        return cls(data["name"], int(data["window_lines"]), dict(data["net"]), DecodeConfig(**data.get("decode", {})),
                   dict(data.get("info", {})))


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


def decode_levels(probs: np.ndarray, n_residual: int, cfg: DecodeConfig) -> list[ChunkStart]:
    """Chunk starts on the window's new lines from per-line level probabilities [n, 1 + max_level].

    Residual lines take part in the decoding (their starts give the level
    context) but only starts on new lines are returned.
    """
    p_start = 1.0 - probs[:, 0]
    best = probs[:, 1:].argmax(axis=1) + 1
    lines, levels = [], []
    prev = 0
    for i in np.flatnonzero(p_start >= cfg.threshold):
        level = int(best[i])
        if cfg.max_jump > 0 and prev > 0:
            level = min(level, prev + cfg.max_jump)
        prev = level
        lines.append(int(i))
        levels.append(level)
    remap = _compact(levels) if cfg.compact else {}
    return [ChunkStart(i, remap.get(lv, lv), True) for i, lv in zip(lines, levels) if i >= n_residual]


class EncoderModel:
    """Offline split-point model: hashed n-grams + cues + BiGRU, run on CPU with torch."""

    def __init__(self, config: EncoderConfig, state: dict):
        import torch

        from models.encoder.net import LineLabeller, NetConfig

        self.config = config
        self.name = config.name
        self.window_tokens = config.window_lines
        self.net = LineLabeller(NetConfig(**config.net))
        self.net.load_state_dict({k: v.float() for k, v in state.items()})
        self.net.eval()
        self._torch = torch

    def count_tokens(self, text: str) -> int:
        return count_lines(text)

    def overhead_tokens(self) -> int:
        return 0

    def probabilities(self, lines: list[str], n_residual: int = 0) -> np.ndarray:
        """Per-line probabilities [n_lines, 1 + max_level] (column 0: no chunk starts here)."""
        from models.encoder.features import featurize

        if not lines:
            return np.zeros((0, self.net.cfg.max_level + 1), dtype=np.float32)
        torch = self._torch
        feats = featurize(list(lines), n_residual, self.net.cfg.buckets)
        with torch.inference_mode():
            logits = self.net(torch.from_numpy(feats.ngram_ids), torch.from_numpy(feats.ngram_offsets),
                              torch.from_numpy(feats.cues), [len(lines)])[0]
            return torch.softmax(logits, dim=-1).numpy()

    def predict(self, window: Window) -> Prediction:
        probs = self.probabilities(list(window.lines), window.n_residual)
        return Prediction(decode_levels(probs, window.n_residual, self.config.decode))


def save_encoder(directory: str, config: EncoderConfig, state: dict) -> None:
    """Write ``config.json`` and ``weights.pt`` (the n-gram table in float16 to keep the folder small)."""
    import torch

    os.makedirs(directory, exist_ok=True)
    small = {k: (v.half() if k.startswith("ngrams.") else v).contiguous() for k, v in state.items()}
    torch.save(small, os.path.join(directory, WEIGHTS_FILE))
    with open(os.path.join(directory, CONFIG_FILE), "w", encoding="utf-8") as fh:
        fh.write(config.to_json())


def load_encoder(directory: str | None = None) -> EncoderModel:
    """The encoder model in ``directory`` (default: the weights shipped with hichunk)."""
    import torch

    directory = directory or SHIPPED_DIR
    cfg_path, w_path = os.path.join(directory, CONFIG_FILE), os.path.join(directory, WEIGHTS_FILE)
    if not (os.path.isfile(cfg_path) and os.path.isfile(w_path)):
        raise HichunkError(f"{directory}: no encoder model here (needs {CONFIG_FILE} and {WEIGHTS_FILE})")
    try:
        with open(cfg_path, encoding="utf-8") as fh:
            config = EncoderConfig.from_json(fh.read())
        state = torch.load(w_path, map_location="cpu", weights_only=True)
        return EncoderModel(config, state)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise HichunkError(f"{directory}: cannot load the encoder model ({exc})") from None
