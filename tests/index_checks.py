"""Shared by the Ray tests: a folder of documents to index, and what "the same index" means."""

from __future__ import annotations

import numpy as np
from test_index import DOCS, write_docs

from hichunk.retrieval.index import Index
from hichunk.tree import to_dict

MORE = {f"extra{i}.md": f"# Extra {i}\n\nLine about topic {i}. It has words.\n\n## Part\n\nMore words on {i} and kites.\n"
        for i in range(5)}
CHANGED = {"solar.md": DOCS["solar.md"].replace("twice a year", "every spring and every autumn"),
           "new.md": "# New\n\nA brand new document about kites. Kites fly in steady wind.\n"}


def make_corpus(tmp_path, monkeypatch):
    """A folder ``docs`` of documents to index, with the working directory beside it."""
    monkeypatch.chdir(tmp_path)
    write_docs("docs", {**DOCS, **MORE})
    return tmp_path


def assert_same_index(a: Index, b: Index) -> None:
    """Same documents, sources, trees, leaves and vectors (up to float tolerance)."""
    assert sorted(a.docs) == sorted(b.docs)
    for doc in a.docs:
        assert {k: a.docs[doc][k] for k in ("source", "sha256", "leaves")} == \
               {k: b.docs[doc][k] for k in ("source", "sha256", "leaves")}
        assert to_dict(a.tree(doc)) == to_dict(b.tree(doc))
    (va, da, na, names_a), (vb, db, nb, names_b) = a.pool(), b.pool()
    assert names_a == names_b and np.array_equal(da, db) and np.array_equal(na, nb)
    assert np.allclose(va, vb, atol=1e-6)
