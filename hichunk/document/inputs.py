"""Input paths shared by the commands: files and directories walked in a stable order."""

from __future__ import annotations

import os

from hichunk.document.load import EXTENSIONS, GROFF_SUFFIXES
from hichunk.errors import InputError


def _wanted(name: str) -> bool:
    lower = name.lower()
    if lower.endswith(".gz"):
        lower = lower[:-3]
    ext = os.path.splitext(lower)[1]
    return ext in EXTENSIONS or ext in GROFF_SUFFIXES


def collect_inputs(paths: list[str]) -> list[str]:
    """Files named directly, plus files with a known document extension under directories (sorted)."""
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = []
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(os.path.join(root, f) for f in files if not f.startswith(".") and _wanted(f))
            out.extend(sorted(found))
        elif os.path.exists(path) or path == "-":
            out.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    if not out:
        raise InputError("no input documents found")
    return out
