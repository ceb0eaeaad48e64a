"""Worker processes for the service's heavy work (parsing, chunking, embedding), with hard time limits.

A request to ``/chunk`` or ``/index/update`` runs its work in one of a few worker
processes, never in a thread of the server:

* the server's threads stay free for ``/query`` and ``/health`` whatever a client uploads;
* a task over its time limit is stopped for real: its worker is killed (SIGKILL) and
  replaced, which no thread can do to Python code in a parser's loop;
* workers run at a lower CPU priority (``nice``), so queries keep their latency on a
  machine whose cores the heavy work would otherwise take;
* closing the pool kills every worker at once: a server that stops is gone, not still
  chunking for a minute.

Workers are forked from multiprocessing's fork server, which imports hichunk's chunking
code once (``PRELOAD``), so a new worker starts in milliseconds and shares those pages.
A worker asks the kernel to kill it when its parent goes (Linux ``PR_SET_PDEATHSIG``), so
no orphan outlives a server that was killed.

``WorkerPool`` is also an ``Executor`` for the index's distributed pipeline
(``hichunk.retrieval.index.distributed``): ``submit``, ``wait``, ``result``, ``share``.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from hichunk.errors import HichunkError

log = logging.getLogger("hichunk.serve")

# Imported once by the fork server; every worker inherits them (torch and the shipped model's code among them).
PRELOAD = ["hichunk.serve.jobs", "hichunk.chunkers.hichunk", "hichunk.chunkers.structure", "hichunk.models.encoder.net",
           "hichunk.models.encoder.model", "hichunk.models.encoder.features", "hichunk.document.markdown",
           "hichunk.document.html"]
WORKER_NICE = 10  # added to a worker's niceness: queries first
_PR_SET_PDEATHSIG = 1


class WorkTimeout(HichunkError):
    """A task ran past its time limit; its worker was killed."""


class WorkerLost(HichunkError):
    """A worker died during a task (killed, out of memory) or the pool was closed."""


class PoolBusy(HichunkError):
    """Every worker was busy for longer than the caller would wait."""


class TaskFailed(Exception):
    """A task raised something unexpected (a bug, not bad input); ``details`` holds the worker's traceback."""

    def __init__(self, message: str, details: str):
        super().__init__(message)
        self.details = details


class _Failure:
    """A task's exception as sent back: a HichunkError as it is, anything else as a message and traceback."""

    def __init__(self, exc: BaseException):
        import traceback

        self.error = exc if isinstance(exc, HichunkError) and _picklable(exc) else None
        self.message = f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}"
        self.details = "" if self.error is not None else traceback.format_exc()


def _picklable(exc: BaseException) -> bool:
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
        return True
    except Exception:
        return False


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent exits (the fork server exits with the server)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _worker_main(conn: Connection, nice: int) -> None:
    """A worker's loop: receive ``(fn, args)``, send back ``("ok", result)`` or ``("error", failure)``."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when its workers stop
    try:  # tqdm's default lock is a multiprocessing one, which a killed worker would leave registered
        from tqdm import tqdm

        tqdm.set_lock(threading.RLock())
    except ImportError:
        pass
    try:
        os.nice(nice)
    except OSError:
        pass
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = ("ok", fn(*args))
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the server, which logs it
            reply = ("error", _Failure(exc))
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return


_main_lock = threading.Lock()


@contextmanager
def _main_script_hidden() -> Iterator[None]:
    """Keep multiprocessing from running the main script again in a new worker (a script that starts a
    server without an ``if __name__ == "__main__"`` guard would start one in every worker): workers only
    run functions of importable modules."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    with _main_lock:
        saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
        main.__dict__.pop("__file__", None)
        main.__spec__ = None
        try:
            yield
        finally:
            main.__dict__.update(saved)
            if "__spec__" not in saved:
                del main.__spec__


class _Worker:
    def __init__(self, ctx, nice: int):
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=_worker_main, args=(child, nice), daemon=True, name="hichunk-worker")
        with _main_script_hidden():
            self.process.start()
        child.close()
        self.dead = False

    def kill(self) -> bool:
        """Kill the process (once); False when it was killed before."""
        if self.dead:
            return False
        self.dead = True
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()
        return True


