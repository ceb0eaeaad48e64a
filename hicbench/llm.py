"""A minimal client for OpenAI-compatible endpoints (vLLM, llama.cpp server, ...).

Used for the optional parts of the benchmark: answer generation, Fact-Cov
judging and LLM-written questions. Both ``/v1/completions`` (a raw prompt) and
``/v1/chat/completions`` (one user message) are supported. Only the standard
library is used; every failure becomes a one-line ``HichunkError``.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from hichunk.errors import HichunkError

log = logging.getLogger(__name__)
APIS = ("chat", "completions")


@dataclass
class Endpoint:
    """Where and how to ask: base URL (``http://host:port`` or ``.../v1``), model name, API flavour."""

    base_url: str
    model: str
    api: str = "chat"
    api_key: str | None = None
    timeout: float = 300.0
    retries: int = 2
    backoff: float = 1.0  # seconds before the first retry, doubled each time (at most 10)

    def __post_init__(self) -> None:
        if self.api not in APIS:
            raise HichunkError(f"endpoint api must be one of {', '.join(APIS)} (got {self.api!r})")
        base = self.base_url.rstrip("/")
        self.base_url = base if base.endswith("/v1") else base + "/v1"

    @property
    def id(self) -> str:
        return f"{self.model}@{self.base_url} ({self.api})"

    def _post(self, path: str, payload: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(payload).encode("utf-8")
        last = ""
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.base_url + path, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                    return json.loads(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} {exc.reason}"
                if exc.code < 500:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = str(getattr(exc, "reason", exc))
            except json.JSONDecodeError:
                last = "the answer is not JSON"
                break
            if attempt < self.retries:
                time.sleep(min(self.backoff * 2.0**attempt, 10.0))
                log.info("retrying %s%s after: %s", self.base_url, path, last)
        raise HichunkError(f"endpoint {self.base_url}{path}: {last}")

    def complete(self, prompt: str, max_tokens: int = 512, temperature: float = 0.0, n: int = 1,
                 stop: list[str] | None = None, **extra) -> list[str]:
        """``n`` completions of ``prompt`` (greedy by default)."""
        payload = {"model": self.model, "max_tokens": max_tokens, "temperature": temperature, "n": n, **extra}
        if stop:
            payload["stop"] = stop
        if self.api == "chat":
            payload["messages"] = [{"role": "user", "content": prompt}]
            answer = self._post("/chat/completions", payload)
        else:
            payload["prompt"] = prompt
            answer = self._post("/completions", payload)
        try:
            choices = sorted(answer["choices"], key=lambda c: c.get("index", 0))
            texts = [c["message"]["content"] if self.api == "chat" else c["text"] for c in choices]
        except (KeyError, TypeError) as exc:
            raise HichunkError(f"endpoint {self.base_url}: unexpected answer shape (missing {exc})") from None
        if not texts:
            raise HichunkError(f"endpoint {self.base_url}: no choices in the answer")
        return [t or "" for t in texts]


def extract_json(text: str) -> dict | None:
    """The first JSON object in ``text`` (after any ``</think>``), or None."""
    text = text.split("</think>")[-1]
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
            if isinstance(value, dict):
                return value
        except json.JSONDecodeError:
            pass
        start = text.find("{", start + 1)
    return None
