"""Prediction cache: a model's outcome per exact window input, so edited documents re-run only changed windows.

The key is the SHA-256 of the model's name (which covers its weights and
settings) and the exact window (lines, residual count, last-window flag, layout). The
value is what the model answered: chunk starts and raw text, or the parse error
it caused. Backend failures (a server down) are never cached.

The store is one SQLite file, safe across processes and crashes. A cache that
cannot be opened or written (read-only disk, corrupt file) is switched off
with a warning: caching is an optimisation, never a reason to fail.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from dataclasses import astuple

from hichunk.paths import cache_dir
from hichunk.protocol import Window

log = logging.getLogger(__name__)


def default_cache_path() -> str:
    """``$XDG_CACHE_HOME/hichunk/predictions/predictions.sqlite`` (``~/.cache`` when unset)."""
    return os.path.join(cache_dir("predictions"), "predictions.sqlite")


def window_key(model_name: str, window: Window) -> str:
    """Cache key of one window input for one model (its layout included when it has one)."""
    parts = [model_name, window.n_residual, window.is_last, list(window.lines)]
    if window.layout:
        parts.append([list(astuple(x)) for x in window.layout])
    payload = json.dumps(parts, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class PredictionCache:
    """Window outcomes by key (see ``window_key``), stored as JSON in SQLite."""

    def __init__(self, path: str | None = None):
        self.path = path or default_cache_path()
        self._db: sqlite3.Connection | None = None
        self._disabled = False

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is None and not self._disabled:
            try:
                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
                db = sqlite3.connect(self.path, timeout=30)
                db.execute("CREATE TABLE IF NOT EXISTS outcomes (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                db.commit()
                self._db = db
            except (OSError, sqlite3.Error) as exc:
                self._disable(exc)
        return self._db

    def _disable(self, exc: Exception) -> None:
        log.warning("prediction cache %s switched off: %s", self.path, exc)
        self._disabled = True
        if self._db is not None:
            self._db.close()
            self._db = None

    def get(self, key: str) -> dict | None:
        db = self._connect()
        if db is None:
            return None
        try:
            row = db.execute("SELECT value FROM outcomes WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError) as exc:
            self._disable(exc)
            return None

    def put(self, key: str, value: dict) -> None:
        db = self._connect()
        if db is None:
            return
        try:
            db.execute("INSERT OR REPLACE INTO outcomes (key, value) VALUES (?, ?)",
                       (key, json.dumps(value, ensure_ascii=False, default=str)))
            db.commit()
        except (sqlite3.Error, TypeError, ValueError) as exc:
            self._disable(exc)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
