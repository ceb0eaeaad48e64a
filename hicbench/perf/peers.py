"""Other libraries' chunkers behind one call, for side-by-side speed runs (extra ``bench-peers``).

Each peer is a factory that returns ``split(text) -> list[Chunk]``; a fresh
splitter per timed run, so no memo survives a repeat. A chunk carries the
offset its library reports, or None when it reports none, so the benchmark can
check ``text[start:end] == chunk.text``. Peers whose package is missing are
left out with a note. Sizes are in tokens: chonkie counts with tiktoken's
``cl100k_base`` (its usual set-up; the encoding file comes from
``TIKTOKEN_CACHE_DIR`` or the copy that ships inside llama-index-core, never
from the network), the others with the same tokenizer as hichunk.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass

from hichunk.tokens import Tokenizer

MARKDOWN_HEADERS = [("#" * k, f"h{k}") for k in range(1, 7)]


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str
    start: int | None  # offset in the document as the library reports it (None: it reports none)


Split = Callable[[str], list[Chunk]]


def tiktoken_cl100k():
    """tiktoken's cl100k_base from a local file (TIKTOKEN_CACHE_DIR, else llama-index-core's copy), or None."""
    if importlib.util.find_spec("tiktoken") is None:
        return None
    if not os.environ.get("TIKTOKEN_CACHE_DIR") and importlib.util.find_spec("llama_index.core") is not None:
        import llama_index.core

        os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(os.path.dirname(llama_index.core.__file__), "_static", "tiktoken_cache")
    import tiktoken

    try:
        return tiktoken.get_encoding("cl100k_base")
    except Exception:  # no local copy and no network
        return None


def _chonkie(size: int) -> dict[str, Callable[[], Split]]:
    if importlib.util.find_spec("chonkie") is None:
        return {}
    encoding = tiktoken_cl100k()
    if encoding is None:
        return {}
    from chonkie import RecursiveChunker, SentenceChunker, TokenChunker

    def wrap(make) -> Callable[[], Split]:
        def factory() -> Split:
            chunker = make()
            return lambda text: [Chunk(c.text, c.start_index) for c in chunker(text)]
        return factory

    return {
        "chonkie TokenChunker (cl100k)": wrap(lambda: TokenChunker(tokenizer=encoding, chunk_size=size, chunk_overlap=0)),
        "chonkie RecursiveChunker (cl100k)": wrap(lambda: RecursiveChunker(tokenizer=encoding, chunk_size=size)),
        "chonkie SentenceChunker (cl100k)": wrap(lambda: SentenceChunker(tokenizer=encoding, chunk_size=size, chunk_overlap=0)),
    }


def _semchunk(size: int, tokenizer: Tokenizer) -> dict[str, Callable[[], Split]]:
    if importlib.util.find_spec("semchunk") is None:
        return {}
    import semchunk

    def factory() -> Split:
        # semchunk memoises counts per counter function: a new function per run keeps runs cold
        chunker = semchunk.chunkerify(lambda text: tokenizer.count(text), size)

        def split(text: str) -> list[Chunk]:
            chunks, offsets = chunker(text, offsets=True)
            return [Chunk(c, a) for c, (a, _) in zip(chunks, offsets)]
        return split

    return {"semchunk": factory}


def _langchain(size: int, tokenizer: Tokenizer) -> dict[str, Callable[[], Split]]:
    if importlib.util.find_spec("langchain_text_splitters") is None:
        return {}
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    def recursive() -> Split:
        splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0, length_function=tokenizer.count,
                                                  add_start_index=True)
        return lambda text: [Chunk(d.page_content, d.metadata["start_index"]) for d in splitter.create_documents([text])]

    def markdown() -> Split:
        headers = MarkdownHeaderTextSplitter(MARKDOWN_HEADERS)
        splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0, length_function=tokenizer.count)
        return lambda text: [Chunk(d.page_content, None) for d in splitter.split_documents(headers.split_text(text))]

    return {"LangChain RecursiveCharacterTextSplitter": recursive, "LangChain MarkdownHeader + Recursive": markdown}


def _llama_index(size: int, tokenizer: Tokenizer) -> dict[str, Callable[[], Split]]:
    if importlib.util.find_spec("llama_index.core") is None:
        return {}
    from llama_index.core import Document
    from llama_index.core.node_parser import HierarchicalNodeParser, SentenceSplitter, get_leaf_nodes

    def ids(text: str) -> list[int]:
        return tokenizer.encode(text)[0].tolist()

    def nodes(parser, leaves_only: bool) -> Split:
        def split(text: str) -> list[Chunk]:
            found = parser.get_nodes_from_documents([Document(text=text)])
            return [Chunk(n.get_content(), n.start_char_idx) for n in (get_leaf_nodes(found) if leaves_only else found)]
        return split

    def sentences(chunk_size: int):
        return SentenceSplitter(chunk_size=chunk_size, chunk_overlap=0, tokenizer=ids)

    def hierarchical():
        sizes = {f"chunk_size_{s}": s for s in (size * 8, size * 4, size)}  # three levels, leaves of ``size``
        return HierarchicalNodeParser.from_defaults(node_parser_ids=list(sizes),
                                                    node_parser_map={k: sentences(s) for k, s in sizes.items()})

    return {"LlamaIndex SentenceSplitter": lambda: nodes(sentences(size), False),
            "LlamaIndex HierarchicalNodeParser (leaves)": lambda: nodes(hierarchical(), True)}


def peers(size: int, tokenizer: Tokenizer) -> tuple[dict[str, Callable[[], Split]], list[str]]:
    """Factories of every installed peer, and a note for each library left out."""
    out: dict[str, Callable[[], Split]] = {}
    missing: list[str] = []
    for name, found in (("chonkie (with tiktoken's cl100k_base)", _chonkie(size)), ("semchunk", _semchunk(size, tokenizer)),
                        ("langchain-text-splitters", _langchain(size, tokenizer)),
                        ("llama-index-core", _llama_index(size, tokenizer))):
        if found:
            out.update(found)
        else:
            missing.append(f"{name} is not installed (pip install \"hichunk[bench-peers]\"): left out")
    return out, missing
