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
    p.add_argument("--out", required=True, metavar="DIR", help="where to write config.json and weights.pt")
    p.add_argument("--epochs", type=int, help="passes over the training documents (default: the shipped recipe)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0, as shipped)")
    p.add_argument("--max-docs", type=int, help="use only the first N documents of each split (quick runs)")
    p.add_argument("--max-steps", type=int, help="stop after N optimiser steps (quick runs)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train the encoder split-point model",
                       description="Train the offline encoder split-point model on a built corpus, seeded and "
                       "deterministic, then tune its decision threshold on the dev split.")
    add_train_arguments(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json
    import logging

    from hichunk.models.train.encoder import TrainSettings, train_encoder

    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(message)s")
    settings = TrainSettings(seed=args.seed, max_docs=args.max_docs, max_steps=args.max_steps, labels=args.labels,
                             kinds=tuple(k for k in args.kinds.split(",") if k))
    if args.epochs is not None:
        settings.epochs = args.epochs
    config = train_encoder(args.corpus, args.out, settings, progress=not args.quiet)
    print(json.dumps({"out": args.out, "decode": config.decode.__dict__, "dev": config.info["dev"],
                      "seconds": config.info["seconds"]}))
    return 0
