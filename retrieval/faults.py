"""Named points where a test can kill the process, to prove crash safety.

``HICHUNK_FAULT=name[:n]`` makes the n-th pass (default 1st) through
checkpoint ``name`` send SIGKILL to the current process: no cleanup, no
flush, exactly what a power cut or ``kill -9`` does to a writer. Unset, a
checkpoint costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

_passes: dict[str, int] = {}


def checkpoint(name: str) -> None:
    spec = os.environ.get("HICHUNK_FAULT")
    if not spec:
        return
    target, _, count = spec.partition(":")
    if target != name:
        return
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] >= int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)
