"""Where hichunk keeps caches: one place for the XDG rule."""

from __future__ import annotations

import os


def cache_dir(*parts: str) -> str:
    """``${XDG_CACHE_HOME:-~/.cache}/hichunk/<parts>``."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "hichunk", *parts)
