"""Named points where a test can kill the process, to prove crash safety.

``HICHUNK_FAULT=name[:n]`` makes the n-th pass (default 1st) through
checkpoint ``name`` send SIGKILL to the current process: no cleanup, no
flush, exactly what a power cut or ``kill -9`` does to a writer. Unset, a
checkpoint costs one dictionary lookup.

``HICHUNK_FAULT_ONCE=FILE`` makes the kill happen once across processes: the
process that kills itself first creates FILE, and no process kills itself
while FILE exists. A Ray worker killed that way is restarted by Ray and its
task retried, which then runs to the end.
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
        once = os.environ.get("HICHUNK_FAULT_ONCE")
        if once:
            try:
                os.close(os.open(once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
        os.kill(os.getpid(), signal.SIGKILL)
