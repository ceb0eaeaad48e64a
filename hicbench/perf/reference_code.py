"""Run the published HiChunk code's Auto-Merge side by side with ours (benchmarks only).

The reference ``retrieval_algo.py`` is read from a fetched snapshot of
github.com/TencentYoutuResearch/HiChunk at run time (never copied into this
project). Our trees are converted into its leaf-dict structure, and our
tokenizer is wrapped so that its ``encode``/``decode`` count and cut exactly
as ours do (tokens are the text pieces between token starts).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import types

from hichunk.errors import HichunkError
from hichunk.retrieval.search.view import TreeView
from hichunk.tokens import Tokenizer


def load_reference_algo(snapshot: str) -> types.ModuleType:
    """Import ``retrieval_algo.py`` from a bare git snapshot (or a checkout) of the reference repository."""
    if os.path.isfile(os.path.join(snapshot, "retrieval_algo.py")):
        path = os.path.join(snapshot, "retrieval_algo.py")
    else:
        try:
            source = subprocess.run(["git", f"--git-dir={snapshot}", "show", "HEAD:retrieval_algo.py"],
                                    check=True, capture_output=True).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            raise HichunkError(f"cannot read retrieval_algo.py from {snapshot}: {exc}") from exc
        path = os.path.join(tempfile.mkdtemp(prefix="hichunk-ref-"), "retrieval_algo.py")
        with open(path, "wb") as fh:
            fh.write(source)
    # its metrics import pulls jieba/rouge; Auto-Merge does not use them
    sys.modules.setdefault("metrics", types.SimpleNamespace(cal_evidence_recall=None))
    spec = importlib.util.spec_from_file_location("hichunk_reference_retrieval_algo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class PieceTokenizer:
    """Our tokenizer behind the reference's ``encode``/``decode``: tokens are text pieces, decode joins them."""

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer

    def encode(self, text: str) -> list[str]:
        starts = [int(s) for s in self.tokenizer.starts(text)]
        if not starts:
            return []
        starts[0] = 0
        return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]

    def decode(self, pieces: list[str], skip_special_tokens: bool = True) -> str:
        return "".join(pieces)


def to_reference_leaves(view: TreeView) -> list[dict]:
    """Our tree as the reference's linked node dicts; returns the leaf dicts in document order.

    Keys are created in the reference's order so its ``==`` comparisons cost
    what they cost there. Leaf ids are ``{doc}_{k}``.
    """
    tree = view.tree
    dicts: list[dict] = []
    for node in tree.nodes:
        lo, hi = view.lo[node.id], view.hi[node.id]
        text = view.texts[lo] if node.is_leaf else "\n".join(view.texts[lo:hi])
        dicts.append({"text": text, "title": "", "id": f"{view.doc}_{lo}" if node.is_leaf else "",
                      "left_index_idx": lo, "right_index_idx": hi, "children": [], "parent": None})
    for node in tree.nodes:
        dicts[node.id]["children"] = [dicts[c] for c in node.children]
        dicts[node.id]["parent"] = dicts[node.parent] if node.parent is not None else None
    return [dicts[i] for i in view.leaf_ids]
