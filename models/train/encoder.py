"""Train the encoder split-point model from a built corpus, reproducibly on CPU.

Seeded, single-process, deterministic torch kernels, a fixed thread count:
the same corpus, seed and settings give the same weights. Each epoch draws
fresh augmented copies of the training documents and cuts them into
engine-like windows of a randomly chosen size. After training, the decision
threshold (and whether to cap level jumps) is tuned on the dev split only.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import logging
import random
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from hicbench.data.corpus import corpus_provenance, load_split
from hicbench.metrics.splits import SplitCounts, count_line_points
from models.encoder.model import DecodeConfig, EncoderConfig, EncoderModel, decode_levels, save_encoder
from models.train.samples import IGNORE, AugmentPolicy, LabelledDoc, Sample, augment, labelled, windows

log = logging.getLogger(__name__)

THRESHOLDS = tuple(round(0.2 + 0.05 * i, 2) for i in range(13))
MAX_JUMPS = (0, 1)


@dataclass
class TrainSettings:
    """What a training run does (stored in the model's config for provenance)."""

    epochs: int = 5
    seed: int = 0
    lr: float = 3e-3
    batch_lines: int = 4096  # padded lines per batch
    windows: tuple[int, ...] = (64, 128, 256)  # training window sizes (short windows: cheap GRU steps, many residual windows)
    window_lines: int = 1024  # the shipped model's window at inference
    max_docs: int | None = None  # cap on training documents (tiny runs)
    max_steps: int | None = None  # cap on optimiser steps (tiny runs)
    threads: int = 1  # more threads spin and slow small recurrent kernels down on 2 busy cores
    net: dict = field(default_factory=lambda: {"hidden": 64})  # NetConfig overrides
    policy: AugmentPolicy = field(default_factory=AugmentPolicy)


def _load_docs(corpus: str, split: str, limit: int | None, progress: bool) -> list[LabelledDoc]:
    from tqdm import tqdm

    docs = []
    for cdoc in tqdm(load_split(corpus, split), desc=f"reading {split}", unit="doc", disable=not progress):
        docs.append(labelled(cdoc))
        if limit is not None and len(docs) >= limit:
            break
    return [d for d in docs if d.texts]


def _batch_tensors(samples: list[Sample], buckets: int, max_level: int):
    import torch

    from models.encoder.features import featurize

    ids, offsets, cues, labels, lengths = [], [], [], [], []
    base = 0
    for s in samples:
        f = featurize(list(s.texts), s.n_residual, buckets)
        ids.append(f.ngram_ids)
        offsets.append(f.ngram_offsets + base)
        base += len(f.ngram_ids)
        cues.append(f.cues)
        labels.extend(min(lv, max_level) if lv != IGNORE else IGNORE for lv in s.labels)
        lengths.append(len(s.texts))
    return (torch.from_numpy(np.concatenate(ids)), torch.from_numpy(np.concatenate(offsets)),
            torch.from_numpy(np.concatenate(cues)), torch.tensor(labels), lengths)


def _batches(samples: list[Sample], budget: int, rng: random.Random) -> list[list[Sample]]:
    """Batches of similar-length windows (little padding) up to ``budget`` padded lines, in random order."""
    out, cur = [], []
    for s in sorted(samples, key=lambda s: len(s.texts)):
        if cur and len(s.texts) * (len(cur) + 1) > budget:
            out.append(cur)
            cur = []
        cur.append(s)
    if cur:
        out.append(cur)
    rng.shuffle(out)
    return out


def doc_probabilities(model: EncoderModel, doc: LabelledDoc, window: int) -> np.ndarray:
    """Per-line probabilities of a document, window by window as the engine would run it."""
    probs = np.zeros((len(doc.texts), model.net.cfg.max_level + 1), dtype=np.float32)
    for w in windows(doc, window):
        p = model.probabilities(list(w.texts), w.n_residual)
        probs[w.first : w.first + len(w.texts) - w.n_residual] = p[w.n_residual :]
    return probs


def score_decoding(docs: list[LabelledDoc], probs: list[np.ndarray], cfg: DecodeConfig) -> SplitCounts:
    """Pooled split counts of decoded predictions."""
    total = SplitCounts()
    for doc, p in zip(docs, probs):
        points = [(s.line, s.level) for s in decode_levels(p, 0, cfg)]
        total = total + count_line_points(doc.levels, points)
    return total


def tune_decoding(docs: list[LabelledDoc], probs: list[np.ndarray]) -> tuple[DecodeConfig, dict]:
    """Threshold, level-jump cap and level compaction that maximise F1 (no level) + F1_L1 + F1_L2 on ``docs``."""
    best, best_score, best_counts = DecodeConfig(), -1.0, SplitCounts()
    for jump, compact, th in itertools.product(MAX_JUMPS, (False, True), THRESHOLDS):
        cfg = DecodeConfig(th, jump, compact)
        c = score_decoding(docs, probs, cfg)
        score = c.f1() + c.f1(1) + c.f1(2)
        if score > best_score + 1e-9:
            best, best_score, best_counts = cfg, score, c
    return best, {"f1": best_counts.f1(), "f1_l1": best_counts.f1(1), "f1_l2": best_counts.f1(2)}


def train_encoder(corpus: str, out_dir: str, settings: TrainSettings, progress: bool = True) -> EncoderConfig:
    """Train, tune on dev, and save a model to ``out_dir``; returns its config."""
    import torch
    from tqdm import tqdm

    from models.encoder.features import N_CUES
    from models.encoder.net import LineLabeller, NetConfig

    t0 = time.time()
    torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)
    torch.use_deterministic_algorithms(True)
    train_docs = _load_docs(corpus, "train", settings.max_docs, progress)
    dev_docs = _load_docs(corpus, "dev", settings.max_docs, progress)
    net_cfg = NetConfig(**{**settings.net, "n_cues": N_CUES})
    net = LineLabeller(net_cfg)
    opt = torch.optim.Adam(net.parameters(), lr=settings.lr)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=IGNORE)
    rng = random.Random(settings.seed)
    plan = []
    for _ in range(settings.epochs):
        samples = [s for d in train_docs for s in windows(augment(d, rng, settings.policy), rng.choice(settings.windows))]
        plan.append(_batches(samples, settings.batch_lines, rng))
    total_steps = sum(len(p) for p in plan)
    if settings.max_steps is not None:
        total_steps = min(total_steps, settings.max_steps)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: max(0.05, 1.0 - step / max(total_steps, 1)))
    step = 0
    bar = tqdm(total=total_steps, desc="training", unit="step", disable=not progress)
    net.train()
    for epoch_batches in plan:
        for batch in epoch_batches:
            if step >= total_steps:
                break
            ids, offsets, cues, labels, lengths = _batch_tensors(batch, net_cfg.buckets, net_cfg.max_level)
            logits = net(ids, offsets, cues, lengths)
            flat = torch.cat([logits[i, :n] for i, n in enumerate(lengths)])
            loss = loss_fn(flat, labels)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            bar.update()
            bar.set_postfix(loss=f"{loss.item():.4f}")
    bar.close()
    net.eval()
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    config = EncoderConfig(window_lines=settings.window_lines, net=net_cfg.to_dict())
    model = EncoderModel(config, state)
    dev_probs = [doc_probabilities(model, d, settings.window_lines) for d in dev_docs]
    config.decode, dev_scores = tune_decoding(dev_docs, dev_probs)
    config.info = _provenance(corpus, settings, len(train_docs), len(dev_docs), step, dev_scores, time.time() - t0)
    model.config = config
    save_encoder(out_dir, config, state)
    log.info("trained in %.0f s: dev %s, decode %s", time.time() - t0, dev_scores, config.decode)
    return config


def _provenance(corpus: str, settings: TrainSettings, n_train: int, n_dev: int, steps: int, dev: dict,
                seconds: float) -> dict:
    import torch

    settings_dict = asdict(settings)
    return {"data": corpus_provenance(corpus), "train_docs": n_train, "dev_docs": n_dev, "steps": steps, "dev": dev,
            "settings": settings_dict, "torch": torch.__version__, "seconds": round(seconds, 1),
            "date": _dt.date.today().isoformat()}
