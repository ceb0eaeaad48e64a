"""tiktoken encodings as hichunk tokenizers: exact counts and offsets, lossless chunks within the size, one-line errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hichunk.errors import HichunkError
from hichunk.tokens import load_tokenizer


@pytest.fixture(scope="module")
def cl100k():
    from hichunk.bench.perf.peers import tiktoken_cl100k

    if tiktoken_cl100k() is None:  # the encoding file ships inside llama-index-core (test extra)
        pytest.skip("no local copy of tiktoken's cl100k_base")
    return load_tokenizer("tiktoken:cl100k_base")


def test_counts_and_offsets_match_tiktoken(cl100k):
    import tiktoken

    text = "Héllo wörld, 这是中文。\n\n  And more: 123456 tokens.\t"
    ids, starts = cl100k.encode(text)
    assert list(ids) == tiktoken.get_encoding("cl100k_base").encode_ordinary(text)
    assert len(ids) == cl100k.count(text) and starts[0] == 0 and np.all(np.diff(starts) >= 0)
    words = [text[a:b] for a, b in zip(starts, list(starts[1:]) + [len(text)]) if b > a]
    assert "".join(words) == text
    assert cl100k.count("") == 0 and len(cl100k.encode("")[0]) == 0
    assert cl100k.count("bad \udcff byte") == cl100k.count("bad \ufffd byte")  # undecodable input kept by hichunk


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["alpha ", "beta\n", "第二章 ", "\n\n", "  ", "x" * 40, "😀", "12345 "]), max_size=300))
def test_fixed_chunks_are_lossless_and_within_the_size(cl100k, parts):
    from hichunk.chunkers import ChunkOptions, get_chunker
    from hichunk.document import parse_document

    text = "".join(parts)
    tree = get_chunker("fixed", ChunkOptions(leaf_tokens=20, tokenizer=cl100k)).chunk(parse_document(text, "text"))
    assert "".join(tree.raw_text(leaf) for leaf in tree.leaves()) == text
    assert all(cl100k.count(tree.raw_text(leaf)) <= 20 for leaf in tree.leaves())


def test_an_unknown_encoding_is_a_one_line_error():
    with pytest.raises(HichunkError, match="tiktoken cannot load 'no_such_encoding'") as info:
        load_tokenizer("tiktoken:no_such_encoding")
    assert "\n" not in str(info.value)
