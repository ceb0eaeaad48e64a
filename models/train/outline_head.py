"""Train the outline head of an encoder model (``hichunk.models.encoder.outline_head``), seeded, on CPU.

The head learns levels from the true headings of the training documents, read as the
line model will hand them over at inference: each document is augmented as the line
model's training augments it (sections shuffled and cut, numbers stripped, a preamble,
layout hidden), a tenth of its headings are dropped (the line model misses some) and
title-shaped body lines are added as false headings without a level to learn (it also
starts some chunks that are no sections; those learn to sit one level below the heading they
follow, inside its section, which they must not end). The line model's own n-gram and meaning
tables give each heading its vectors, frozen: the head is trained for one line model
and stored beside its weights. The best epoch on the dev split is kept; the
confidence threshold above which the head's level replaces the window's is chosen on
the dev split too, against the levels the line model gives the same headings. The
test split is never read.
"""

from __future__ import annotations

import logging
import random
import re
import time
from dataclasses import dataclass

import numpy as np

from hichunk.engine.outline import title_shaped
from hichunk.models.encoder.model import (
    CONFIG_FILE,
    EncoderConfig,
    EncoderModel,
    _read_weights,
    decode_levels,
    load_encoder,
    save_encoder,
    weights_path,
)
from hichunk.models.encoder.outline_head import (
    MEMBER_PREFIX,
    N_FEATURES,
    N_MEANING,
    PREFIX,
    OutlineHead,
    OutlineHeadConfig,
    heading_vectors,
    meaning_features,
    outline_features,
    sentence_vectors,
)
from hichunk.models.train.samples import IGNORE, AugmentPolicy, LabelledDoc, augment

log = logging.getLogger(__name__)

THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01)  # 1.01: never replace the window's level


@dataclass
class OutlineTraining:
    """What an outline head's training run does (stored with the head for provenance)."""

    epochs: int = 10
    seed: int = 0
    lr: float = 3e-3
    batch_docs: int = 16
    hidden: int = 64
    layers: int = 2
    drop_heading: float = 0.1  # share of true headings hidden (missed by the line model)
    false_heading: float = 0.1  # false headings added, per true heading (title-shaped body lines)
    vectors: bool = True  # read the headings' n-gram and meaning vectors too (their similarities are read always)
    meaning: bool = False  # read how alike the headings' sentence-encoder vectors are (``meaning_features``)
    join: bool = False  # add the head beside the model's head(s), levels averaged, instead of replacing them


_SENTENCES: dict[str, np.ndarray] = {}  # sentence vectors of the headings read so far, by text


@dataclass
class HeadingSequence:
    """One document's headings: the head's input features and each one's target (level - 1, or ``IGNORE``)."""

    x: np.ndarray  # [k, features]
    y: np.ndarray  # [k]


def _heading_sequence(doc: LabelledDoc, model: EncoderModel, rng: random.Random | None,
                      settings: OutlineTraining) -> HeadingSequence | None:
    """A document's headings (noised when ``rng`` is given) as the head's input and targets."""
    heads = [i for i, lv in enumerate(doc.levels) if lv > 0]
    layouts = doc.layout or None
    if rng is not None:
        kept = [u for u in heads if rng.random() >= settings.drop_heading]
        heads = kept if len(kept) >= 2 else heads
        body = [i for i, lv in enumerate(doc.levels)
                if not lv and title_shaped(doc.texts[i], layouts[i] if layouts else None)]
        extra = min(len(body), int(len(heads) * settings.false_heading + rng.random()))
        heads = sorted(heads + rng.sample(body, extra))
    if len(heads) < 2:
        return None
    x = outline_features(heads, doc.texts, layouts, *heading_vectors(model._line_vectors, doc.texts, heads),
                         vectors=settings.vectors)
    if settings.meaning:
        x = np.concatenate([x, meaning_features(sentence_vectors(doc.texts, heads, _SENTENCES))], axis=1)
    cap, y, current = model.net_cfg.max_level, [], None
    for u in heads:  # a false heading nests under the section it stands in: it must not end that section
        if doc.levels[u]:
            current = min(doc.levels[u], cap)
        y.append(current - 1 if doc.levels[u] else min(current + 1, cap) - 1 if current else IGNORE)
    return HeadingSequence(x, np.array(y, dtype=np.int64))


def _net(n_in: int, settings: OutlineTraining, max_level: int):
    import torch
    from torch import nn

    from hichunk.models.encoder.net import BiGRU

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(n_in, settings.hidden)
            self.rnn = BiGRU(settings.hidden, settings.layers, 0.1)
            self.out = nn.Linear(2 * settings.hidden, max_level)

        def forward(self, x: torch.Tensor, lengths: list[int]) -> torch.Tensor:
            return self.out(self.rnn(torch.tanh(self.proj(x)), lengths))

    return Head()


