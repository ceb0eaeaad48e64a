"""``hichunk bench chunking``: split-point P/R/F1 per level and without level, per method.

Every document is chunked by every method (headings are hidden from every
method except ``structure``, which reads them and so is an oracle). Scores are
pooled over documents (micro) as in HiCBench; 95% intervals and paired
differences resample documents.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from hichunk.bench.data.hicbench_format import Dataset
from hichunk.bench.metrics.splitpoints import count_splits, pooled, scores
from hichunk.bench.metrics.splits import SplitCounts, prf
from hichunk.bench.report import fmt_diff, fmt_estimate, header, table, write_report
from hichunk.bench.runinfo import run_info
from hichunk.bench.runners.chunk import TreeCache, chunk_all, tree_meta
from hichunk.bench.runners.methods import MethodSpec
from hichunk.bench.stats import paired_statistic_diff_ci, statistic_ci
from hichunk.tokens import Tokenizer


@dataclass
class MethodCounts:
    spec: MethodSpec
    doc_ids: list[str]
    counts: list[SplitCounts]
    seconds: list[float]
    n_chunks: list[int]
    errors: dict[str, str]
    meta: dict


def _pooled_f1(counts: list[SplitCounts], key: str):
    """F1 of ``key`` ("L<k>" or "no_level") pooled over any resample of the documents (as indexes)."""
    if key == "no_level":
        cols = [(c.hit_no_level, sum(c.pred.values()), sum(c.gt.values())) for c in counts]
    else:
        k = int(key[1:])
        cols = [(c.hit[k], c.pred[k], c.gt[k]) for c in counts]
    m = np.asarray(cols, dtype=float).reshape(len(counts), 3)

    def stat(idx: np.ndarray) -> float:
        hit, pred, gt = m[idx].sum(axis=0)
        return prf(hit, pred, gt)[2]

    return stat


def run_chunking(dataset: Dataset, specs: list[MethodSpec], tokenizer: Tokenizer, on_error: str = "fail",
                 progress: bool = True, cache: TreeCache | None = None) -> list[MethodCounts]:
    docs = {doc_id: d.parse() for doc_id, d in dataset.docs.items()}
    out = []
    for spec in specs:
        chunked = chunk_all(docs, spec, tokenizer, on_error, progress, cache)
        ids = sorted(chunked)
        counts, n_chunks = [], []
        for doc_id in ids:
            tree = chunked[doc_id].tree
            splits = list(tree.split_texts()) if tree is not None else []  # a failure predicts nothing
            counts.append(count_splits(dataset.docs[doc_id].text, splits))
            n_chunks.append(len(splits))
        out.append(MethodCounts(spec, ids, counts, [chunked[i].seconds for i in ids], n_chunks,
                                {i: c.error for i, c in chunked.items() if c.error}, tree_meta(chunked)))
    return out


def chunking_report(dataset: Dataset, results: list[MethodCounts], out_dir: str, argv: list[str] | None = None,
                    max_levels: int = 3) -> tuple[str, str]:
    """Write report.md and results.json for a chunking run."""
    models = {r.spec.label: r.meta for r in results}
    info = run_info(dataset, models, argv)
    gt_levels = sorted({lvl for r in results for c in r.counts for lvl in c.gt})
    levels = [lvl for lvl in gt_levels if lvl <= max_levels] or [1]
    keys = [f"L{k}" for k in levels] + ["no_level"]
    n_docs = len(results[0].doc_ids) if results else 0

    rows, summary = [], {}
    for r in results:
        total = pooled(r.counts)
        sc = scores(total, levels)
        cis = {k: statistic_ci(len(r.counts), _pooled_f1(r.counts, k)) for k in keys}
        summary[r.spec.label] = {"pooled_counts": total.to_dict(), "scores": sc,
                                 "f1_ci": {k: v.to_dict() for k, v in cis.items()},
                                 "seconds_median": statistics.median(r.seconds) if r.seconds else None,
                                 "failures": len(r.errors)}
        row = [r.spec.label]
        for k in keys:
            row += [f"{100 * sc[k]['precision']:.2f}", f"{100 * sc[k]['recall']:.2f}", fmt_estimate(cis[k])]
        row += [f"{statistics.median(r.seconds):.3f}" if r.seconds else "n/a",
                f"{sum(r.n_chunks) / max(len(r.n_chunks), 1):.1f}", len(r.errors)]
        rows.append(row)
    columns = ["method"]
    for k in keys:
        name = "no level" if k == "no_level" else k
        columns += [f"P {name}", f"R {name}", f"F1 {name} [95% CI]"]
    columns += ["s/doc (median)", "chunks/doc", "failed docs"]

    text = header("Chunking benchmark: split-point accuracy", info)
    gt_total = sum(sum(c.gt.values()) for c in results[0].counts) if results else 0
    text += (f"\n{n_docs} documents, {gt_total} ground-truth split points (heading lines). Scores are micro "
             "(pooled over documents), in percent; intervals: percentile bootstrap over documents (2000 resamples, "
             "seed 0). Methods other than `structure` never see the heading marks; `structure` reads them, so it is "
             "an oracle, not a competitor. A failed document counts as predicting nothing.\n\n")
    text += table(columns, rows) + "\n"
    if len(results) > 1:
        base = results[0]
        diff_rows = []
        for r in results[1:]:
            row = [f"{r.spec.label} - {base.spec.label}"]
            for k in keys:
                row.append(fmt_diff(paired_statistic_diff_ci(n_docs, _pooled_f1(r.counts, k), _pooled_f1(base.counts, k))))
            diff_rows.append(row)
        text += ("\n## Paired differences in F1 (percentage points, same documents; * = interval excludes 0)\n\n"
                 + table(["comparison"] + [f"F1 {'no level' if k == 'no_level' else k}" for k in keys], diff_rows) + "\n")
    per_item = [{"method": r.spec.label, "doc_id": d, "counts": c.to_dict(), "chunks": n, "seconds": s,
                 "error": r.errors.get(d)}
                for r in results for d, c, n, s in zip(r.doc_ids, r.counts, r.n_chunks, r.seconds)]
    return write_report(out_dir, text, {"kind": "chunking", "run": info, "levels": levels, "summary": summary,
                                        "items": per_item})
