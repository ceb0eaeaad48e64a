"""Named split-point models: a name maps to a loader, imported on use.

``load_model(spec)`` accepts a registered name, an encoder folder written by
``hichunk train``, a LoRA adapter folder written
by ``hichunk sft train`` (``hichunk.models.adapter``), a local Hugging Face model
directory or a hub id (a causal LM, run with ``HFCausalLM``). ``spec=None``
means the default model, ``DEFAULT_MODEL`` (the shipped offline encoder). A
model registers with one line in ``MODELS``: ``"name": "package.module:loader"``,
where ``loader(settings)`` returns a ``SplitPointModel``.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import threading
from dataclasses import dataclass

from hichunk.errors import HichunkError
from hichunk.protocol import SplitPointModel
from hichunk.tokens import Tokenizer

# name -> "module:function(settings) -> SplitPointModel"
MODELS: dict[str, str] = {
    "encoder": "hichunk.models.registry:shipped_encoder",
    "hichunk-gen": "hichunk.models.adapter:shipped_generative",
    "rules": "hichunk.models.rules:HeadingRules",  # hand-written baselines
    "numbering": "hichunk.models.rules:NumberingRegex",
    "fontsize": "hichunk.models.rules:FontSizeHeuristic",
}
DEFAULT_MODEL = "encoder"


@dataclass(frozen=True)
class ModelSettings:
    """What a user may set about a model; each loader uses the fields that apply to it."""

    window_tokens: int | None = None  # None: the model's own default
    max_new_tokens: int | None = None  # generative models: answer length limit (None: the model's own, else 4096)
    instruction: str | None = None  # generative models: None = our instruction (hichunk.models.prompt.INSTRUCTION)
    strict_empty: bool = False  # generative models: an empty answer is a parse error (reference behaviour)
    chat_template: bool = True  # generative models: wrap the window text in a chat template
    device: str = "auto"
    dtype: str = "auto"


_shipped: list = []  # the shipped encoder, loaded once per process
_shipped_lock = threading.Lock()


def shipped_encoder(settings: ModelSettings):
    """The offline default: the encoder model whose weights ship with hichunk.

    Loaded once per process and shared by every chunker (it holds no state between calls), so
    chunkers with different options are cheap views over one model, not one model each.
    """
    from hichunk.models.encoder.model import SHIPPED_DIR

    with _shipped_lock:
        if not _shipped:
            _shipped.append(encoder_model(SHIPPED_DIR))
        return _shipped[0]


def is_encoder_dir(path: str) -> bool:
    """A folder written by ``hichunk train`` (encoder config + weights)."""
    from hichunk.models.encoder.model import CONFIG_FILE, weights_path

    return os.path.isfile(os.path.join(path, CONFIG_FILE)) and weights_path(path) is not None


def encoder_model(directory: str):
    """The encoder model in ``directory``, its name fingerprinted by the weight files.

    So cached predictions of other weights are never reused.
    """
    from hichunk.models.encoder.model import CONFIG_FILE, load_encoder, weights_path

    model = load_encoder(directory)
    digest = hashlib.sha256()
    for path in (os.path.join(directory, CONFIG_FILE), weights_path(directory)):
        with open(path, "rb") as fh:
            digest.update(fh.read())
    model.name = f"{model.name}#{digest.hexdigest()[:12]}"
    return model


def load_model(spec: str | None = None, settings: ModelSettings | None = None) -> SplitPointModel:
    """A registered model by name, or a Hugging Face causal LM by directory or hub id (None: the default)."""
    settings = settings or ModelSettings()
    if spec is None:
        if DEFAULT_MODEL not in MODELS:
            raise HichunkError("no default split-point model is installed yet: give --model (a Hugging Face causal LM "
                               "directory or hub id) or --endpoint (an OpenAI-compatible completions server)")
        spec = DEFAULT_MODEL
    if spec in MODELS and not os.path.exists(spec):
        module, func = MODELS[spec].split(":")
        return getattr(importlib.import_module(module), func)(settings)
    from hichunk.models.adapter import is_adapter_dir, load_adapter_model
    from hichunk.models.generative import DEFAULT_MAX_NEW_TOKENS, HFCausalLM

    if is_adapter_dir(spec):
        return load_adapter_model(spec, settings)
    if os.path.isdir(spec) and is_encoder_dir(spec):
        return encoder_model(spec)
    return HFCausalLM(spec, settings.window_tokens, settings.max_new_tokens or DEFAULT_MAX_NEW_TOKENS, settings.instruction,
                      settings.strict_empty, settings.device, settings.dtype, settings.chat_template)


def load_endpoint(url: str, model_name: str, tokenizer: Tokenizer, settings: ModelSettings | None = None,
                  template_from: str | None = None, retries: int = 3) -> SplitPointModel:
    """A model behind an OpenAI-compatible completions server.

    Windows are measured with ``tokenizer``. A completions server takes raw
    text, so the chat template is applied here: the one of the Hugging Face
    tokenizer directory ``template_from`` when it has one, else the Qwen3 chat
    format (the family of the released model), or none when settings say so.
    A failed request is retried ``retries`` times with growing pauses; the
    environment variable ``HICHUNK_API_KEY``, when set, is sent as a bearer token.
    """
    from hichunk.models.generative import DEFAULT_MAX_NEW_TOKENS, CompletionsEndpoint, qwen3_chat, template_chat

    settings = settings or ModelSettings()
    wrap = qwen3_chat if settings.chat_template else None
    if template_from and settings.chat_template:
        from transformers import AutoTokenizer

        try:
            hf = AutoTokenizer.from_pretrained(template_from)
        except (OSError, ValueError) as exc:
            raise HichunkError(f"cannot load the tokenizer {template_from!r}: {str(exc).splitlines()[0]}") from None
        if getattr(hf, "chat_template", None):
            wrap = template_chat(hf)
    return CompletionsEndpoint(url, model_name, tokenizer, settings.window_tokens, settings.max_new_tokens or DEFAULT_MAX_NEW_TOKENS,
                               settings.instruction, settings.strict_empty, wrap, retries=retries,
                               api_key=os.environ.get("HICHUNK_API_KEY"))
