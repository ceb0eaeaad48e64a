"""The sequence labeller: line vectors -> BiGRU over the window -> level per line.

A line vector is the mean of its hashed n-gram embeddings joined with a
projection of its cues. A bidirectional GRU reads the whole window, so a line
is judged with its neighbours (a short line followed by a long paragraph, the
numbering of the previous heading...). With ``attn_heads``, one self-attention
layer over the GRU's outputs (a band of ``attn_span`` lines each side) lets a line
compare itself with distant lines directly: a heading's level is mostly that of
its siblings, which can sit dozens of lines away. The output per line is a distribution
over ``0`` (no chunk starts here) and levels ``1..max_level``, and, with
``rel_classes``, a second one over the level change from the previous chunk
start (``hichunk.models.encoder.model.rel_class``):
"a sibling", "a child", "back up one" are local judgements, easier to learn
than an absolute depth, and the decoder combines both.
"""

from __future__ import annotations

import torch
from torch import nn

from hichunk.models.encoder.net_config import SIM_SPAN, NetConfig

__all__ = ["BiGRU", "LineLabeller", "NetConfig", "attention_mask", "neighbour_similarity", "reverse_index"]


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


def neighbour_similarity(sem: torch.Tensor, lengths: list[int]) -> torch.Tensor:
    """[batch, len, 2]: cosine of each line's meaning vector with the mean of the next / previous
    ``SIM_SPAN`` lines of its window (0 where there are none)."""
    b, t, _ = sem.shape
    mask = (torch.arange(t).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)).to(sem.dtype).unsqueeze(-1)
    x = sem * mask
    out = []
    for sign in (1, -1):
        total, count = torch.zeros_like(x), torch.zeros_like(mask)
        for k in range(1, SIM_SPAN + 1):
            if k >= t:
                break
            if sign > 0:
                total[:, :-k] += x[:, k:]
                count[:, :-k] += mask[:, k:]
            else:
                total[:, k:] += x[:, :-k]
                count[:, k:] += mask[:, :-k]
        mean = total / count.clamp(min=1.0)
        cos = (x * mean).sum(-1) / (x.norm(dim=-1) * mean.norm(dim=-1) + 1e-6)
        out.append(cos * (count.squeeze(-1) > 0))
    return torch.stack(out, dim=-1)


def attention_mask(lengths: list[int], max_len: int, span: int) -> torch.Tensor:
    """[batch, max_len, max_len] additive mask: 0 where line j is within ``span`` lines of line i
    and inside its window, -inf elsewhere (a padded query row still sees itself, so no row is empty)."""
    pos = torch.arange(max_len)
    band = (pos.unsqueeze(0) - pos.unsqueeze(1)).abs() <= span
    valid = pos.unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)  # [batch, key]
    allowed = band.unsqueeze(0) & valid.unsqueeze(1)
    allowed = allowed | torch.eye(max_len, dtype=torch.bool).unsqueeze(0)
    return torch.zeros(allowed.shape).masked_fill(~allowed, float("-inf"))


class LineLabeller(nn.Module):
    """Hashed-n-gram + cue (+ pretrained-piece) line encoder and a BiGRU tagger."""

    def __init__(self, cfg: NetConfig):
        super().__init__()
        self.cfg = cfg
        self.ngrams = nn.EmbeddingBag(cfg.buckets, cfg.embed_dim, mode="mean")
        self.cues = nn.Sequential(nn.Linear(cfg.n_cues, cfg.cue_dim), nn.Tanh())
        width = cfg.embed_dim + cfg.cue_dim
        if cfg.sem_dim:
            self.pieces = nn.EmbeddingBag(cfg.piece_vocab, cfg.piece_dim, mode="mean")
            self.pieces.weight.requires_grad_(False)  # the pretrained table stays as it is
            self.sem = nn.Linear(cfg.piece_dim, cfg.sem_dim)
            width += cfg.sem_dim + 2
        self.proj = nn.Sequential(nn.Linear(width, cfg.hidden), nn.Tanh(), nn.Dropout(cfg.dropout))
        self.rnn = BiGRU(cfg.hidden, cfg.layers, cfg.dropout)
        if cfg.attn_heads:
            self.attn = nn.MultiheadAttention(2 * cfg.hidden, cfg.attn_heads, dropout=cfg.dropout, batch_first=True)
            self.attn_norm = nn.LayerNorm(2 * cfg.hidden)
        self.out = nn.Linear(2 * cfg.hidden, cfg.max_level + 1 + cfg.rel_classes)

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor, cues: torch.Tensor, lengths: list[int],
                piece_ids: torch.Tensor | None = None, piece_offsets: torch.Tensor | None = None) -> torch.Tensor:
        """Logits [batch, max_len, max_level + 1 + rel_classes] for windows whose lines are given flat, one after another.

        The first ``max_level + 1`` columns score "no start" and each level, the rest each level change.
        """
        ng = self.ngrams(ids, offsets)
        if self.training and self.cfg.ngram_drop > 0:
            ng = ng * (torch.rand(ng.shape[0], 1) >= self.cfg.ngram_drop).to(ng.dtype)
        parts = [ng, self.cues(cues)]
        if self.cfg.sem_dim:
            parts.append(self.sem(self.pieces(piece_ids, piece_offsets)))
        padded = nn.utils.rnn.pad_sequence(list(torch.split(torch.cat(parts, dim=-1), lengths)), batch_first=True)
        if self.cfg.sem_dim:
            sem = padded[..., -self.cfg.sem_dim :]
            padded = torch.cat([padded, neighbour_similarity(sem, lengths)], dim=-1)
        x = self.rnn(self.proj(padded), lengths)
        if self.cfg.attn_heads:
            mask = attention_mask(lengths, x.shape[1], self.cfg.attn_span)
            mask = mask.repeat_interleave(self.cfg.attn_heads, dim=0)
            x = self.attn_norm(x + self.attn(x, x, x, attn_mask=mask, need_weights=False)[0])
        return self.out(x)
