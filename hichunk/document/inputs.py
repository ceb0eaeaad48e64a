"""Input paths shared by the commands: files and directories walked in a stable order."""

from __future__ import annotations

import logging
import os
import stat

from hichunk.document.load import EXTENSIONS, GROFF_SUFFIXES
from hichunk.errors import InputError

log = logging.getLogger(__name__)
SHOWN_SKIPPED = 5  # entries named in the one-line note about skipped ones


def _wanted(name: str) -> bool:
    lower = name.lower()
    if lower.endswith(".gz"):
        lower = lower[:-3]
    ext = os.path.splitext(lower)[1]
    return ext in EXTENSIONS or ext in GROFF_SUFFIXES


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # a dangling link, a file gone meanwhile: not readable either
        return False


def collect_inputs(paths: list[str]) -> list[str]:
    """Files named directly, plus regular files with a known document extension under directories (sorted).

    A walk never opens a named pipe, socket or device (reading one could block forever): such
    entries, and dangling links, are skipped and named in one warning line.
    """
    out: list[str] = []
    skipped: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for f in files:
                    if not f.startswith(".") and _wanted(f):
                        (found if _regular(os.path.join(root, f)) else skipped).append(os.path.join(root, f))
            out.extend(sorted(found))
        elif os.path.exists(path) or path == "-":
            out.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    if skipped:
        skipped.sort()
        more = f" and {len(skipped) - SHOWN_SKIPPED} more" if len(skipped) > SHOWN_SKIPPED else ""
        log.warning("skipped %d entries that are not regular files (pipes, sockets, devices, dangling links): %s%s",
                    len(skipped), ", ".join(skipped[:SHOWN_SKIPPED]), more)
    if not out:
        raise InputError("no input documents found")
    return out