@dataclass(eq=False)
class Task:
    """A task running on one worker (a handle for ``wait`` and ``result``)."""

    worker: _Worker
    deadline: float
    name: str


class WorkerPool:
    """``size`` worker processes, one task each at a time (see the module doc)."""

    def __init__(self, size: int = 2, nice: int = WORKER_NICE):
        if size < 1:
            raise HichunkError(f"workers must be at least 1 (got {size})")
        self.workers = size  # the Executor protocol's name: tasks kept running at once
        self.nice = nice
        self._ctx = _context()
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()  # every live worker, idle or busy
        self._started = 0
        self._closed = False
        self._cond = threading.Condition()
        self._warm: tuple[Callable, tuple] | None = None  # what ``start`` ran in each worker, run again in replacements

    # -- running one task ---------------------------------------------------------------
    def run(self, fn: Callable, *args, timeout: float, wait_for_worker: float | None = None) -> Any:
        """``fn(*args)`` in a worker; WorkTimeout when it runs over ``timeout`` seconds (the worker is killed),
        PoolBusy when no worker is free within ``wait_for_worker`` seconds (default: ``timeout``)."""
        free_by = time.monotonic() + (timeout if wait_for_worker is None else wait_for_worker)
        task = self.submit_by(fn, args, free_by, seconds=timeout)
        self.wait([task])
        return self.result(task)

    def submit_by(self, fn: Callable, args: Sequence, free_by: float, deadline: float = float("inf"),
                  seconds: float | None = None) -> Task:
        """Start ``fn(*args)`` on a worker free by ``free_by``; it must end by ``deadline``, or within ``seconds``
        of starting (not counting the wait for a worker)."""
        worker = self._take(free_by)
        if seconds is not None:
            deadline = min(deadline, time.monotonic() + seconds)
        try:
            worker.conn.send((fn, tuple(args)))
        except (OSError, ValueError) as exc:
            self._discard(worker)
            raise WorkerLost(f"a worker could not take the task ({exc})") from None
        return Task(worker, deadline, getattr(fn, "__name__", "task"))

    # -- the Executor protocol (hichunk.retrieval.index.distributed) -----------------------
    def submit(self, fn: Callable, *args) -> Task:
        """Start ``fn(*args)`` on a free worker (waiting for one); no time limit (see ``limited``)."""
        return self.submit_by(fn, args, float("inf"))

    def wait(self, handles: Sequence[Task]) -> Task:
        """A finished task among ``handles``; WorkTimeout (their workers killed) when the first deadline passes."""
        by_conn = {t.worker.conn: t for t in handles}
        deadline = min(t.deadline for t in handles)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                late = [t for t in handles if t.deadline <= time.monotonic()]
                for t in late:
                    self._discard(t.worker)
                raise WorkTimeout(f"{late[0].name} ran past its time limit and was stopped")
            ready = wait(list(by_conn), timeout=min(left, 1.0))
            if ready:
                return by_conn[ready[0]]
            if self._closed:
                raise WorkerLost("the server is stopping")

    def result(self, handle: Task) -> Any:
        """The finished task's value, or its exception (a HichunkError as it was, anything else as one line)."""
        try:
            status, value = handle.worker.conn.recv()
        except (EOFError, OSError):
            self._discard(handle.worker)
            raise WorkerLost("a worker died during the task (out of memory, or killed)") from None
        self._give_back(handle.worker)
        if status == "ok":
            return value
        if value.error is not None:
            raise value.error
        raise TaskFailed(f"{handle.name} failed in a worker ({value.message})", value.details)

    def share(self, value: Any) -> Any:
        return value

    def cancel(self, handles: Sequence[Task]) -> None:
        """Stop running tasks (their workers are killed and replaced on demand)."""
        for t in handles:
            self._discard(t.worker)

    def limited(self, seconds: float) -> _Limited:
        """This pool as an Executor whose every task must finish within ``seconds`` from now (one deadline
        for a whole index update); on any failure its running tasks are stopped."""
        return _Limited(self, time.monotonic() + seconds)

    # -- workers ------------------------------------------------------------------------
    def start(self, warm: Callable | None = None, *args) -> None:
        """Start every worker now and run ``warm(*args)`` in each (loading models), so that the first requests
        do not wait for that; ``close`` need not wait for this. A worker killed later (a task over its time)
        is replaced at once, in the background, and warmed the same way: the next task's time limit never
        pays for a cold start."""
        if warm is not None:
            self._warm = (warm, args)
        while True:
            with self._cond:
                if self._closed or self._started >= self.workers:
                    return
                self._started += 1
            try:
                worker = self._spawn()
            except BaseException:
                with self._cond:
                    self._started -= 1
                    self._cond.notify()
                raise
            if warm is not None:
                try:
                    worker.conn.send((warm, args))
                    status, value = worker.conn.recv()
                    if status != "ok":
                        log.warning("a worker did not warm up: %s", value.message)
                except (EOFError, OSError):
                    self._discard(worker)
                    continue
            self._give_back(worker)

    def wait_ready(self, timeout: float) -> bool:
        """Block until every worker is started and idle (True), or ``timeout`` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._idle) < self.workers and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 1.0))
            return not self._closed

    def _spawn(self) -> _Worker:
        worker = _Worker(self._ctx, self.nice)
        with self._cond:
            self._all.add(worker)
        return worker

    def _take(self, free_by: float) -> _Worker:
        with self._cond:
            while True:
                if self._closed:
                    raise WorkerLost("the server is stopping")
                if self._idle:
                    worker = self._idle.pop()
                    if worker.process.is_alive():
                        return worker
                    self._forget(worker)
                    continue
                if self._started < self.workers:
                    self._started += 1
                    break
                left = free_by - time.monotonic()
                if left <= 0:
                    raise PoolBusy("every worker is busy")
                self._cond.wait(min(left, 1.0))
        try:
            return self._spawn()
        except BaseException:
            with self._cond:
                self._started -= 1
                self._cond.notify()
            raise

    def _give_back(self, worker: _Worker) -> None:
        with self._cond:
            if not self._closed and not worker.dead:
                self._idle.append(worker)
                self._cond.notify()
                return
        self._discard(worker)

    def _discard(self, worker: _Worker) -> None:
        """Kill a worker (a task over its time, a lost one) and make room for a new one."""
        with self._cond:
            self._forget(worker)

    def _forget(self, worker: _Worker) -> None:  # with self._cond held
        if worker in self._all:
            self._all.discard(worker)
            self._started -= 1
            self._cond.notify()
            if self._warm is not None and not self._closed:
                warm, args = self._warm
                threading.Thread(target=self._replace, args=(warm, *args), name="hichunk-worker-replace",
                                 daemon=True).start()
        worker.kill()

    def _replace(self, warm: Callable, *args) -> None:
        try:
            self.start(warm, *args)
        except Exception:  # the next task starts a worker itself and says why it could not
            log.warning("a replacement worker did not start", exc_info=True)

    def close(self) -> None:
        """Kill every worker now, idle or busy (running tasks end with WorkerLost)."""
        with self._cond:
            self._closed = True
            workers, self._idle = list(self._all), []
            self._cond.notify_all()
        for worker in workers:
            worker.kill()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Limited:
    """A WorkerPool seen as an Executor with one deadline for all its tasks."""

    def __init__(self, pool: WorkerPool, deadline: float):
        self.pool, self.deadline = pool, deadline
        self.workers = pool.workers
        self.running: set[Task] = set()

    def submit(self, fn: Callable, *args) -> Task:
        task = self.pool.submit_by(fn, args, self.deadline, self.deadline)  # waiting for a worker counts too
        self.running.add(task)
        return task

    def wait(self, handles: Sequence[Task]) -> Task:
        return self.pool.wait(handles)

    def result(self, handle: Task) -> Any:
        self.running.discard(handle)
        return self.pool.result(handle)

    def share(self, value: Any) -> Any:
        return value

    def __enter__(self) -> _Limited:
        return self

    def __exit__(self, kind, *rest) -> None:
        if self.running:  # an error (or a timeout) left tasks running: stop them
            self.pool.cancel(list(self.running))
            self.running.clear()


def _context():
    """The fork server context, preloading the chunking code (fork elsewhere; spawn where there is no fork)."""
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")
