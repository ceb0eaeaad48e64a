"""Train the encoder split-point model from a built corpus, reproducibly on CPU.

Seeded, single-process, deterministic torch kernels, a fixed thread count:
the same corpus, seed and settings give the same weights. Each epoch draws
fresh augmented copies of the training documents and cuts them into
engine-like windows of a randomly chosen size. Each line's n-gram ids and text
cues are computed once and kept (augmentation only reorders lines, or strips
heading numbers, which makes a new text). After every epoch the model is
scored on the dev split and the best epoch is kept; then the decision
threshold (and the level-jump cap) is tuned on the dev split. The test split
is never read.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import logging
import random
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from hichunk.bench.metrics.splits import SplitCounts, count_line_points
from hichunk.models.encoder.model import DecodeConfig, EncoderConfig, EncoderModel, decode_levels, save_encoder
from hichunk.models.train.corpus.corpus import corpus_provenance, load_split
from hichunk.models.train.samples import (
    IGNORE,
    AugmentPolicy,
    LabelledDoc,
    Sample,
    augment,
    labelled,
    labelled_with_truth,
    windows,
)

log = logging.getLogger(__name__)

THRESHOLDS = tuple(round(0.2 + 0.05 * i, 2) for i in range(13))
MAX_JUMPS = (0, 1)
REL_WEIGHTS = (0.0, 0.5, 1.0, 2.0)


@dataclass
class TrainSettings:
    """What a training run does (stored in the model's config for provenance)."""

    epochs: int = 5
    seed: int = 0
    lr: float = 3e-3
    batch_lines: int = 4096  # padded lines per batch
    windows: tuple[int, ...] = (64, 128, 256)  # training window sizes (short windows: cheap GRU steps, many residual windows)
    window_lines: int = 1024  # the shipped model's window at inference
    labels: str | None = None  # labelled renderings and real documents (hichunk corpus render) to train on too
    kinds: tuple[str, ...] = ("text", "markdown", "pdf")  # which kinds of them
    max_docs: int | None = None  # cap on training documents (tiny runs)
    max_steps: int | None = None  # cap on optimiser steps (tiny runs)
    threads: int = 1  # more threads spin and slow small recurrent kernels down on 2 busy cores
    start_weight: float = 1.0  # loss weight of lines where a chunk starts (the rare class)
    rel_loss: float = 1.0  # weight of the level-change loss (networks with rel_classes)
    net: dict = field(default_factory=lambda: {"hidden": 64})  # NetConfig overrides
    policy: AugmentPolicy = field(default_factory=AugmentPolicy)


def _load_docs(corpus: str, split: str, limit: int | None, progress: bool, labels: str | None = None,
               kinds: tuple[str, ...] = ()) -> list[LabelledDoc]:
    """The corpus split, plus the labelled documents of that split (renderings keep their source's split).

    Markdown renderings that only copy a corpus document (``markdown:original``) are left out.
    """
    from tqdm import tqdm

    docs = []
    for cdoc in tqdm(load_split(corpus, split), desc=f"reading {split}", unit="doc", disable=not progress):
        docs.append(labelled(cdoc))
        if limit is not None and len(docs) >= limit:
            break
    if labels:
        from hichunk.errors import HichunkError
        from hichunk.models.train.corpus.render import load_labels
        from hichunk.models.train.corpus.truth import load_labelled

        items = [r for r in load_labels(labels) if r["split"] == split and r["kind"] in kinds
                 and not r["id"].startswith("markdown:original:")][:limit]
        for r in tqdm(items, desc=f"reading {split} renderings", unit="doc", disable=not progress):
            try:
                doc, truth = load_labelled(r, labels)
            except HichunkError as exc:
                log.warning("%s: %s; left out", r["id"], exc)
                continue
            docs.append(labelled_with_truth(doc, truth.at, r["id"], r["corpus"], r["lang"]))
    return [d for d in docs if d.texts]


class LineStore:
    """Each distinct line's n-gram ids and text cues, computed once per training run."""

    def __init__(self, buckets: int):
        self.buckets = buckets
        self.ids: dict[str, np.ndarray] = {}
        self.cues: dict[str, np.ndarray] = {}

    def add(self, texts: list[str]) -> None:
        from hichunk.models.encoder.features import hash_ngrams, text_cues

        missing = [t for t in dict.fromkeys(texts) if t not in self.ids]
        if not missing:
            return
        flat, offsets = hash_ngrams(missing, self.buckets)
        ends = [*offsets[1:], len(flat)]
        for t, a, b in zip(missing, offsets, ends):
            self.ids[t] = flat[a:b].astype(np.int32)
            self.cues[t] = np.asarray(text_cues.__wrapped__(t), dtype=np.float32)


def _batch_tensors(samples: list[Sample], store: LineStore, max_level: int, rel_classes: int):
    import torch

    from hichunk.models.encoder.features import window_cues
    from hichunk.models.encoder.model import rel_class

    texts = [t for s in samples for t in s.texts]
    store.add(texts)
    parts = [store.ids[t] for t in texts]
    lengths = np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts))
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    cues = [window_cues(s.texts, s.n_residual, s.layout, np.stack([store.cues[t] for t in s.texts])) for s in samples]
    labels = [min(lv, max_level) if lv != IGNORE else IGNORE for s in samples for lv in s.labels]
    changes = [rel_class(c, rel_classes) if c != IGNORE and rel_classes else IGNORE for s in samples for c in s.changes]
    return (torch.from_numpy(np.concatenate(parts).astype(np.int64)), torch.from_numpy(offsets),
            torch.from_numpy(np.concatenate(cues)), torch.tensor(labels), torch.tensor(changes),
            [len(s.texts) for s in samples])


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
    cfg = model.net.cfg
    probs = np.zeros((len(doc.texts), cfg.max_level + 1 + cfg.rel_classes), dtype=np.float32)
    for w in windows(doc, window):
        p = model.probabilities(w.texts, w.n_residual, w.layout)
        probs[w.first : w.first + len(w.texts) - w.n_residual] = p[w.n_residual :]
    return probs


