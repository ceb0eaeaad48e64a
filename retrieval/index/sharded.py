"""Several indexes searched as one: an index split by document shard.

    shards = [Index.open("idx-0"), Index.open("idx-1")]     # each holds a disjoint set of documents
    both = ShardedIndex(shards)
    result = both.search("how do I ...?", FillOptions(budget=4096))

A query is encoded once; every shard ranks its own leaves for it at the same time (threads: numpy and
the graph search release the GIL), and the shards' rankings are merged by score, ties by document id
then leaf order, which is exactly how one index orders its own rows. Budget filling and Auto-Merge run
once, on the merged ranking, so a context never holds more than the budget and merges never cross
documents. With exact search the result is the one an index holding every document gives.

The merge needs only ``(document, leaf node, score)`` from each shard, in rank order, and the trees of
the documents that reach the context, so the same design carries to shards on other machines (each
returns its top candidates per query and serves trees by document id); here the shards are ``Index``
objects in this process (directories, in memory, exact or ANN, mixed as you like).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import chain

import numpy as np

from hichunk.errors import HichunkError
from hichunk.retrieval.index.candidates import Candidate
from hichunk.retrieval.index.config import IndexConfig
from hichunk.retrieval.index.index import Index
from hichunk.retrieval.search import FillOptions, SearchResult, TreeView, search_index
from hichunk.tokens import Tokenizer


def _merge_key(candidate: Candidate) -> tuple[float, str, int]:
    doc, node, score = candidate
    return -score, doc, node


class ShardedIndex:
    """Indexes holding disjoint documents, made with the same embedder, searched as one."""

    def __init__(self, shards: Sequence[Index]):
        if not shards:
            raise HichunkError("a sharded index needs at least one shard")
        self.shards = list(shards)
        first = self.shards[0].config
        for shard in self.shards[1:]:
            c = shard.config
            if (c.embedder, c.breadcrumb, c.tokenizer) != (first.embedder, first.breadcrumb, first.tokenizer):
                raise HichunkError("shards must share embedder, breadcrumb and tokenizer settings "
                                   f"({first.embedder}/{first.tokenizer} vs {c.embedder}/{c.tokenizer})")
        self.docs  # noqa: B018 -- documents held by two shards are refused now
        self._threads = ThreadPoolExecutor(max_workers=len(self.shards), thread_name_prefix="shard")

    @property
    def config(self) -> IndexConfig:
        return self.shards[0].config

    @property
    def embedder(self):
        return self.shards[0].embedder

    def embed_query(self, query: str):
        """The query's vector, encoded once by the first shard's embedder (all shards share the model)."""
        return self.shards[0].embed_query(query)

    @property
    def docs(self) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for shard in self.shards:
            for doc, entry in shard.docs.items():
                if doc in out:
                    raise HichunkError(f"document {doc!r} is in two shards; shards must hold disjoint documents")
                out[doc] = entry
        return out

    def __len__(self) -> int:
        return sum(len(s) for s in self.shards)

    @property
    def n_leaves(self) -> int:
        return sum(s.n_leaves for s in self.shards)

    def shard_of(self, doc: str) -> Index:
        for shard in self.shards:
            if doc in shard.docs:
                return shard
        raise HichunkError(f"no document {doc!r} in the index")

    def tree(self, doc: str):
        return self.shard_of(doc).tree(doc)

    def view(self, doc: str, tokenizer: Tokenizer | None = None) -> TreeView:
        return self.shard_of(doc).view(doc, tokenizer)

    def ranked(self, vector: np.ndarray, docs: list[str] | None = None) -> Iterator[Candidate]:
        """Every shard's ranking, computed in parallel, merged by score (ties: document id, leaf order)."""
        if docs is not None:
            for doc in docs:
                self.shard_of(doc)  # an unknown document is an error, as with one index
            wanted = [[d for d in docs if d in s.docs] for s in self.shards]
            work = [(s, w) for s, w in zip(self.shards, wanted) if w]
        else:
            work = [(s, None) for s in self.shards if len(s)]

        def first(shard: Index, subset: list[str] | None) -> Iterator[Candidate]:
            ranking = shard.ranked(vector, subset)
            head = next(ranking, None)  # computes the shard's first block (the costly part) in this thread
            return ranking if head is None else chain([head], ranking)

        rankings = list(self._threads.map(lambda sw: first(*sw), work))
        return heapq.merge(*rankings, key=_merge_key)

    def search(self, query: str, options: FillOptions | None = None, tokenizer: Tokenizer | None = None,
               docs: list[str] | None = None) -> SearchResult:
        """Encode ``query`` once, rank every shard, fill the budget once (Auto-Merge on by default)."""
        return search_index(self, query, options, tokenizer, docs)

    def close(self) -> None:
        self._threads.shutdown(wait=False)
        for shard in self.shards:
            shard.close()
