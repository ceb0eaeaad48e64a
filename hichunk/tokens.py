"""Token counting and token spans behind one small interface.

Leaf sizes, fixed-size chunks, model windows and retrieval budgets are all
measured in tokens. The offline default is Bling Fire's XLM-RoBERTa model (the
vocabulary of BGE-M3), which ships inside the ``blingfire`` wheel and handles
Chinese and English alike. Any Hugging Face tokenizer directory or hub id can be
used instead (``load_tokenizer(path)``).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np

DEFAULT_TOKENIZER = "blingfire:xlm_roberta_base"

# Bling Fire needs an output buffer size; texts are fed in pieces of at most
# this many bytes (cut at a newline or space) so huge inputs stay bounded.
_PIECE_BYTES = 1 << 16


@runtime_checkable
class Tokenizer(Protocol):
    """What the toolkit needs from a tokenizer."""

    name: str

    def count(self, text: str) -> int:
        """Number of tokens in ``text`` (no special tokens)."""
        ...

    def encode(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and the char offset where each token begins (both int64, in order).

        A start may point at whitespace that the token absorbed; pass chosen
        cuts through ``cut_after_space`` so no chunk starts with a space.
        """
        ...

    def starts(self, text: str) -> np.ndarray:
        """Char offsets where tokens begin (``encode(text)[1]``)."""
        ...


def _byte_to_char(data: bytes) -> np.ndarray:
    """Array mapping each byte offset (and the end) of UTF-8 ``data`` to a char offset."""
    arr = np.frombuffer(data, dtype=np.uint8)
    is_start = (arr & 0xC0) != 0x80
    out = np.empty(len(arr) + 1, dtype=np.int64)
    out[:-1] = np.cumsum(is_start) - 1
    out[-1] = int(is_start.sum())
    return out


def _pieces(text: str, limit_chars: int):
    """Yield (offset, piece) covering ``text``, cut after newlines or spaces when possible."""
    start, n = 0, len(text)
    while start < n:
        end = min(n, start + limit_chars)
        if end < n:
            cut = text.rfind("\n", start, end)
            if cut <= start:
                cut = text.rfind(" ", start, end)
            if cut > start:
                end = cut + 1
        yield start, text[start:end]
        start = end


