"""The encoder network's shape (stored with the weights), readable without importing torch."""

from __future__ import annotations

from dataclasses import asdict, dataclass

SIM_SPAN = 3  # lines on each side whose mean meaning a line is compared with


@dataclass(frozen=True)
class NetConfig:
    """Shape of the network (stored with the weights)."""

    buckets: int = 1 << 17
    embed_dim: int = 32
    n_cues: int = 0
    cue_dim: int = 32
    hidden: int = 128
    layers: int = 2
    max_level: int = 6
    dropout: float = 0.1
    rel_classes: int = 0  # > 0: also predict the level change from the previous start
    features: int = 3  # feature set (3: hichunk.models.encoder.features; 4: .features_v4)
    piece_vocab: int = 0  # > 0: a bag of pretrained subword pieces per line (version 4)
    piece_dim: int = 512  # width of the pretrained piece table
    sem_dim: int = 0  # the pieces' mean mapped to this many dims (0: no pieces)
    ngram_drop: float = 0.0  # training only: share of lines whose n-gram vector is hidden (leans on cues and meaning)
    attn_heads: int = 0  # > 0: self-attention over the BiGRU's outputs (a line compares itself with distant lines)
    attn_span: int = 128  # attention reaches this many lines on each side (windows at inference are longer than in training)

    def to_dict(self) -> dict:
        return asdict(self)