def score_decoding(docs: list[LabelledDoc], probs: list[np.ndarray], cfg: DecodeConfig, max_level: int) -> SplitCounts:
    """Pooled split counts of decoded predictions."""
    total = SplitCounts()
    for doc, p in zip(docs, probs):
        points = [(s.line, s.level) for s in decode_levels(p, 0, cfg, max_level)]
        total = total + count_line_points(doc.levels, points)
    return total


def _objective(c: SplitCounts) -> float:
    """What dev tuning maximises: F1 without level + F1_L1 + F1_L2."""
    return c.f1() + c.f1(1) + c.f1(2)


def tune_decoding(docs: list[LabelledDoc], probs: list[np.ndarray], max_level: int,
                  rel_weights: tuple[float, ...] = (0.0,)) -> tuple[DecodeConfig, dict]:
    """Threshold, level-jump cap, level compaction and level-change weight that maximise ``_objective`` on ``docs``."""
    best, best_score, best_counts = DecodeConfig(), -1.0, SplitCounts()
    for rel, jump, compact, th in itertools.product(rel_weights, MAX_JUMPS, (False, True), THRESHOLDS):
        cfg = DecodeConfig(th, jump, compact, rel)
        c = score_decoding(docs, probs, cfg, max_level)
        score = _objective(c)
        if score > best_score + 1e-9:
            best, best_score, best_counts = cfg, score, c
    return best, {"f1": best_counts.f1(), "f1_l1": best_counts.f1(1), "f1_l2": best_counts.f1(2)}


def _rel_weights(net_cfg) -> tuple[float, ...]:
    return REL_WEIGHTS if net_cfg.rel_classes else (0.0,)


def _dev_score(net, docs: list[LabelledDoc], window: int) -> tuple[float, dict]:
    """The dev objective of the network as it is now, at its best threshold (a quick look, not the final tuning)."""
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    model = EncoderModel(EncoderConfig(window_lines=window, net=net.cfg.to_dict()), state)
    probs = [doc_probabilities(model, d, window) for d in docs]
    rel = 1.0 if net.cfg.rel_classes else 0.0
    best, scores = -1.0, {}
    for th in THRESHOLDS:
        c = score_decoding(docs, probs, DecodeConfig(th, 1, False, rel), net.cfg.max_level)
        if _objective(c) > best + 1e-9:
            best, scores = _objective(c), {"f1": c.f1(), "f1_l1": c.f1(1), "f1_l2": c.f1(2)}
    return best, scores


