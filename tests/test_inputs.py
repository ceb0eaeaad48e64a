"""Encoder inputs and the recompute ratio R that the index and the update-cost benchmark share."""

from __future__ import annotations

import pytest

from hichunk.chunkers import ChunkOptions, chunk_document
from hichunk.document import parse_document
from hichunk.retrieval.inputs import encoder_inputs, recompute


def test_inputs_carry_the_heading_path(guide_md, tokenizer):
    tree = chunk_document(parse_document(guide_md, "markdown", "g"), "structure", ChunkOptions(leaf_tokens=16, tokenizer=tokenizer))
    inputs = encoder_inputs(tree)
    assert len(inputs) == len(tree.leaves())
    assert inputs[0].startswith("# Guide\n\n") and inputs[2].startswith("Guide > Install\n\n# install deps")
    assert encoder_inputs(tree, breadcrumb=False) == [tree.clean_text(leaf).strip() for leaf in tree.leaves()]


def test_null_edit_recomputes_nothing(guide_md, tokenizer):
    def inputs(text):
        tree = chunk_document(parse_document(text, "markdown", "g"), "structure", ChunkOptions(leaf_tokens=16, tokenizer=tokenizer))
        return encoder_inputs(tree)

    old = inputs(guide_md)
    same = recompute(old, inputs(guide_md), tokenizer)
    assert same.ratio == 0.0 and same.recomputed == () and same.unique_tokens > 0
    edited = recompute(old, inputs(guide_md.replace("Basic usage is simple.", "Usage is simple.")), tokenizer)
    assert 0.0 < edited.ratio < 1.0 and edited.recomputed_inputs == 1


def test_recompute_counts_distinct_inputs_once(tokenizer):
    t = tokenizer.count
    r = recompute(["alpha beta", "shared"], ["new text", "shared", "new text", "alpha beta", "more"], tokenizer)
    assert r.unique_inputs == 4 and r.recomputed == ((0, t("new text")), (4, t("more")))
    assert r.ratio == pytest.approx((t("new text") + t("more")) / (t("new text") + t("shared") + t("alpha beta") + t("more")))
    assert recompute([], [], tokenizer).ratio == 0.0
