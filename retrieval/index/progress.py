"""What a build shows while it runs: documents chunked, then leaves embedded.

Embedding is most of a build's time (35-50 s for 648 leaves on two cores), so a documents bar alone
sits at 100% while the encoder works and the build looks hung. ``BuildProgress`` keeps two bars on
stderr: documents, and leaves embedded (cache hits count at once). The leaves bar's total grows as
documents are chunked, since a document's leaves are known only then.
"""

from __future__ import annotations

import sys
from types import TracebackType

from tqdm import tqdm


class BuildProgress:
    """Two bars (``docs``, ``leaves``); ``enabled=False`` shows nothing and costs nothing."""

    def __init__(self, documents: int, enabled: bool, docs_label: str = "chunking"):
        self.docs = tqdm(total=documents, desc=docs_label, unit="doc", disable=not enabled, file=sys.stderr, position=0)
        self.leaves = tqdm(total=0, desc="embedding", unit="leaf", disable=not enabled, file=sys.stderr, position=1)

    def expect(self, leaves: int) -> None:
        """``leaves`` more leaves will be embedded (their documents were just chunked)."""
        if not leaves:
            return
        if self.leaves.total == 0:  # the first leaves: the clock starts now, so the rate is the encoder's
            self.leaves.reset(total=leaves)
        else:
            self.leaves.total += leaves
            self.leaves.refresh()

    def embedded(self, leaves: int) -> None:
        """``leaves`` leaves have their vectors (encoded, or found in the cache)."""
        self.leaves.update(leaves)

    def __enter__(self) -> BuildProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.leaves.close()
        self.docs.close()