def _batch(seqs: list[HeadingSequence]):
    import torch

    n = max(len(s.y) for s in seqs)
    x = torch.zeros(len(seqs), n, seqs[0].x.shape[1])
    y = torch.full((len(seqs), n), IGNORE, dtype=torch.long)
    for b, s in enumerate(seqs):
        x[b, : len(s.y)] = torch.from_numpy(s.x)
        y[b, : len(s.y)] = torch.from_numpy(s.y)
    return x, y, [len(s.y) for s in seqs]


def _window_levels(model: EncoderModel, doc: LabelledDoc) -> np.ndarray:
    """The level the line model alone gives each true heading of ``doc`` (0 where it starts nothing there)."""
    from hichunk.models.train.encoder import doc_probabilities

    probs = doc_probabilities(model, doc, model.config.window_lines)
    levels = np.zeros(len(doc.texts), dtype=np.int64)
    for s in decode_levels(probs, 0, model.config.decode, model.net_cfg.max_level):
        levels[s.line] = s.level
    return levels[[i for i, lv in enumerate(doc.levels) if lv > 0]]


def _choose_threshold(head: OutlineHead, dev: list[HeadingSequence], window_levels: list[np.ndarray]) -> tuple[float, dict]:
    """The threshold at which head and windows together get most dev heading levels right."""
    probs = [head.probabilities(s.x) for s in dev]
    scores = {}
    for th in THRESHOLDS:
        right = total = 0
        for s, p, w in zip(dev, probs, window_levels):
            found = w > 0
            level = np.where(p.max(axis=1) >= th, p.argmax(axis=1) + 1, w)
            right += int(((level == s.y + 1) & found).sum())
            total += int(found.sum())
        scores[th] = right / max(total, 1)
    best = max(THRESHOLDS, key=lambda th: (scores[th], -th))
    return best, {str(k): round(v, 4) for k, v in scores.items()}


def fit_outline_head(model_dir: str, train_docs: list[LabelledDoc], dev_docs: list[LabelledDoc],
                     settings: OutlineTraining | None = None, progress: bool = True) -> OutlineHeadConfig:
    """Train an outline head for the encoder model in ``model_dir`` and store it there (weights and config)."""
    import torch
    from tqdm import tqdm

    settings = settings or OutlineTraining()
    t0 = time.time()
    torch.set_num_threads(1)
    torch.manual_seed(settings.seed)
    torch.use_deterministic_algorithms(True)
    model = load_encoder(model_dir)
    model.outline = None  # the head is trained anew over the line model alone
    rng = random.Random(settings.seed)
    policy = AugmentPolicy()
    dev = [s for d in dev_docs if (s := _heading_sequence(d, model, None, settings)) is not None]
    dev_docs = [d for d in dev_docs if sum(1 for lv in d.levels if lv) >= 2]
    n_in = (N_FEATURES + (model.net_cfg.embed_dim + model.net_cfg.sem_dim if settings.vectors else 0)
            + (N_MEANING if settings.meaning else 0))
    net = _net(n_in, settings, model.net_cfg.max_level)
    opt = torch.optim.Adam(net.parameters(), lr=settings.lr)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=IGNORE)
    cfg = OutlineHeadConfig(n_features=n_in, hidden=settings.hidden, layers=settings.layers,
                            max_level=model.net_cfg.max_level, vectors=settings.vectors, meaning=settings.meaning)
    best, history = None, []
    for epoch in range(settings.epochs):
        seqs = [s for d in tqdm(train_docs, desc=f"outline head, epoch {epoch + 1}", unit="doc", disable=not progress)
                if (s := _heading_sequence(augment(d, rng, policy), model, rng, settings)) is not None]
        rng.shuffle(seqs)
        net.train()
        for i in range(0, len(seqs), settings.batch_docs):
            x, y, lengths = _batch(seqs[i : i + settings.batch_docs])
            logits = net(x, lengths)
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
        net.eval()
        head = OutlineHead(cfg, {k: v.detach().numpy() for k, v in net.state_dict().items()})
        right = sum(int((head.probabilities(s.x).argmax(axis=1) == s.y).sum()) for s in dev)
        accuracy = right / max(sum(len(s.y) for s in dev), 1)
        history.append({"epoch": epoch + 1, "dev_accuracy": round(accuracy, 4), "seconds": round(time.time() - t0, 1)})
        log.info("outline head epoch %d: dev level accuracy %.4f", epoch + 1, accuracy)
        if best is None or accuracy > best[0] + 1e-9:
            best = (accuracy, epoch + 1, {k: v.detach().clone().numpy() for k, v in net.state_dict().items()})
    _, best_epoch, state = best
    window_levels = [_window_levels(model, d) for d in dev_docs]
    threshold, by_threshold = _choose_threshold(OutlineHead(cfg, state), dev, window_levels)
    cfg = OutlineHeadConfig(**{**cfg.to_dict(), "threshold": threshold})
    _store(model_dir, cfg, state, {"epochs": settings.epochs, "best_epoch": best_epoch, "history": history,
                                   "dev_accuracy_by_threshold": by_threshold, "train_docs": len(train_docs),
                                   "dev_docs": len(dev_docs), "settings": settings.__dict__,
                                   "seconds": round(time.time() - t0, 1)}, settings.join)
    log.info("outline head for %s: threshold %.2f, dev %s", model_dir, threshold, by_threshold)
    return cfg


