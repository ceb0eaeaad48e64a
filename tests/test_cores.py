"""map_in_threads: the same results as a loop, in order, and no deadlock when nested; one_blas_thread limits and restores."""

import threading

from hichunk.cores import available_cores, map_in_threads, one_blas_thread


def test_results_come_back_in_order():
    assert map_in_threads(lambda x: x * x, range(50)) == [x * x for x in range(50)]
    assert map_in_threads(str, []) == [] and map_in_threads(str, [7]) == ["7"]


def test_nested_use_runs_inline():
    names = map_in_threads(lambda _: map_in_threads(lambda _: threading.current_thread().name, range(3)), range(4))
    assert len(names) == 4 and all(len(inner) == 3 for inner in names)
    if available_cores() > 1:
        assert all(len(set(inner)) == 1 for inner in names)  # each inner map ran in its caller's thread


def test_one_blas_thread_limits_blas_and_restores_it():
    import numpy as np  # noqa: F401  (loads the BLAS library)
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        with one_blas_thread():
            assert blas_threads() and set(blas_threads()) == {1}
        assert blas_threads() == before
