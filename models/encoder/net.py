"""The sequence labeller: line vectors -> BiGRU over the window -> level per line.

A line vector is the mean of its hashed n-gram embeddings joined with a
projection of its cues. A bidirectional GRU reads the whole window, so a line
is judged with its neighbours (a short line followed by a long paragraph, the
numbering of the previous heading...). The output per line is a distribution
over ``0`` (no chunk starts here) and levels ``1..max_level``, and, with
``rel_classes``, a second one over the level change from the previous chunk
start (``hichunk.models.encoder.model.rel_class``):
"a sibling", "a child", "back up one" are local judgements, easier to learn
than an absolute depth, and the decoder combines both.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn


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

    def to_dict(self) -> dict:
        return asdict(self)


def reverse_index(lengths: list[int], max_len: int) -> torch.Tensor:
    """Gather index [batch, max_len] that reverses each sequence inside its length (padding stays put)."""
    idx = torch.arange(max_len).repeat(len(lengths), 1)
    for b, n in enumerate(lengths):
        idx[b, :n] = torch.arange(n - 1, -1, -1)
    return idx


class BiGRU(nn.Module):
    """Bidirectional GRU over right-padded batches without packing.

    The forward pass is unaffected by padding at the end; the backward pass
    runs on each sequence reversed inside its own length, so padding never
    leaks into real positions. Plain padded GRU calls are several times faster
    than packed ones on CPU.
    """

    def __init__(self, size: int, layers: int, dropout: float):
        super().__init__()
        self.fwd = nn.ModuleList(nn.GRU(size if i == 0 else 2 * size, size, batch_first=True) for i in range(layers))
        self.bwd = nn.ModuleList(nn.GRU(size if i == 0 else 2 * size, size, batch_first=True) for i in range(layers))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, lengths: list[int]) -> torch.Tensor:
        rev = reverse_index(lengths, x.shape[1]).unsqueeze(-1)
        for i, (f, b) in enumerate(zip(self.fwd, self.bwd)):
            if i:
                x = self.drop(x)
            xr = x.gather(1, rev.expand(-1, -1, x.shape[2]))
            yb = b(xr)[0]
            x = torch.cat([f(x)[0], yb.gather(1, rev.expand(-1, -1, yb.shape[2]))], dim=-1)
        return x


class LineLabeller(nn.Module):
    """Hashed-n-gram + cue line encoder and a BiGRU tagger."""

    def __init__(self, cfg: NetConfig):
        super().__init__()
        self.cfg = cfg
        self.ngrams = nn.EmbeddingBag(cfg.buckets, cfg.embed_dim, mode="mean")
        self.cues = nn.Sequential(nn.Linear(cfg.n_cues, cfg.cue_dim), nn.Tanh())
        self.proj = nn.Sequential(nn.Linear(cfg.embed_dim + cfg.cue_dim, cfg.hidden), nn.Tanh(), nn.Dropout(cfg.dropout))
        self.rnn = BiGRU(cfg.hidden, cfg.layers, cfg.dropout)
        self.out = nn.Linear(2 * cfg.hidden, cfg.max_level + 1 + cfg.rel_classes)

    def line_vectors(self, ids: torch.Tensor, offsets: torch.Tensor, cues: torch.Tensor) -> torch.Tensor:
        """[n_lines, hidden] vectors for a flat batch of lines."""
        return self.proj(torch.cat([self.ngrams(ids, offsets), self.cues(cues)], dim=-1))

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor, cues: torch.Tensor, lengths: list[int]) -> torch.Tensor:
        """Logits [batch, max_len, max_level + 1 + rel_classes] for windows whose lines are given flat, one after another.

        The first ``max_level + 1`` columns score "no start" and each level, the rest each level change.
        """
        vecs = self.line_vectors(ids, offsets, cues)
        padded = nn.utils.rnn.pad_sequence(list(torch.split(vecs, lengths)), batch_first=True)
        return self.out(self.rnn(padded, lengths))
