"""The service's worker processes: results and errors come back, a task over its time is stopped (its worker
killed and replaced), closing the pool stops running work at once."""

from __future__ import annotations

import operator
import os
import threading
import time

import pytest

from hichunk.document import decode_bytes
from hichunk.errors import InputError
from hichunk.serve.workers import PoolBusy, TaskFailed, WorkerLost, WorkerPool, WorkTimeout


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(1) as p:
        p.start()
        yield p


def test_results_and_errors_come_back(pool):
    assert pool.run(operator.add, 2, 3, timeout=60) == 5
    with pytest.raises(InputError, match="looks like a binary file"):  # a HichunkError keeps its type and line
        pool.run(decode_bytes, b"\x00\x01\x02", "x.bin", timeout=60)
    with pytest.raises(TaskFailed) as failed:  # anything else is a bug: a message and the worker's traceback
        pool.run(operator.truediv, 1, 0, timeout=60)
    assert "ZeroDivisionError" in str(failed.value) and "Traceback" in failed.value.details


def test_a_task_over_its_time_is_stopped_and_its_worker_replaced(pool):
    started = time.monotonic()
    with pytest.raises(WorkTimeout):
        pool.run(time.sleep, 60, timeout=0.5)
    assert time.monotonic() - started < 10
    assert pool.run(operator.mul, 6, 7, timeout=60) == 42  # a new worker took its place


def test_a_worker_killed_for_its_time_is_replaced_warm(tmp_path):
    """The replacement runs the pool's warm-up (here: a working directory) before any task reaches it."""
    with WorkerPool(1) as warm_pool:
        warm_pool.start(os.chdir, str(tmp_path))
        with pytest.raises(WorkTimeout):
            warm_pool.run(time.sleep, 60, timeout=0.5)
        assert warm_pool.wait_ready(60)
        assert warm_pool.run(os.getcwd, timeout=60) == str(tmp_path)


def test_a_busy_pool_says_so_instead_of_queueing_forever(pool):
    done = threading.Event()
    holder = threading.Thread(target=lambda: (pool.run(time.sleep, 1.5, timeout=60), done.set()))
    holder.start()
    time.sleep(0.3)
    with pytest.raises(PoolBusy):
        pool.run(operator.add, 1, 1, timeout=60, wait_for_worker=0.2)
    holder.join()
    assert done.is_set()


def test_closing_the_pool_stops_running_work_at_once():
    pool = WorkerPool(1)
    errors = []
    runner = threading.Thread(target=lambda: errors.append(_run_catching(pool)))
    runner.start()
    deadline = time.monotonic() + 60
    while not pool._all and time.monotonic() < deadline:  # the worker has the task
        time.sleep(0.05)
    time.sleep(0.3)
    workers = list(pool._all)
    started = time.monotonic()
    pool.close()
    runner.join(10)
    assert not runner.is_alive() and time.monotonic() - started < 10
    assert isinstance(errors[0], WorkerLost)
    assert all(not w.process.is_alive() for w in workers)


def _run_catching(pool: WorkerPool):
    try:
        pool.run(time.sleep, 60, timeout=120)
    except Exception as exc:  # noqa: BLE001 - the test inspects it
        return exc
    return None