class BlingFireTokenizer:
    """Offline tokenizer from the ``blingfire`` wheel (default: XLM-RoBERTa / BGE-M3 vocabulary).

    Its SentencePiece models split on whitespace before segmenting, so a word's tokens do not depend on
    its neighbours (``whitespace_split``; ``hichunk.token_table`` derives span counts from it). A text of
    up to ``piece_chars`` characters is tokenised in one piece; a longer one is cut after a newline or a
    space, or inside a word where neither comes near, so ``hichunk.token_table`` builds a text's tokens
    from its words' cached tokens only where the text is taken whole.
    """

    whitespace_split = True
    piece_chars = _PIECE_BYTES // 4

    def __init__(self, model: str = "xlm_roberta_base"):
        import blingfire

        path = os.path.join(os.path.dirname(blingfire.__file__), f"{model}.bin")
        if not os.path.exists(path):
            raise ValueError(f"blingfire has no tokenizer model named {model!r}")
        self._bf = blingfire
        self._handle = blingfire.load_model(path)
        self.name = f"blingfire:{model}"

    def count(self, text: str) -> int:
        total = 0
        for _, piece in _pieces(text, self.piece_chars):
            if piece.strip():
                data = piece.encode("utf-8", "surrogatepass")
                total += len(self._bf.text_to_ids(self._handle, piece, len(data) + 16, 0, True))
        return total

    def encode(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        ids, starts = [], []
        for offset, piece in _pieces(text, self.piece_chars):
            if not piece.strip():
                continue
            data = piece.encode("utf-8", "surrogatepass")
            piece_ids, byte_starts, _ = self._bf.utf8text_to_ids_with_offsets(self._handle, data, len(data) + 16, 0, True)
            ids.append(piece_ids.astype(np.int64))
            starts.append(_byte_to_char(data)[np.clip(byte_starts, 0, len(data))] + offset)
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(ids), np.concatenate(starts)

    def starts(self, text: str) -> np.ndarray:
        return self.encode(text)[1]


class HFTokenizer:
    """Any Hugging Face (fast) tokenizer from a local directory or hub id."""

    def __init__(self, name_or_path: str):
        from transformers import AutoTokenizer

        self._tok = AutoTokenizer.from_pretrained(name_or_path, use_fast=True)
        self.name = f"hf:{name_or_path}"

    def count(self, text: str) -> int:
        return sum(len(self._tok(piece, add_special_tokens=False)["input_ids"]) for _, piece in _pieces(text, _PIECE_BYTES))

    def encode(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        ids, starts = [], []
        for offset, piece in _pieces(text, _PIECE_BYTES):
            enc = self._tok(piece, add_special_tokens=False, return_offsets_mapping=True)
            for token, (s, e) in zip(enc["input_ids"], enc["offset_mapping"]):
                if e > s and (not starts or offset + s > starts[-1]):
                    ids.append(token)
                    starts.append(offset + s)
        return np.asarray(ids, dtype=np.int64), np.asarray(starts, dtype=np.int64)

    def starts(self, text: str) -> np.ndarray:
        return self.encode(text)[1]


class TiktokenTokenizer:
    """OpenAI's ``tiktoken`` encodings (``cl100k_base``, ``o200k_base``, ...), for embedders that count with them.

    tiktoken reads its encoding file from ``TIKTOKEN_CACHE_DIR`` (or its own cache) and downloads it once
    when missing, which fails offline with a one-line error. Byte-level BPE merges across spaces, so span
    counts are counted directly (no ``whitespace_split``); offsets come from each token's byte length.
    """

    whitespace_split = False

    def __init__(self, encoding: str):
        from hichunk.extras import require_extra

        require_extra("tiktoken", what="a tiktoken tokenizer")
        import tiktoken

        try:
            self._enc = tiktoken.get_encoding(encoding)
        except Exception as exc:  # unknown name, or no local file and no network
            raise ValueError(f"tiktoken cannot load {encoding!r} ({exc.__class__.__name__}; it reads "
                             "TIKTOKEN_CACHE_DIR, else downloads the file once)") from None
        self.name = f"tiktoken:{encoding}"
        self._byte_lengths: np.ndarray | None = None

    @staticmethod
    def _valid(text: str) -> str:
        """Lone surrogates (undecodable input kept by hichunk) as U+FFFD: one char for one, offsets unchanged."""
        return text if text.isascii() else _SURROGATE.sub("\ufffd", text)

    def _lengths(self) -> np.ndarray:
        if self._byte_lengths is None:
            lengths = np.zeros(self._enc.n_vocab, dtype=np.int64)
            for i in range(self._enc.n_vocab):
                try:
                    lengths[i] = len(self._enc.decode_single_token_bytes(i))
                except KeyError:  # ids the encoding leaves unused
                    pass
            self._byte_lengths = lengths
        return self._byte_lengths

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(self._valid(text)))

    def encode(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        text = self._valid(text)
        ids = np.asarray(self._enc.encode_ordinary(text), dtype=np.int64)
        if not len(ids):
            return ids, np.zeros(0, dtype=np.int64)
        byte_starts = np.concatenate(([0], np.cumsum(self._lengths()[ids])[:-1]))
        return ids, _byte_to_char(text.encode("utf-8"))[byte_starts]

    def starts(self, text: str) -> np.ndarray:
        return self.encode(text)[1]


_SURROGATE = re.compile("[\ud800-\udfff]")


def cut_after_space(text: str, pos: int, limit: int | None = None) -> int:
    """Move a cut position forward past whitespace (not beyond ``limit``)."""
    limit = len(text) if limit is None else limit
    while pos < limit and text[pos].isspace():
        pos += 1
    return pos


def load_tokenizer(name: str | None = None) -> Tokenizer:
    """Tokenizer by name: ``blingfire:<model>`` (offline), ``tiktoken:<encoding>``, or an HF directory / hub id. Cached.

    A name that cannot be loaded raises ``HichunkError`` with a one-line reason.
    """
    from hichunk.errors import HichunkError

    try:
        return _load_tokenizer(name or DEFAULT_TOKENIZER)
    except (OSError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise HichunkError(f"cannot load the tokenizer {name!r}: {reason}") from None


@lru_cache(maxsize=8)
def _load_tokenizer(name: str) -> Tokenizer:
    if name.startswith("blingfire:"):
        return BlingFireTokenizer(name.split(":", 1)[1])
    if name.startswith("tiktoken:"):
        return TiktokenTokenizer(name.split(":", 1)[1])
    return HFTokenizer(name[3:] if name.startswith("hf:") else name)
