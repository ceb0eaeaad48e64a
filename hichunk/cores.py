"""The cores this process may use, and one pool of threads for work that releases the GIL.

Why a pool of our own: tokenizers (Bling Fire through ctypes, tiktoken, Hugging
Face's Rust tokenizers) and numpy's matrix products release the GIL, so cutting
one long text into parts and running the parts in threads uses every core
without the cost of processes. Work already running in the pool runs inline,
so nested use can never wait on itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_PREFIX = "hichunk-cores"


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(available_cores(), thread_name_prefix=_PREFIX)


def map_in_threads(fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(x) for x in items]``, spread over the cores; inline on one core, for one item, or inside the pool."""
    items = list(items)
    if len(items) < 2 or available_cores() < 2 or threading.current_thread().name.startswith(_PREFIX):
        return [fn(x) for x in items]
    return list(_pool().map(fn, items))
