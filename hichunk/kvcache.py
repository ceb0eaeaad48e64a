"""A small key-value cache in one SQLite file, with one failure policy for every cache in hichunk.

Prediction, embedding and benchmark tree caches all store bytes under bytes
keys. SQLite in WAL mode lets one writer and many readers share the file, and
each ``put_many`` is one transaction, so a kill -9 keeps every batch that was
committed before it.

Failure policy:

* the file cannot be opened or created (missing or read-only directory, a
  directory in its place): ``HichunkError`` with one line, at construction;
* the file is not a database (corrupt), or a read or write fails later
  (corruption, disk full, a lock held too long): one warning, then the cache
  is switched off and the run goes on without it. A cache only saves time;
  what it would have returned is recomputed.

``path=":memory:"`` keeps the cache in memory (nothing on disk). One cache
object may be shared by threads (a server's workers): its connection is used
under a lock, one statement or transaction at a time.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Sequence

from hichunk.errors import HichunkError

log = logging.getLogger(__name__)

MEMORY = ":memory:"
_QUERY_KEYS = 500  # keys per SELECT, below SQLite's variable limit


class KVCache:
    """Bytes values under bytes keys in one SQLite file (or in memory); ``what`` names it in messages."""

    def __init__(self, path: str, what: str = "cache", timeout: float = 60.0):
        self.path, self.what = path, what
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        try:
            if path != MEMORY:
                os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            db = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise HichunkError(f"cannot open the {what} {path}: {_reason(exc)}") from None
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS kv (key BLOB PRIMARY KEY, value BLOB NOT NULL)")
        except sqlite3.OperationalError as exc:  # cannot open or create the file (or its journal)
            db.close()
            raise HichunkError(f"cannot open the {what} {path}: {_reason(exc)}") from None
        except sqlite3.DatabaseError as exc:  # not a database: corrupt
            db.close()
            self._switch_off(exc)
            return
        self._db = db

    @property
    def enabled(self) -> bool:
        """False once a failure switched the cache off."""
        return self._db is not None

    def _switch_off(self, exc: Exception) -> None:
        log.warning("%s %s switched off (the run goes on without it): %s", self.what, self.path, _reason(exc))
        self.close()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The stored values of those ``keys`` that are present."""
        out: dict[bytes, bytes] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            try:
                for start in range(0, len(unique), _QUERY_KEYS):
                    if self._db is None:
                        break
                    part = unique[start : start + _QUERY_KEYS]
                    rows = self._db.execute(f"SELECT key, value FROM kv WHERE key IN ({','.join('?' * len(part))})", part)
                    out.update((bytes(k), bytes(v)) for k, v in rows)
            except sqlite3.Error as exc:
                self._switch_off(exc)
        return out

    def get(self, key: bytes) -> bytes | None:
        return self.get_many([key]).get(key)

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        """Store all ``items`` in one transaction (all of them survive a crash, or none)."""
        rows = list(items)
        with self._lock:
            if self._db is None or not rows:
                return
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                db.executemany("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", rows)
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                if db.in_transaction:
                    db.rollback()
                self._switch_off(exc)

    def put(self, key: bytes, value: bytes) -> None:
        self.put_many([(key, value)])

    def __len__(self) -> int:
        with self._lock:
            if self._db is None:
                return 0
            try:
                return int(self._db.execute("SELECT COUNT(*) FROM kv").fetchone()[0])
            except sqlite3.Error as exc:
                self._switch_off(exc)
                return 0

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _reason(exc: Exception) -> str:
    return getattr(exc, "strerror", None) or str(exc)
