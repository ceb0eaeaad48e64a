"""Generative split-point models: a causal LM reads the window text and writes the answer.

Two backends share prompt building, answer parsing and naming:

* ``HFCausalLM``: a Hugging Face causal LM from a local directory or hub id,
  run in-process with greedy decoding (CPU or CUDA, bf16 on GPUs that have it).
* ``CompletionsEndpoint``: any OpenAI-compatible ``/v1/completions`` server
  (vLLM, llama.cpp server, ...), with timeouts and retries.

The window text is wrapped in the model's chat template as a single user turn,
with thinking switched off the way Qwen3-family templates expect
(``enable_thinking=False`` gives an empty think block). A model name carries a
fingerprint of everything that changes the answer (instruction, answer length,
parse mode, template, weights on disk), so the prediction cache never mixes
settings.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence

from hichunk.errors import HichunkError
from hichunk.extras import require_extra
from hichunk.models.prompt import INSTRUCTION, build_prompt, parse_answer
from hichunk.protocol import ParseError, Prediction, Window
from hichunk.tokens import Tokenizer

log = logging.getLogger(__name__)

DEFAULT_WINDOW = 16384  # the released HiChunk model's inference window
DEFAULT_MAX_NEW_TOKENS = 4096
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


def qwen3_chat(prompt: str) -> str:
    """A single user turn in the Qwen3 chat format with thinking off (for servers fed raw prompts)."""
    return f"<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"


def template_chat(tokenizer) -> Callable[[str], str]:
    """A wrapper applying a Hugging Face tokenizer's own chat template (thinking off)."""

    def wrap(prompt: str) -> str:
        return tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                             add_generation_prompt=True, enable_thinking=False)

    return wrap


def hf_token_counter(tokenizer) -> Callable[[str], int]:
    """Token count without special tokens; straight through the Rust tokenizer when there is one (2x faster)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return lambda text: len(backend.encode(text, add_special_tokens=False).ids)
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def clean_answer(raw: str, truncated: bool) -> str:
    """The answer without a think block; when generation hit its length limit, without its cut-off last line.

    An answer cut off before its first line ended cannot be read at all (it is
    not "no starts"), so it raises ``ParseError``.
    """
    text = _THINK.sub("", raw)
    if truncated:
        cut = text.rfind("\n")
        if cut < 0 or not text[:cut].strip():
            raise ParseError("answer cut off at the length limit before its first line ended", raw=raw)
        text = text[:cut]
    return text


def _files_fingerprint(path: str) -> list:
    """Names, sizes and modification times of a local model directory's files (weights changed => new name)."""
    if not os.path.isdir(path):
        return []
    out = []
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if os.path.isfile(full):
            st = os.stat(full)
            out.append([name, st.st_size, int(st.st_mtime)])
    return out


class GenerativeModel:
    """Prompt, parse and naming shared by the backends; subclasses implement ``generate``."""

    def __init__(self, kind: str, model_id: str, window_tokens: int, max_new_tokens: int, instruction: str | None,
                 strict_empty: bool, wrap: Callable[[str], str] | None, fingerprint_extra: list | None = None):
        if max_new_tokens < 1:
            raise HichunkError(f"max new tokens must be positive (got {max_new_tokens})")
        self.window_tokens = window_tokens
        self.max_new_tokens = max_new_tokens
        self.instruction = INSTRUCTION if instruction is None else instruction
        self.strict_empty = strict_empty
        self.wrap = wrap or (lambda prompt: prompt)
        settings = [self.instruction, max_new_tokens, strict_empty, self.wrap("\x00"), fingerprint_extra or []]
        digest = hashlib.sha256(json.dumps(settings, ensure_ascii=False).encode()).hexdigest()[:12]
        self.name = f"{kind}:{model_id}#{digest}"
        self._overhead: int | None = None

    def count_tokens(self, text: str) -> int:
        raise NotImplementedError

    def generate(self, text: str) -> tuple[str, dict]:
        """The model's continuation of ``text`` and facts about it (``truncated`` when cut at the limit)."""
        raise NotImplementedError

    def overhead_tokens(self) -> int:
        if self._overhead is None:
            self._overhead = self.count_tokens(self.wrap(self.instruction))
        return self._overhead

    def predict(self, window: Window) -> Prediction:
        text = self.wrap(build_prompt(window.lines, self.instruction))
        raw, info = self.generate(text)
        answer = clean_answer(raw, bool(info.get("truncated")))
        return Prediction(parse_answer(answer, self.strict_empty), raw=raw, info=info)


