"""Split-point benchmark: the split-point models beside structure-free baselines, on a built corpus.

    python -m hichunk.bench.split_eval --corpus CORPUS --split test
    python -m hichunk.bench.split_eval --corpus CORPUS_DENUMBERED --split test
    python -m hichunk.bench.split_eval --corpus CORPUS --methods encoder hichunk-gen --per-lang 30

The paper's protocol: heading markers are hidden from every method (they must
infer structure from content), and the predicted chunks are scored against the
document's headings (``hichunk.bench.metrics.splits``). Reported per corpus, per
language and overall: F1_L1, F1_L2 and F1 without level with 95% bootstrap
intervals over documents, and end-to-end seconds per document and per 10k
words (parse, sentences, features, prediction, tree; models loaded once,
before timing). Chinese "words" are counted as non-space characters.
Model methods also report the share of windows whose answer could not be
parsed or failed validation (the engine then falls back to one level-1 start).
Any registered model name (``hichunk.models.registry.MODELS``) or adapter folder
is a method; ``--per-lang N`` scores an even sample of N documents per
language (the same documents for every method) when a slow model cannot
run the whole split.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from dataclasses import dataclass, field

from hichunk.bench.data.corpus import CorpusDoc, load_split
from hichunk.bench.metrics.splits import SplitCounts, bootstrap_ci, count_splits
from hichunk.document import Document, parse_document
from hichunk.engine.loop import INVALID, PARSE_ERROR
from hichunk.tree.model import ChunkTree

log = logging.getLogger(__name__)

MODEL_METHODS = ("encoder", "rules")
BASELINES = ("fixed", "recursive", "cdc", "semantic")


@dataclass
class MethodResult:
    """Per-document counts, seconds and sizes of one method on one set of documents."""

    counts: list[SplitCounts] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    words: list[int] = field(default_factory=list)
    groups: list[tuple[str, str]] = field(default_factory=list)  # (corpus, lang) per document
    windows: list[int] = field(default_factory=list)  # model methods: windows per document
    parse_errors: list[int] = field(default_factory=list)  # ... of them with an unreadable answer
    invalid: list[int] = field(default_factory=list)  # ... of them with starts that failed validation


def doc_words(cdoc: CorpusDoc) -> int:
    """Words of a corpus document (Chinese: non-space characters)."""
    return cdoc.n_chars if cdoc.lang == "zh" else cdoc.n_words


def score_tree(doc: Document, tree: ChunkTree) -> SplitCounts:
    """Split counts of a chunk tree against the document's headings.

    A chunk's first line is the line holding its first non-space character.
    """
    heading_at = {doc.lines[i].clean_start: level for i, level in doc.headings}
    chunks = []
    for split in tree.splits:
        pos = split.clean_start
        while pos < len(doc.clean) and doc.clean[pos].isspace():
            pos += 1
        chunks.append((heading_at.get(pos), split.level))
    return count_splits([level for _, level in doc.headings], chunks)


class ModelChunker:
    """A split-point model run through the engine over a document's sentences, heading markers hidden.

    ``statuses`` holds the engine's verdict on every window of the last
    chunked document (``ok``, ``parse_error`` or ``invalid``).
    """

    def __init__(self, model, name: str, tokenizer=None):
        from hichunk.chunkers import ChunkOptions
        from hichunk.chunkers.hichunk import HichunkChunker
        from hichunk.tokens import load_tokenizer

        self.model = model
        self.name = name
        self.statuses: list[str] = []
        self._chunker = HichunkChunker(ChunkOptions(hints="ignore", merge_over_chunk=False, tokenizer=tokenizer or load_tokenizer()), model=model,
                                       on_window=lambda _doc, record: self.statuses.append(record.status))

    def chunk(self, doc: Document) -> ChunkTree:
        self.statuses = []
        return self._chunker.chunk(doc)


def make_chunker(method: str, model_dir: str | None, window: int | None = None):
    """The chunker for a benchmark method name (None when it is not available here)."""
    from hichunk.chunkers import METHODS, ChunkOptions
    from hichunk.retrieval.chunking import get_chunker

    if method == "encoder":
        from hichunk.models.encoder import load_encoder

        model = load_encoder(model_dir)
        model.window_tokens = window or model.window_tokens
        return ModelChunker(model, "encoder")
    if method == "rules":
        from hichunk.models.rules import HeadingRules

        return ModelChunker(HeadingRules(), "rules")
    from hichunk.models.adapter import is_adapter_dir
    from hichunk.models.registry import MODELS, load_model

    if method in MODELS or is_adapter_dir(method):
        return ModelChunker(load_model(method), method)
    if method not in METHODS:
        return None
    return get_chunker(method, ChunkOptions(hints="ignore", merge_over_chunk=False))  # score every split point


def even_sample(docs: list[CorpusDoc], per_lang: int) -> list[CorpusDoc]:
    """``per_lang`` documents of each language, evenly spaced through the split's order (all of a smaller language)."""
    out = []
    for lang in sorted({d.lang for d in docs}):
        members = [d for d in docs if d.lang == lang]
        step = len(members) / per_lang
        picked = sorted({int(k * step) for k in range(per_lang)}) if len(members) > per_lang else range(len(members))
        out += [members[i] for i in picked]
    return out


