"""Split-point benchmark: every method on held-out labelled documents of every input kind.

    python -m hichunk.bench.split_eval --corpus CORPUS --labels RENDERED --split test \\
        --methods encoder,numbering,fontsize,previous=OLD_MODEL_DIR
    python -m hichunk.bench.split_eval --labels RENDERED --kinds pdf --methods encoder,fontsize --per-group 30

Documents: the corpus split as Markdown (``--corpus``; group ``markdown-corpus``),
and the labelled renderings and real documents of ``hichunk corpus render``
(``--labels``; groups by kind: ``markdown``, ``text``, ``pdf``, with real documents
apart as ``pdf-real``, ``text-real``), each per language. The paper's protocol:
heading markers are hidden from every method (explicit headings are not used;
PDF outlines never are), and predicted chunks are scored against the true
headings (``hichunk.bench.metrics.splits.count_tree``). Reported per group and
method: F1_L1, F1_L2 and F1 without level with 95% bootstrap intervals over
documents (micro-pooled counts), n, and seconds per document from the file to
the tree (load, parse, sentences, prediction, tree; models loaded once,
beforehand), plus the share of model windows that fell back. Methods are the
benchmark method names of ``hichunk.bench.runners.methods`` (a model name such as
``encoder``, ``numbering``, ``fontsize``, ``rules``, ``hichunk-gen``, or
``LABEL=MODEL_DIR``) and the structure-free chunkers (``fixed``, ``recursive``,
``cdc``, ``semantic``).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from hichunk.bench.metrics.splits import SplitCounts, bootstrap_ci, count_tree
from hichunk.bench.runners.chunk import chunk_all
from hichunk.bench.runners.methods import parse_methods
from hichunk.document import Document, load_document, parse_document
from hichunk.models.train.corpus.truth import Truth, markup_truth, placed_truth

log = logging.getLogger(__name__)

DEFAULT_METHODS = "encoder,numbering,rules,fixed,recursive,cdc"


@dataclass
class Labelled:
    """A benchmark document: where it came from, its group, the loaded document and its ground truth."""

    id: str
    group: str  # input kind, e.g. "text" or "pdf-real"
    lang: str
    doc: Document
    truth: Truth
    load_seconds: float
    words: int


@dataclass
class MethodResult:
    """Per-document counts, seconds and model windows of one method."""

    counts: list[SplitCounts] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    windows: list[int] = field(default_factory=list)
    fallbacks: list[int] = field(default_factory=list)
    failures: int = 0


def count_words(text: str, lang: str) -> int:
    """Words (Chinese: non-space characters)."""
    return sum(1 for c in text if not c.isspace()) if lang == "zh" else len(text.split())


def _timed_load(load) -> tuple[Document, float]:
    t0 = time.perf_counter()
    doc = load()
    return doc, time.perf_counter() - t0


def corpus_documents(corpus_dir: str, split: str) -> list[Labelled]:
    """The corpus split as Markdown documents, the headings their truth."""
    from hichunk.models.train.corpus.corpus import load_split

    out = []
    for cdoc in load_split(corpus_dir, split):
        doc, secs = _timed_load(lambda c=cdoc: parse_document(c.markdown, "markdown", c.id))
        out.append(Labelled(cdoc.id, "markdown-corpus", cdoc.lang, doc, markup_truth(doc), secs,
                            count_words(cdoc.markdown, cdoc.lang)))
    return out


def rendered_documents(labels_dir: str, split: str, kinds: set[str] | None, progress: bool = True) -> list[Labelled]:
    """Labelled renderings and real documents of ``hichunk corpus render`` (failures to load are logged and skipped)."""
    import os

    from tqdm import tqdm

    from hichunk.errors import HichunkError
    from hichunk.models.train.corpus.render import load_labels

    items = [r for r in load_labels(labels_dir) if r["split"] == split and (not kinds or r["kind"] in kinds)]
    out = []
    for r in tqdm(items, desc="loading", unit="doc", disable=not progress, file=sys.stderr):
        try:
            doc, secs = _timed_load(lambda r=r: load_document(os.path.join(labels_dir, r["path"])))
        except HichunkError as exc:
            log.warning("%s: cannot load (%s); left out", r["id"], exc)
            continue
        group = r["kind"] + ("-real" if r.get("real") else "")
        out.append(Labelled(r["id"], group, r["lang"], doc, placed_truth(doc, r["headings"]), secs,
                            count_words(doc.clean, r["lang"])))
    return out


def even_sample(docs: list[Labelled], per_group: int) -> list[Labelled]:
    """``per_group`` documents of each (group, language), evenly spaced through their order."""
    out = []
    for key in sorted({(d.group, d.lang) for d in docs}):
        members = [d for d in docs if (d.group, d.lang) == key]
        step = len(members) / per_group
        picked = sorted({int(k * step) for k in range(per_group)}) if len(members) > per_group else range(len(members))
        out += [members[i] for i in picked]
    return out


def evaluate(docs: list[Labelled], methods: str, progress: bool = True) -> dict[str, MethodResult]:
    """Run every method over ``docs`` (through the benchmarks' one chunking runner) and count."""
    from hichunk.tokens import load_tokenizer

    tokenizer = load_tokenizer()
    by_id = {d.id: d for d in docs}
    out: dict[str, MethodResult] = {}
    for spec in parse_methods(methods):
        chunked = chunk_all({d.id: d.doc for d in docs}, spec, tokenizer, on_error="count", progress=progress)
        res = MethodResult()
        for doc_id in sorted(chunked):
            c, item = chunked[doc_id], by_id[doc_id]
            if c.tree is None:
                res.failures += 1
                res.counts.append(SplitCounts(gt=Counter(item.truth.levels)))  # a failure finds nothing
            else:
                res.counts.append(count_tree(c.tree, item.truth))
            res.seconds.append(item.load_seconds + c.seconds)
            meta = c.tree.meta if c.tree is not None else {}
            res.windows.append(int(meta.get("windows", 0)))
            res.fallbacks.append(int(meta.get("errors", 0)))
        out[spec.label] = res
    return out


def summarise(docs: list[Labelled], results: dict[str, MethodResult], boot: int = 1000) -> list[dict]:
    """One row per (group, language) and method, then per language and method over all groups."""
    ordered = sorted(docs, key=lambda d: d.id)
    keys = sorted({(d.group, d.lang) for d in ordered})
    selections = [(f"{g} [{lang}]", [i for i, d in enumerate(ordered) if (d.group, d.lang) == (g, lang)]) for g, lang in keys]
    rows = []
    for name, idx in selections:
        for method, res in results.items():
            counts = [res.counts[i] for i in idx]
            pooled = sum(counts, SplitCounts())
            row = {"group": name, "method": method, "n_docs": len(idx)}
            for key, level in (("f1_l1", 1), ("f1_l2", 2), ("f1", None)):
                lo, hi = bootstrap_ci(counts, lambda c, level=level: c.f1(level), n=boot)
                row[key] = round(pooled.f1(level), 4)
                row[key + "_ci"] = [round(lo, 4), round(hi, 4)]
            p, r, _ = pooled.prf()
            row["precision"], row["recall"] = round(p, 4), round(r, 4)
            secs = [res.seconds[i] for i in idx]
            row["s_per_doc_median"] = round(statistics.median(secs), 4)
            row["words_median"] = statistics.median(ordered[i].words for i in idx)
            windows = sum(res.windows[i] for i in idx)
            row["fallback_rate"] = round(sum(res.fallbacks[i] for i in idx) / windows, 4) if windows else None
            rows.append(row)
    return rows


def format_rows(rows: list[dict]) -> str:
    """A plain-text table."""
    head = (f"{'group':<26} {'method':<12} {'n':>4}  {'F1_L1 [95% CI]':<22} {'F1_L2 [95% CI]':<22} {'F1 [95% CI]':<22} "
            f"{'s/doc':>7} {'words':>7} {'fallbk%':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        cells = [f"{r[k]:.3f} [{r[k + '_ci'][0]:.3f}, {r[k + '_ci'][1]:.3f}]" for k in ("f1_l1", "f1_l2", "f1")]
        fb = f"{100 * r['fallback_rate']:>7.1f}" if r["fallback_rate"] is not None else f"{'-':>7}"
        lines.append(f"{r['group']:<26} {r['method']:<12} {r['n_docs']:>4}  {cells[0]:<22} {cells[1]:<22} {cells[2]:<22} "
                     f"{r['s_per_doc_median']:>7.3f} {r['words_median']:>7.0f} {fb}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from hichunk.errors import HichunkError

    ap = argparse.ArgumentParser(prog="python -m hichunk.bench.split_eval", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", metavar="DIR", help="a built corpus (hichunk corpus build): its split as Markdown")
    ap.add_argument("--labels", metavar="DIR", help="labelled documents (hichunk corpus render)")
    ap.add_argument("--split", default="test", choices=("train", "dev", "test"))
    ap.add_argument("--kinds", help="comma-separated kinds of --labels to use (markdown, text, pdf; default: all)")
    ap.add_argument("--methods", default=DEFAULT_METHODS, help=f"comma-separated methods (default: {DEFAULT_METHODS})")
    ap.add_argument("--per-group", type=int, metavar="N", help="an even sample of N documents per group and language")
    ap.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the intervals (default: 1000)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows and document ids here")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    if not args.corpus and not args.labels:
        ap.error("give --corpus and/or --labels")
    if args.per_group is not None and args.per_group < 1:
        ap.error("--per-group must be at least 1")
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(message)s")
    try:
        import torch

        torch.set_num_threads(1)
        docs = corpus_documents(args.corpus, args.split) if args.corpus else []
        if args.labels:
            kinds = set(args.kinds.split(",")) if args.kinds else None
            docs += rendered_documents(args.labels, args.split, kinds, progress=not args.quiet)
        if args.per_group:
            docs = even_sample(docs, args.per_group)
        if not docs:
            raise HichunkError("no documents to score")
        results = evaluate(docs, args.methods, progress=not args.quiet)
    except HichunkError as exc:
        print(f"split_eval: error: {exc}", file=sys.stderr)
        return 2
    rows = summarise(docs, results, args.bootstrap)
    print(format_rows(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"corpus": args.corpus, "labels": args.labels, "split": args.split, "methods": args.methods,
                       "docs": sorted(d.id for d in docs), "rows": rows}, fh, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