class HFPrompt:
    """How a window becomes input ids for a Hugging Face causal LM; inference and fine-tuning share it.

    The window text (instruction and numbered lines) goes through the
    tokenizer's chat template as one user turn when it has one (and
    ``chat_template`` is on); the answer a model should give is the answer
    text followed by the tokenizer's end-of-sequence token, where generation stops.
    """

    def __init__(self, tokenizer, instruction: str | None = None, chat_template: bool = True):
        self.tokenizer = tokenizer
        self.instruction = INSTRUCTION if instruction is None else instruction
        self.templated = bool(chat_template and getattr(tokenizer, "chat_template", None))
        self.wrap = template_chat(tokenizer) if self.templated else None
        self.count_tokens = hf_token_counter(tokenizer)

    def ids(self, text: str) -> list[int]:
        """Input ids of a prompt (a chat template writes its own special tokens; a plain prompt gets the tokenizer's, e.g. BOS)."""
        return self.tokenizer(text, add_special_tokens=not self.templated)["input_ids"]

    def text(self, lines: Sequence[str]) -> str:
        """The full model input for a window's lines."""
        prompt = build_prompt(lines, self.instruction)
        return self.wrap(prompt) if self.wrap else prompt

    def overhead_tokens(self) -> int:
        """Tokens a window costs besides its numbered lines."""
        return len(self.ids(self.wrap(self.instruction) if self.wrap else self.instruction))

    def answer_ids(self, answer: str) -> list[int]:
        """What the model should generate for ``answer``: its tokens, then end of sequence."""
        eos = self.tokenizer.eos_token_id
        if eos is None:
            raise HichunkError("the tokenizer has no end-of-sequence token: a generated answer could not end")
        return self.tokenizer(answer, add_special_tokens=False)["input_ids"] + [eos]


class HFCausalLM(GenerativeModel):
    """A Hugging Face causal LM run in-process, greedy decoding; optionally with a LoRA adapter merged in."""

    def __init__(self, name_or_path: str, window_tokens: int | None = None, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
                 instruction: str | None = None, strict_empty: bool = False, device: str = "auto", dtype: str = "auto",
                 chat_template: bool = True, adapter: str | None = None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, self.device)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(name_or_path)
            # an adapter is merged into float32 weights, then the result is cast (less rounding than merging in bf16)
            self.model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=torch.float32 if adapter else torch_dtype)
        except (OSError, ValueError, KeyError) as exc:
            raise HichunkError(f"cannot load the causal LM {name_or_path!r}: {str(exc).splitlines()[0] if str(exc) else exc!r}") from None
        fingerprint = [str(torch_dtype), _files_fingerprint(name_or_path)]
        if adapter:
            self.model = merge_adapter(self.model, adapter).to(torch_dtype)
            fingerprint.append(adapter_digest(adapter))
        try:
            self.model.to(self.device).eval()
        except (RuntimeError, AssertionError, ValueError) as exc:
            raise HichunkError(f"cannot run the model on {self.device!r}: {str(exc).splitlines()[0]}") from None
        self.prompt = HFPrompt(self.tokenizer, instruction, chat_template)
        self.templated = self.prompt.templated
        limit = _context_limit(self.model.config)
        if window_tokens is None:
            window_tokens = DEFAULT_WINDOW if limit is None else min(DEFAULT_WINDOW, limit - max_new_tokens)
        if limit is not None and window_tokens + max_new_tokens > limit:
            log.warning("window %d + %d answer tokens exceed the model's context of %d tokens", window_tokens, max_new_tokens, limit)
        model_id = f"{name_or_path}+{adapter}" if adapter else name_or_path
        super().__init__("hf", model_id, window_tokens, max_new_tokens, instruction, strict_empty, self.prompt.wrap, fingerprint)

    def _ids(self, text: str) -> list[int]:
        return self.prompt.ids(text)

    def count_tokens(self, text: str) -> int:
        return self.prompt.count_tokens(text)

    def overhead_tokens(self) -> int:
        if self._overhead is None:
            self._overhead = self.prompt.overhead_tokens()
        return self._overhead

    def generate(self, text: str) -> tuple[str, dict]:
        import torch
        from transformers import GenerationConfig

        ids = torch.tensor([self._ids(text)], device=self.device)
        eos = self.tokenizer.eos_token_id
        config = GenerationConfig(max_new_tokens=self.max_new_tokens, do_sample=False, num_beams=1,
                                  eos_token_id=eos, pad_token_id=self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos)
        t0 = time.perf_counter()
        with torch.inference_mode():
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=config)
        new = out[0, ids.shape[1] :].tolist()
        ended = bool(new) and eos is not None and new[-1] in (eos if isinstance(eos, list) else [eos])
        info = {"prompt_tokens": ids.shape[1], "new_tokens": len(new), "generate_seconds": time.perf_counter() - t0,
                "truncated": len(new) >= self.max_new_tokens and not ended}
        return self.tokenizer.decode(new, skip_special_tokens=True), info


def merge_adapter(model, adapter: str):
    """``model`` with the LoRA adapter in folder ``adapter`` merged into its weights (needs ``peft``)."""
    require_extra("gen", "peft", what="a LoRA adapter model")
    from peft import PeftModel

    try:
        return PeftModel.from_pretrained(model, adapter).merge_and_unload()
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise HichunkError(f"cannot load the LoRA adapter {adapter!r}: {str(exc).splitlines()[0] if str(exc) else exc!r}") from None