def evaluate(docs: list[CorpusDoc], methods: list[str], model_dir: str | None, window: int | None = None,
             progress: bool = True) -> dict[str, MethodResult]:
    """Run every available method over ``docs``."""
    from tqdm import tqdm

    out: dict[str, MethodResult] = {}
    for method in methods:
        chunker = make_chunker(method, model_dir, window)
        if chunker is None:
            log.warning("method %s is not available here; skipped", method)
            continue
        res = MethodResult()
        if docs:  # warm up (lazy loads: Punkt parameters, tokenizer) outside the timings, on the shortest document
            warm = min(docs, key=lambda d: len(d.markdown))
            chunker.chunk(parse_document(warm.markdown, "markdown", warm.id))
        for cdoc in tqdm(docs, desc=method, unit="doc", disable=not progress, file=sys.stderr):
            t0 = time.perf_counter()
            doc = parse_document(cdoc.markdown, "markdown", cdoc.id)
            tree = chunker.chunk(doc)
            res.seconds.append(time.perf_counter() - t0)
            res.counts.append(score_tree(doc, tree))
            res.words.append(doc_words(cdoc))
            res.groups.append((cdoc.corpus, cdoc.lang))
            if isinstance(chunker, ModelChunker):
                res.windows.append(len(chunker.statuses))
                res.parse_errors.append(chunker.statuses.count(PARSE_ERROR))
                res.invalid.append(chunker.statuses.count(INVALID))
        out[method] = res
    return out


def summarise(results: dict[str, MethodResult], boot: int = 1000) -> list[dict]:
    """Rows of the report: per group (corpus, language, all) and method."""
    rows = []
    first = next(iter(results.values()), None)
    if first is None:
        return rows
    keys = sorted(set(first.groups))
    groups = [(f"{c} [{lang}]", lambda g, c=c, lang=lang: g == (c, lang)) for c, lang in keys]
    groups += [(f"all [{lang}]", lambda g, lang=lang: g[1] == lang) for lang in sorted({lang for _, lang in keys})]
    groups.append(("all", lambda g: True))
    for gname, member in groups:
        for method, res in results.items():
            idx = [i for i, g in enumerate(res.groups) if member(g)]
            if not idx:
                continue
            counts = [res.counts[i] for i in idx]
            pooled = sum(counts, SplitCounts())
            row = {"group": gname, "method": method, "n_docs": len(idx)}
            for key, level in (("f1_l1", 1), ("f1_l2", 2), ("f1", None)):
                lo, hi = bootstrap_ci(counts, lambda c, level=level: c.f1(level), n=boot)
                row[key] = round(pooled.f1(level), 4)
                row[key + "_ci"] = [round(lo, 4), round(hi, 4)]
            p, r, _ = pooled.prf()
            row["precision"], row["recall"] = round(p, 4), round(r, 4)
            secs = [res.seconds[i] for i in idx]
            words = sum(res.words[i] for i in idx)
            row["s_per_doc_median"] = round(statistics.median(secs), 4)
            row["s_per_doc_mean"] = round(sum(secs) / len(secs), 4)
            row["s_per_10k_words"] = round(sum(secs) / max(words, 1) * 10000, 4)
            if res.windows:
                n_windows = sum(res.windows[i] for i in idx)
                row["windows"] = n_windows
                row["parse_error_rate"] = round(sum(res.parse_errors[i] for i in idx) / max(n_windows, 1), 4)
                row["invalid_rate"] = round(sum(res.invalid[i] for i in idx) / max(n_windows, 1), 4)
            rows.append(row)
    return rows


