"""Prediction cache: a model's outcome per exact window input, so edited documents re-run only changed windows.

The key is the SHA-256 of the model's name (which covers its weights and
settings) and the exact window (lines, residual count, last-window flag, layout). The
value is what the model answered: chunk starts and raw text, or the parse error
it caused. Backend failures (a server down) are never cached.

The store is a ``hichunk.kvcache.KVCache``, with its failure policy: a path that
cannot be opened is a one-line error; a corrupt or failing cache is switched
off with one warning and chunking goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import astuple

from hichunk.kvcache import KVCache
from hichunk.paths import cache_dir
from hichunk.protocol import Window


def default_cache_path() -> str:
    """``$XDG_CACHE_HOME/hichunk/predictions/predictions.sqlite`` (``~/.cache`` when unset)."""
    return os.path.join(cache_dir("predictions"), "predictions.sqlite")


def window_key(model_name: str, window: Window) -> bytes:
    """Cache key of one window input for one model (its layout included when it has one)."""
    parts = [model_name, window.n_residual, window.is_last, list(window.lines)]
    if window.layout:
        parts.append([list(astuple(x)) for x in window.layout])
    payload = json.dumps(parts, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).digest()


class PredictionCache:
    """Window outcomes by key (see ``window_key``), stored as JSON."""

    def __init__(self, path: str | None = None):
        self.store = KVCache(path or default_cache_path(), "prediction cache")

    @property
    def enabled(self) -> bool:
        return self.store.enabled

    def get(self, key: bytes) -> dict | None:
        raw = self.store.get(key)
        try:
            return json.loads(raw) if raw is not None else None
        except ValueError:  # an unreadable value is a miss; the next put replaces it
            return None

    def put(self, key: bytes, value: dict) -> None:
        self.store.put(key, json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))

    def close(self) -> None:
        self.store.close()