def adapter_digest(adapter: str) -> str:
    """A content hash of an adapter folder's files (the same weights give the same model name on any checkout)."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(adapter)):
        full = os.path.join(adapter, name)
        if os.path.isfile(full) and not name.endswith(".md"):
            digest.update(name.encode())
            with open(full, "rb") as fh:
                digest.update(fh.read())
    return digest.hexdigest()[:16]


def resolve_device(device: str) -> str:
    """``auto``: CUDA when available, else CPU."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def fast_cpu_bf16() -> bool:
    """Whether this CPU runs bfloat16 matrix products natively (AVX-512 or AMX through oneDNN)."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def resolve_dtype(dtype: str, device: str):
    """A torch dtype from its name; ``auto``: bf16 on GPUs that have it, else fp16 on GPU, fp32 on CPU."""
    import torch

    if dtype == "auto":
        if device.startswith("cuda"):
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    try:
        return {"bf16": torch.bfloat16, "bfloat16": torch.bfloat16, "fp16": torch.float16, "float16": torch.float16,
                "fp32": torch.float32, "float32": torch.float32}[dtype]
    except KeyError:
        raise HichunkError(f"unknown dtype {dtype!r} (choose from auto, bf16, fp16, fp32)") from None


def _context_limit(config) -> int | None:
    for attr in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


class CompletionsEndpoint(GenerativeModel):
    """An OpenAI-compatible ``/v1/completions`` server; windows are measured with a local tokenizer."""

    def __init__(self, url: str, model_name: str, tokenizer: Tokenizer, window_tokens: int | None = None,
                 max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, instruction: str | None = None, strict_empty: bool = False,
                 wrap: Callable[[str], str] | None = qwen3_chat, timeout: float = 600.0, retries: int = 3, backoff: float = 1.0,
                 api_key: str | None = None):
        self.url = completions_url(url)
        self.model_name = model_name
        self.tokenizer = tokenizer
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.api_key = api_key
        super().__init__("endpoint", f"{self.url}|{model_name}", window_tokens or DEFAULT_WINDOW, max_new_tokens,
                         instruction, strict_empty, wrap, [tokenizer.name])

    def count_tokens(self, text: str) -> int:
        return self.tokenizer.count(text)

    def generate(self, text: str) -> tuple[str, dict]:
        payload = {"model": self.model_name, "prompt": text, "max_tokens": self.max_new_tokens,
                   "temperature": 0, "top_p": 1, "n": 1, "seed": 0}
        t0 = time.perf_counter()
        data = self._post(payload)
        try:
            choice = data["choices"][0]
            answer = choice["text"]
            if not isinstance(answer, str):
                raise TypeError
        except (KeyError, IndexError, TypeError):
            raise HichunkError(f"completions server at {self.url} gave an answer without choices[0].text") from None
        usage = data.get("usage") or {}
        info = {"prompt_tokens": usage.get("prompt_tokens"), "new_tokens": usage.get("completion_tokens"),
                "generate_seconds": time.perf_counter() - t0, "truncated": choice.get("finish_reason") == "length"}
        return answer, info

    def _post(self, payload: dict) -> dict:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    raw = response.read()
            except urllib.error.HTTPError as exc:
                detail = _short(exc.read())
                if exc.code < 500 and exc.code != 429:  # the request itself is wrong: retrying cannot help
                    raise HichunkError(f"completions server at {self.url} refused the request: HTTP {exc.code} {detail}") from None
                problem = f"HTTP {exc.code} {detail}"
            except urllib.error.URLError as exc:
                reason = exc.reason
                problem = "connection refused (is the server running?)" if isinstance(reason, ConnectionRefusedError) else f"cannot connect ({reason})"
            except TimeoutError:
                problem = f"no answer within {self.timeout:g} s"
            except (ConnectionError, http.client.HTTPException) as exc:
                problem = f"connection failed ({exc.__class__.__name__}: {exc})"
            else:
                try:
                    return json.loads(raw)
                except ValueError:
                    raise HichunkError(f"completions server at {self.url} answered something that is not JSON: {_short(raw)}") from None
            log.warning("completions request %d of %d failed: %s", attempt + 1, self.retries + 1, problem)
        raise HichunkError(f"completions server at {self.url} failed after {self.retries + 1} attempts: {problem}")


def completions_url(url: str) -> str:
    """The completions URL from a server address (``http://host:port``, ``.../v1`` or the full URL)."""
    if not re.match(r"^https?://", url):
        raise HichunkError(f"endpoint must be an http(s) URL (got {url!r})")
    url = url.rstrip("/")
    if url.endswith("/completions"):
        return url
    return url + ("/completions" if url.endswith("/v1") else "/v1/completions")


def _short(data: bytes, limit: int = 200) -> str:
    text = data.decode("utf-8", "replace").strip().replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "..."