def train_encoder(corpus: str, out_dir: str, settings: TrainSettings, progress: bool = True) -> EncoderConfig:
    """Train, keep the best epoch on dev, tune decoding on dev, and save a model to ``out_dir``; returns its config."""
    import torch
    from tqdm import tqdm

    from hichunk.models.encoder.features import N_CUES
    from hichunk.models.encoder.net import LineLabeller, NetConfig

    t0 = time.time()
    torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)
    torch.use_deterministic_algorithms(True)
    train_docs = _load_docs(corpus, "train", settings.max_docs, progress, settings.labels, settings.kinds)
    dev_docs = _load_docs(corpus, "dev", settings.max_docs, progress, settings.labels, settings.kinds)
    net_cfg = NetConfig(**{**settings.net, "n_cues": N_CUES})
    net = LineLabeller(net_cfg)
    opt = torch.optim.Adam(net.parameters(), lr=settings.lr)
    weights = torch.ones(net_cfg.max_level + 1)
    weights[1:] = settings.start_weight
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights, ignore_index=IGNORE)
    rel_loss_fn = torch.nn.CrossEntropyLoss(ignore_index=IGNORE)
    head = net_cfg.max_level + 1
    rng = random.Random(settings.seed)
    plan = []
    for _ in range(settings.epochs):
        samples = [s for d in train_docs for s in windows(augment(d, rng, settings.policy), rng.choice(settings.windows))]
        plan.append(_batches(samples, settings.batch_lines, rng))
    total_steps = sum(len(p) for p in plan)
    if settings.max_steps is not None:
        total_steps = min(total_steps, settings.max_steps)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: max(0.05, 1.0 - step / max(total_steps, 1)))
    store = LineStore(net_cfg.buckets)
    step, best, history = 0, None, []
    bar = tqdm(total=total_steps, desc="training", unit="step", disable=not progress)
    for epoch, epoch_batches in enumerate(plan):
        net.train()
        for batch in epoch_batches:
            if step >= total_steps:
                break
            ids, offsets, cues, labels, changes, lengths = _batch_tensors(batch, store, net_cfg.max_level,
                                                                          net_cfg.rel_classes)
            logits = net(ids, offsets, cues, lengths)
            flat = torch.cat([logits[i, :n] for i, n in enumerate(lengths)])
            loss = loss_fn(flat[:, :head], labels)
            if net_cfg.rel_classes and bool((changes != IGNORE).any()):
                loss = loss + settings.rel_loss * rel_loss_fn(flat[:, head:], changes)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            bar.update()
            bar.set_postfix(loss=f"{loss.item():.4f}")
        net.eval()
        score, scores = _dev_score(net, dev_docs, settings.window_lines)
        history.append({"epoch": epoch + 1, "steps": step, "seconds": round(time.time() - t0, 1), **scores})
        log.info("epoch %d (%d steps, %.0f s): dev %s", epoch + 1, step, time.time() - t0, scores)
        if best is None or score > best[0] + 1e-9:
            best = (score, epoch + 1, {k: v.detach().clone() for k, v in net.state_dict().items()})
        if step >= total_steps:
            break
    bar.close()
    _, best_epoch, state = best
    config = EncoderConfig(window_lines=settings.window_lines, net=net_cfg.to_dict())
    model = EncoderModel(config, state)
    dev_probs = [doc_probabilities(model, d, settings.window_lines) for d in dev_docs]
    config.decode, dev_scores = tune_decoding(dev_docs, dev_probs, net_cfg.max_level, _rel_weights(net_cfg))
    config.info = _provenance(corpus, settings, len(train_docs), len(dev_docs), step, dev_scores, time.time() - t0)
    config.info.update(best_epoch=best_epoch, history=history)
    model.config = config
    save_encoder(out_dir, config, state)
    log.info("trained in %.0f s: dev %s (epoch %d), decode %s", time.time() - t0, dev_scores, best_epoch, config.decode)
    return config


def _provenance(corpus: str, settings: TrainSettings, n_train: int, n_dev: int, steps: int, dev: dict,
                seconds: float) -> dict:
    import torch

    settings_dict = asdict(settings)
    return {"data": corpus_provenance(corpus), "train_docs": n_train, "dev_docs": n_dev, "steps": steps, "dev": dev,
            "settings": settings_dict, "torch": torch.__version__, "seconds": round(seconds, 1),
            "date": _dt.date.today().isoformat()}