def recipe_heads(recipe: str, seed: int = 0) -> list[OutlineTraining]:
    """The outline heads a recipe trains, in order: v6 one head; v7 also one without the vectors, joined; v8 also
    one without and one with the vectors of the next seed, joined (four heads, levels averaged: each swings some
    unseen families' whole outlines a level, and not the same ones); v9 as v7, its second head also reading how
    alike the headings' sentence-encoder vectors are."""
    steps = [OutlineTraining(seed=seed)]
    if recipe == "v9":
        steps.append(OutlineTraining(seed=seed, vectors=False, meaning=True, join=True))
    if recipe in ("v7", "v8"):
        steps.append(OutlineTraining(seed=seed, vectors=False, join=True))
    if recipe == "v8":
        steps += [OutlineTraining(seed=seed + 1, vectors=False, join=True), OutlineTraining(seed=seed + 1, join=True)]
    return steps


_HEAD_ARRAYS = re.compile(r"^outline\d*\.")  # a model's outline head and its members


def _store(model_dir: str, cfg: OutlineHeadConfig, state: dict[str, np.ndarray], info: dict, join: bool) -> None:
    """Write the head into the model: in place of its outline head(s), or with ``join`` as one more member
    (the average of the members then replaces a window's level where any member alone would have: the
    lowest of their thresholds)."""
    import os

    with open(os.path.join(model_dir, CONFIG_FILE), encoding="utf-8") as fh:
        config = EncoderConfig.from_json(fh.read())
    arrays = _read_weights(weights_path(model_dir))
    if join and config.outline:
        spec = dict(config.outline)
        members = [*spec.get("members", ()), cfg.to_dict()]
        prefix = MEMBER_PREFIX.format(len(members))
        config.outline = {**spec, "members": members, "threshold": min(spec["threshold"], cfg.threshold)}
        config.info["outline_members"] = [*config.info.get("outline_members", ()), info]
    else:
        arrays = {k: v for k, v in arrays.items() if not _HEAD_ARRAYS.match(k)}
        prefix = PREFIX
        config.outline = cfg.to_dict()
        config.info["outline"] = info
        config.info.pop("outline_members", None)
    arrays.update({prefix + k: v.astype(np.float32) for k, v in state.items()})
    save_encoder(model_dir, config, arrays)


def train_outline_heads(corpus: str, out_dir: str, settings, outline: OutlineTraining | None = None,
                        only: tuple[int, ...] = (), progress: bool = True) -> list[OutlineHeadConfig]:
    """An outline head for the encoder model in ``out_dir``, or for each trained fold model (those in ``only``,
    when given) when ``out_dir`` holds leave-family-out folds (each head then never reads its fold's
    families, like its line model).

    ``settings`` (``hichunk.models.train.encoder.TrainSettings``) says which documents to read."""
    from hichunk.extras import require_extra
    from hichunk.models.train.encoder import _without, load_training_docs
    from hichunk.models.train.folds import fold_dir, is_fold_dir, load_plan, trained_folds

    require_extra("train", what="training an outline head")
    if is_fold_dir(out_dir):
        plan = load_plan(out_dir)
        train_docs, dev_docs = load_training_docs(corpus, settings, progress)
        configs = []
        for index in sorted(trained_folds(out_dir) & set(only or range(plan.k))):
            held = set(plan.held_out(index))
            log.info("outline head of fold %d: leaving out %s", index, ", ".join(sorted(held)))
            configs.append(fit_outline_head(fold_dir(out_dir, index), _without(train_docs, held),
                                            _without(dev_docs, held), outline, progress))
        return configs
    if weights_path(out_dir) is None:
        from hichunk.errors import HichunkError

        raise HichunkError(f"{out_dir}: no encoder model to add an outline head to (train one first)")
    train_docs, dev_docs = load_training_docs(corpus, settings, progress)
    return [fit_outline_head(out_dir, train_docs, dev_docs, outline, progress)]
