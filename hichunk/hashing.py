"""Content hashes used for manifests, caches and data versions."""

from __future__ import annotations

import hashlib


def file_sha256(path: str) -> str:
    """Hex SHA-256 of a file, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def text_sha256(text: str) -> str:
    """Hex SHA-256 of a string's UTF-8 bytes (surrogates kept, so any str hashes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