def format_rows(rows: list[dict]) -> str:
    """A plain-text table."""
    head = (f"{'group':<32} {'method':<11} {'n':>4}  {'F1_L1 [95% CI]':<22} {'F1_L2 [95% CI]':<22} {'F1 [95% CI]':<22} "
            f"{'s/doc':>7} {'s/10kw':>7} {'windows':>7} {'parse%':>6} {'inval%':>6}")
    lines = [head, "-" * len(head)]
    for r in rows:
        cells = [f"{r[k]:.3f} [{r[k + '_ci'][0]:.3f}, {r[k + '_ci'][1]:.3f}]" for k in ("f1_l1", "f1_l2", "f1")]
        errors = (f"{r['windows']:>7} {100 * r['parse_error_rate']:>6.1f} {100 * r['invalid_rate']:>6.1f}"
                  if "windows" in r else f"{'-':>7} {'-':>6} {'-':>6}")
        lines.append(f"{r['group']:<32} {r['method']:<11} {r['n_docs']:>4}  {cells[0]:<22} {cells[1]:<22} {cells[2]:<22} "
                     f"{r['s_per_doc_median']:>7.3f} {r['s_per_10k_words']:>7.3f} {errors}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from hichunk.errors import HichunkError

    ap = argparse.ArgumentParser(prog="python -m hichunk.bench.split_eval", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="a built corpus folder (hichunk corpus build / denumber)")
    ap.add_argument("--split", default="test", choices=("train", "dev", "test"))
    ap.add_argument("--methods", nargs="+", default=[*MODEL_METHODS, *BASELINES],
                    help="methods to run (default: encoder, rules and every structure-free baseline available); "
                    "also any registered model name (e.g. hichunk-gen) or adapter folder")
    ap.add_argument("--model", help="encoder model folder (default: the shipped weights)")
    ap.add_argument("--window", type=int, help="encoder window in lines (default: the model's own)")
    ap.add_argument("--limit", type=int, help="only the first N documents (quick checks)")
    ap.add_argument("--per-lang", type=int, metavar="N",
                    help="an even sample of N documents per language, the same for every method (slow models)")
    ap.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the intervals")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    if args.per_lang is not None and args.per_lang < 1:
        ap.error("--per-lang must be at least 1")
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(message)s")
    try:
        import torch

        torch.set_num_threads(1)
        docs = list(load_split(args.corpus, args.split))[: args.limit]
        if args.per_lang:
            docs = even_sample(docs, args.per_lang)
        results = evaluate(docs, args.methods, args.model, args.window, progress=not args.quiet)
    except HichunkError as exc:
        print(f"split_eval: error: {exc}", file=sys.stderr)
        return 2
    rows = summarise(results, args.bootstrap)
    print(format_rows(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"corpus": args.corpus, "split": args.split, "per_lang": args.per_lang,
                       "docs": [d.id for d in docs], "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
