"""Method names of the benchmarks and the chunker settings they stand for.

=================  ==========================================================
name               meaning
=================  ==========================================================
``C<N>``           fixed-size chunks of at most N tokens, sentence-aligned (an
                   over-long sentence is cut): the reference code's FC200, made
                   as ``structure`` with headings hidden, i.e. one chunk cut
                   into leaves. ``fixed:N`` gives plain token windows that cut
                   sentences anywhere
``SC``             ``semantic`` chunker
``HC<N>``          ``hichunk`` (the split-point model), leaves of N tokens,
                   ``merge_over_chunk``, headings hidden from the model
``HC<N>-oracle``   ``structure`` chunker on the document's own headings, leaves
                   of N tokens, ``merge_over_chunk``: an upper bound for HC
any registry name  that chunker (``hichunk.chunkers.METHODS``), ``name:N`` for
                   a size; ``structure`` reads headings, the others do not
a model name       ``hichunk`` with that split-point model (a registered one,
                   ``hichunk.models.registry.MODELS``: ``encoder``, ``rules``,
                   ``numbering``, ``fontsize``...), headings hidden, every split
                   point kept (no ``merge_over_chunk``): for split-point scoring
``LABEL=MODEL``    ``LABEL`` as above, predicted by MODEL (a registered name or
                   a model folder): ``previous=DIR``, ``HC200=DIR``
``...+AM``         the same chunks, retrieved with Auto-Merge
=================  ==========================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hichunk.chunkers import METHODS, ChunkOptions
from hichunk.chunkers.base import Chunker
from hichunk.errors import HichunkError
from hichunk.retrieval.chunking import get_chunker
from hichunk.tokens import Tokenizer

DEFAULT_LEAF_TOKENS = 200
_SIZED = re.compile(r"^(C|HC)(\d+)(-oracle)?$")


@dataclass(frozen=True)
class MethodSpec:
    label: str  # as written by the user
    chunker: str  # registry name
    leaf_tokens: int
    merge_over_chunk: bool
    hints: str
    auto_merge: bool = False
    model: str | None = None  # split-point model of the hichunk chunker (None: the default)

    @property
    def chunking_key(self) -> tuple:
        """Methods with equal keys produce the same trees (``HC200`` and ``HC200+AM``)."""
        return (self.chunker, self.leaf_tokens, self.merge_over_chunk, self.hints, self.model)

    def options(self, tokenizer: Tokenizer) -> ChunkOptions:
        return ChunkOptions(leaf_tokens=self.leaf_tokens, merge_over_chunk=self.merge_over_chunk, hints=self.hints,
                            tokenizer=tokenizer)

    def chunker_for(self, tokenizer: Tokenizer) -> Chunker:
        if self.chunker not in METHODS:
            raise HichunkError(f"method {self.label!r} needs the chunker {self.chunker!r}, which this installation "
                               f"does not have (available: {', '.join(METHODS)})")
        extra = {}
        if self.model is not None:
            from hichunk.models.registry import load_model

            extra["model"] = load_model(self.model)
        return get_chunker(self.chunker, self.options(tokenizer), **extra)


def parse_method(label: str, leaf_tokens: int = DEFAULT_LEAF_TOKENS) -> MethodSpec:
    """The spec of one method name (see the module docstring)."""
    from dataclasses import replace

    from hichunk.models.registry import MODELS

    name, _, model = label.strip().partition("=")
    if model:
        spec = parse_method(name if name.startswith("HC") else "encoder", leaf_tokens)
        if spec.chunker != "hichunk":
            raise HichunkError(f"{label!r}: only model-based methods take a model")
        return replace(spec, label=name, model=model)
    if name in MODELS and name not in METHODS:
        return MethodSpec(name, "hichunk", leaf_tokens, False, "ignore", model=name)
    auto_merge = name.endswith("+AM")
    base = name[: -len("+AM")] if auto_merge else name
    m = _SIZED.match(base)
    if m:
        kind, size, oracle = m.group(1), int(m.group(2)), bool(m.group(3))
        if kind == "C":
            if oracle:
                raise HichunkError(f"{label!r}: only HC methods have an oracle variant")
            return MethodSpec(name, "structure", size, False, "ignore", auto_merge)
        if oracle:
            return MethodSpec(name, "structure", size, True, "use", auto_merge)
        return MethodSpec(name, "hichunk", size, True, "ignore", auto_merge)
    if base == "SC":
        return MethodSpec(name, "semantic", leaf_tokens, False, "ignore", auto_merge)
    chunker, _, size = base.partition(":")
    if not chunker or (size and not size.isdecimal()):
        raise HichunkError(f"unknown method {label!r}")
    hints = "use" if chunker == "structure" else "ignore"
    return MethodSpec(name, chunker, int(size) if size else leaf_tokens, False, hints, auto_merge)


def parse_methods(text: str, leaf_tokens: int = DEFAULT_LEAF_TOKENS) -> list[MethodSpec]:
    """Comma-separated method names, each once."""
    specs = [parse_method(part, leaf_tokens) for part in text.split(",") if part.strip()]
    if not specs:
        raise HichunkError("no methods given")
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise HichunkError(f"a method is named twice in {text!r}")
    return specs
