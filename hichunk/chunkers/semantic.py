"""``semantic`` (the paper's SC baseline): cut where adjacent sentences drift apart in meaning.

Each sentence is embedded together with its neighbours (``buffer`` sentences
on each side, 1 in the paper); a cut goes before sentence i+1 when the cosine
distance between the windows of i and i+1 lies above the ``percentile``-th
percentile of all such distances (74 in the paper). A chunk larger than the
leaf size is packed sentence by sentence into pieces that fit (a single
over-long sentence is cut by tokens), so every chunk is a leaf of at most
``leaf_tokens`` tokens. Sentences come from ``hichunk.sentences``, which
splits Chinese on its own punctuation, never on spaces.
"""

from __future__ import annotations

import sys

import numpy as np

from hichunk.chunkers.base import ChunkOptions, flat_tree
from hichunk.document.model import Document
from hichunk.errors import HichunkError
from hichunk.sentences import split_sentences
from hichunk.token_table import TokenTable
from hichunk.tree.model import ChunkTree

BUFFER = 1
PERCENTILE = 74.0
PROGRESS_DELAY = 2.0  # seconds before the sentence bar shows: short documents chunk without one


def semantic_cuts(windows: np.ndarray, percentile: float) -> list[int]:
    """Indexes i (>= 1) of the sentences that start a new chunk, from the window embeddings (normalised rows)."""
    if len(windows) < 2:
        return []
    distances = 1.0 - np.einsum("ij,ij->i", windows[:-1], windows[1:])
    threshold = np.percentile(distances, percentile)
    return [i + 1 for i, d in enumerate(distances) if d > threshold]


class SemanticChunker:
    name = "semantic"

    def __init__(self, options: ChunkOptions, embedder=None, buffer: int = BUFFER, percentile: float = PERCENTILE,
                 progress: bool = False):
        """``embedder``: anything with ``id`` and ``embed_passages(texts) -> normalised rows``
        (``hichunk.retrieval.chunking.get_chunker`` passes the default one). ``progress``: a bar of
        sentences embedded on stderr (embedding every sentence of a long document takes a while); the
        embedder then gets ``embed_passages(texts, progress)`` as the ``Embedder`` protocol has it."""
        if embedder is None:
            raise HichunkError("the semantic chunker needs an embedder (hichunk.retrieval.load_embedder())")
        self.options = options
        self.embedder = embedder
        self.buffer = buffer
        self.percentile = percentile
        self.progress = progress

    def chunk(self, doc: Document) -> ChunkTree:
        opts = self.options
        spans = [(s.start, s.end) for s in split_sentences(doc)]
        texts = [doc.clean[a:b].strip() for a, b in spans]
        cuts: list[int] = []
        table = TokenTable(doc.clean, opts.tokenizer)
        if len(spans) > 1:
            windows = [" ".join(texts[max(0, i - self.buffer) : i + self.buffer + 1]) for i in range(len(texts))]
            starts = semantic_cuts(self._embed(windows), self.percentile)
            cuts = self._fit(spans, table, [0, *starts, len(spans)])
        return flat_tree(doc, cuts, opts, {"method": self.name, "embedder": self.embedder.id,
                                           "buffer": self.buffer, "percentile": self.percentile}, table)

    def _embed(self, windows: list[str]) -> np.ndarray:
        if not self.progress:
            return self.embedder.embed_passages(windows)
        from tqdm import tqdm

        with tqdm(total=len(windows), desc="semantic: embedding sentences", unit="sentence", leave=False,
                  delay=PROGRESS_DELAY, file=sys.stderr) as bar:
            return self.embedder.embed_passages(windows, bar.update)

    def _fit(self, spans: list[tuple[int, int]], table: TokenTable, groups: list[int]) -> list[int]:
        """Chunk start offsets (after the first): semantic groups, split sentence-wise where too large."""
        limit = self.options.leaf_tokens
        clean = table.text
        sizes = []
        for a, b in spans:  # each sentence without the whitespace around it
            text = clean[a:b]
            sizes.append(table.count(a + len(text) - len(text.lstrip()), a + len(text.rstrip())))
        cuts: list[int] = []
        for first, end in zip(groups, groups[1:]):
            if first:
                cuts.append(spans[first][0])
            used = 0
            for i in range(first, end):
                if used and used + sizes[i] > limit:
                    cuts.append(spans[i][0])
                    used = 0
                used += sizes[i]
        return cuts
