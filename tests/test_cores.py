"""map_in_threads: the same results as a loop, in order, and no deadlock when nested."""

import threading

from hichunk.cores import available_cores, map_in_threads


def test_results_come_back_in_order():
    assert map_in_threads(lambda x: x * x, range(50)) == [x * x for x in range(50)]
    assert map_in_threads(str, []) == [] and map_in_threads(str, [7]) == ["7"]


def test_nested_use_runs_inline():
    names = map_in_threads(lambda _: map_in_threads(lambda _: threading.current_thread().name, range(3)), range(4))
    assert len(names) == 4 and all(len(inner) == 3 for inner in names)
    if available_cores() > 1:
        assert all(len(set(inner)) == 1 for inner in names)  # each inner map ran in its caller's thread
