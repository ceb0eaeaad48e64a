"""How documents become leaves and vectors in an index: fixed for the life of the index, checked when made."""

from __future__ import annotations

from dataclasses import dataclass, replace

from hichunk.chunkers import DEFAULT_METHOD, ChunkOptions, check_method
from hichunk.chunkers.base import check_chunk_settings
from hichunk.errors import HichunkError
from hichunk.retrieval.embedders import DEFAULT_EMBEDDER, check_embedder_name
from hichunk.tokens import DEFAULT_TOKENIZER

EXACT, ANN, IVF = "exact", "ann", "ivf"
SEARCHES = (EXACT, ANN, IVF)
APPROXIMATE = (ANN, IVF)  # candidates from a graph or from inverted lists, re-scored exactly


@dataclass(frozen=True)
class IndexConfig:
    """Chunking and embedding settings. Every value is checked here, so a bad one never reaches a manifest."""

    embedder: str = ""  # "" = the offline default
    breadcrumb: bool = True
    method: str = DEFAULT_METHOD
    leaf_tokens: int = 200
    max_level: int = 10
    merge_over_chunk: bool = True
    hints: str = "use"
    tokenizer: str = ""  # "" = the offline default
    search: str = EXACT  # exact: dot products with every leaf; ann: an HNSW graph (retrieval.index.ann); ivf: lists (.ivf)
    store: str = ""  # "": the index directory's own files; "embedded" or a URI: a LanceDB database (lance.py)

    def __post_init__(self) -> None:
        check_chunk_settings(self.leaf_tokens, self.max_level, self.hints)
        if self.search not in SEARCHES:
            raise HichunkError(f"unknown search backend {self.search!r} (choose from {', '.join(SEARCHES)})")
        if self.store and self.search in APPROXIMATE:
            raise HichunkError(f"search {self.search!r} is the directory format's own; a store index searches in its "
                               f"database (leave out --search {self.search} or --store)")
        if self.store != self.store.strip():
            raise HichunkError(f"the store must be 'embedded' or a URI (got {self.store!r})")
        check_method(self.method)
        if self.embedder:
            check_embedder_name(self.embedder)

    def with_defaults(self) -> IndexConfig:
        """The same settings with the default embedder and tokenizer named, as an index records them."""
        return replace(self, embedder=self.embedder or DEFAULT_EMBEDDER, tokenizer=self.tokenizer or DEFAULT_TOKENIZER)

    def chunk_options(self) -> ChunkOptions:
        return ChunkOptions(leaf_tokens=self.leaf_tokens, max_level=self.max_level, merge_over_chunk=self.merge_over_chunk,
                            hints=self.hints, tokenizer=self.tokenizer)
