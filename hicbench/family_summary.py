"""Split-point scores as a distribution over document families (leave-family-out reports).

A model is only as good as its worst unseen family, so a pooled F1 over documents (which
large families dominate) is not the number to choose by. Here each family's documents are
pooled into one micro F1 per metric; a row gives, over families, the median with a 95%
bootstrap interval (families resampled), the pooled F1 of all documents for reference, and
the worst five families. A family without headings of a level does not enter that level's
distribution (its F1 would be 0 whatever the model did).
"""

from __future__ import annotations

from collections.abc import Sequence

from hichunk.bench.metrics.splits import SplitCounts
from hichunk.bench.stats import bootstrap_ci

METRICS = (("f1", None), ("f1_l1", 1), ("f1_l2", 2))
WORST = 5


def _has_truth(c: SplitCounts, level: int | None) -> bool:
    return bool(sum(c.gt.values()) if level is None else c.gt[level])


def family_counts(families: Sequence[str], counts: Sequence[SplitCounts]) -> dict[str, SplitCounts]:
    """Counts pooled per family."""
    out: dict[str, SplitCounts] = {}
    for fam, c in zip(families, counts):
        out[fam] = out.get(fam, SplitCounts()) + c
    return dict(sorted(out.items()))


def distribution_row(per_family: dict[str, SplitCounts], boot: int = 1000) -> dict:
    """Median over families (95% CI), pooled F1 and worst families of one selection of one method."""
    row: dict = {"n_families": len(per_family)}
    pooled = sum(per_family.values(), SplitCounts())
    for key, level in METRICS:
        scores = {f: c.f1(level) for f, c in per_family.items() if _has_truth(c, level)}
        values = list(scores.values())
        median, lo, hi = bootstrap_ci(values, n=boot) if values else (float("nan"),) * 3
        row[key + "_median"] = round(median, 4)
        row[key + "_ci"] = [round(lo, 4), round(hi, 4)]
        row[key + "_n"] = len(values)
        row[key + "_pooled"] = round(pooled.f1(level), 4)
        row[key + "_worst"] = [[f, round(v, 4)] for f, v in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]))[:WORST]]
    return row


def family_rows(selections: list[tuple[str, list[int]]], families: Sequence[str],
                results: dict[str, Sequence[SplitCounts]], boot: int = 1000) -> tuple[list[dict], list[dict]]:
    """Distribution rows (one per selection and method) and per-family rows (one per family, selection, method).

    ``selections``: (name, document indexes); ``families``: each document's family;
    ``results``: per method, each document's counts, in the same order.
    """
    rows, fam_rows = [], []
    for name, idx in selections:
        for method, counts in results.items():
            per_family = family_counts([families[i] for i in idx], [counts[i] for i in idx])
            n_docs = len(idx)
            rows.append({"group": name, "method": method, "n_docs": n_docs, **distribution_row(per_family, boot)})
            for fam, c in per_family.items():
                p, r, _ = c.prf()
                fam_rows.append({"group": name, "method": method, "family": fam,
                                 "n_docs": sum(1 for i in idx if families[i] == fam), "headings": sum(c.gt.values()),
                                 "f1": round(c.f1(), 4), "f1_l1": round(c.f1(1), 4), "f1_l2": round(c.f1(2), 4),
                                 "precision": round(p, 4), "recall": round(r, 4)})
    return rows, fam_rows


def format_distribution(rows: list[dict]) -> str:
    """A plain-text table: medians over families [95% CI], pooled F1, and the worst families by F1 w/o level."""
    head = (f"{'group':<28} {'method':<10} {'fam':>3} {'docs':>5}  {'F1 median [95% CI]':<22} {'F1_L1 median':<22} "
            f"{'F1_L2 median':<22} {'pooled F1/L1/L2':<17}  worst (F1 w/o level)")
    lines = [head, "-" * len(head)]
    for r in rows:
        cells = [f"{r[k + '_median']:.3f} [{r[k + '_ci'][0]:.3f}, {r[k + '_ci'][1]:.3f}]" for k, _ in METRICS]
        pooled = "/".join(f"{r[k + '_pooled']:.2f}" for k, _ in METRICS)
        worst = ", ".join(f"{f} {v:.2f}" for f, v in r["f1_worst"])
        lines.append(f"{r['group']:<28} {r['method']:<10} {r['n_families']:>3} {r['n_docs']:>5}  {cells[0]:<22} "
                     f"{cells[1]:<22} {cells[2]:<22} {pooled:<17}  {worst}")
    return "\n".join(lines)
