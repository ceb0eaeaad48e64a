"""The cores this process may use, one pool of threads for work that releases the GIL, and one BLAS thread
for small matrix products.

Why a pool of our own: tokenizers (Bling Fire through ctypes, tiktoken, Hugging
Face's Rust tokenizers) and numpy's matrix products release the GIL, so cutting
one long text into parts and running the parts in threads uses every core
without the cost of processes. Work already running in the pool runs inline,
so nested use can never wait on itself.

Why one BLAS thread for small products: OpenBLAS hands even a 128 x 384
matrix-vector product to its own thread pool; a recurrent loop makes thousands
of them, and the hand-offs cost more than the arithmetic (the split-point
model's GRU ran 2.7x slower that way on 2 busy cores). Work that is already
spread over threads wants one BLAS thread per worker for the same reason.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
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


@lru_cache(maxsize=1)
def _blas_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # finds the loaded BLAS libraries once (a fresh look costs ~1.5 ms)


def one_blas_thread() -> AbstractContextManager:
    """A context in which numpy's BLAS runs on the calling thread only (restored on exit)."""
    return _blas_controller().limit(limits=1, user_api="blas")
