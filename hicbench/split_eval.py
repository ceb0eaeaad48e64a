"""Split-point benchmark: every method on held-out labelled documents of every input kind.

    python -m hichunk.bench.split_eval --corpus CORPUS --labels RENDERED --split test \\
        --methods encoder,numbering,fontsize,previous=OLD_MODEL_DIR
    python -m hichunk.bench.split_eval --labels RENDERED --kinds pdf --methods encoder,fontsize --per-group 30
    python -m hichunk.bench.split_eval --corpus CORPUS --labels RENDERED --lofo \\
        --methods v4=FOLDS_DIR,v3=V3_FOLDS_DIR,numbering,fontsize

Documents: the corpus split as Markdown (``--corpus``; group ``markdown-corpus``),
and the labelled renderings and real documents of ``hichunk corpus render``
(``--labels``; groups by kind: ``markdown``, ``text``, ``pdf``, with real documents
apart as ``pdf-real``, ``text-real``), each per language. The paper's protocol:
heading markers are hidden from every method (explicit headings are not used;
PDF outlines never are), and predicted chunks are scored against the true
headings (``hichunk.bench.metrics.splits.count_tree``; a real PDF's truth is its
outline, complete only to its depth: starts predicted below that depth on lines it
does not list are not scored unless ``--score-below-outlines``). Reported per group and
method: F1_L1, F1_L2 and F1 without level with 95% bootstrap intervals over
documents (micro-pooled counts), n, and seconds per document from the file to
the tree (load, parse, sentences, prediction, tree; models loaded once,
beforehand), plus the share of model windows that fell back. Methods are the
benchmark method names of ``hichunk.bench.runners.methods`` (a model name such as
``encoder``, ``numbering``, ``fontsize``, ``rules``, ``hichunk-gen``, or
``LABEL=MODEL_DIR``) and the structure-free chunkers (``fixed``, ``recursive``,
``cdc``, ``semantic``).

Leave-family-out (``--lofo``): every split of every family is read (a fold model never saw
any document of its held-out families), at most ``--per-family`` documents per family, group
and language, and corpus documents are scored twice: as written (``markdown-corpus``) and with
heading numbers stripped (``markdown-unnumbered``). A method whose model is a folder of fold
models (``hichunk train --folds K``) scores each document with the model that left its family
out. Rows then describe the distribution over families: per-family micro F1, its median with a
95% bootstrap interval over families, and the worst five families
(``hichunk.bench.family_summary``).

Written Markdown (``markdown``, ``markdown-corpus``) is also scored by whether its headings carry
numbers (``markdown numbered``, ``markdown no numbers``: nearly all or nearly none of the headings
after the first open with a heading number; ``heading_numbering``), the two kinds the trees issue
sets targets for.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from hichunk.bench.family_summary import family_rows, format_distribution
from hichunk.bench.metrics.splits import SplitCounts, bootstrap_ci, count_tree
from hichunk.bench.runners.chunk import chunk_all
from hichunk.bench.runners.methods import parse_methods
from hichunk.document import Document, load_document, parse_document
from hichunk.models.train.corpus.truth import Truth, markup_truth, record_truth

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
    family: str = ""


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


def corpus_documents(corpus_dir: str, split: str | tuple[str, ...], unnumbered: bool = False) -> list[Labelled]:
    """The corpus split(s) as Markdown documents, the headings their truth; with ``unnumbered``, also every
    document again with its heading numbers stripped (group ``markdown-unnumbered``)."""
    from hichunk.models.train.corpus.corpus import load_split
    from hichunk.models.train.corpus.families import family_of
    from hichunk.models.train.corpus.normalise import denumber_markdown

    out = []
    for one in (split,) if isinstance(split, str) else split:
        for cdoc in load_split(corpus_dir, one):
            versions = [("markdown-corpus", cdoc.id, cdoc.markdown)]
            if unnumbered:
                versions.append(("markdown-unnumbered", f"unnumbered:{cdoc.id}", denumber_markdown(cdoc.markdown)))
            for group, doc_id, text in versions:
                doc, secs = _timed_load(lambda t=text, i=doc_id: parse_document(t, "markdown", i))
                out.append(Labelled(doc_id, group, cdoc.lang, doc, markup_truth(doc), secs,
                                    count_words(text, cdoc.lang), family_of(cdoc.corpus)))
    return out


def rendered_documents(labels_dir: str, split: str | tuple[str, ...], kinds: set[str] | None, progress: bool = True,
                       keep=None) -> list[Labelled]:
    """Labelled renderings and real documents of ``hichunk corpus render`` (failures to load are logged and skipped).

    ``keep`` (optional) chooses among the label records before any file is loaded.
    """
    import os

    from tqdm import tqdm

    from hichunk.errors import HichunkError
    from hichunk.models.train.corpus.families import family_of
    from hichunk.models.train.corpus.render import load_labels

    splits = {split} if isinstance(split, str) else set(split)
    items = [r for r in load_labels(labels_dir) if r["split"] in splits and (not kinds or r["kind"] in kinds)]
    if keep is not None:
        items = keep(items)
    out = []
    for r in tqdm(items, desc="loading", unit="doc", disable=not progress, file=sys.stderr):
        try:
            doc, secs = _timed_load(lambda r=r: load_document(os.path.join(labels_dir, r["path"])))
        except HichunkError as exc:
            log.warning("%s: cannot load (%s); left out", r["id"], exc)
            continue
        out.append(Labelled(r["id"], label_group(r), r["lang"], doc, record_truth(doc, r), secs,
                            count_words(doc.clean, r["lang"]), family_of(r.get("corpus", ""))))
    return out


def label_group(record: dict) -> str:
    """The input-kind group of a label record: its kind, with real documents apart (``pdf-real``)."""
    return record["kind"] + ("-real" if record.get("real") else "")


def per_family(items: list, key, cap: int) -> list:
    """At most ``cap`` items per ``key(item)``, evenly spaced through the items in id order."""
    groups: dict = {}
    for it in sorted(items, key=lambda x: x["id"] if isinstance(x, dict) else x.id):
        groups.setdefault(key(it), []).append(it)
    out = []
    for members in groups.values():
        step = max(len(members) / cap, 1.0)
        out += [members[int(i * step)] for i in range(min(cap, len(members)))]
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


def evaluate(docs: list[Labelled], methods: str, progress: bool = True,
             below_outlines: bool = False) -> dict[str, MethodResult]:
    """Run every method over ``docs`` (through the benchmarks' one chunking runner) and count.

    A method whose model is a folder of fold models scores each document with the fold model
    that never saw the document's family. A real PDF's truth is its outline, which often stops
    above the headings its pages print: starts predicted below the outline's depth on lines it
    does not list are not scored, unless ``below_outlines``.
    """
    from hichunk.tokens import load_tokenizer

    tokenizer = load_tokenizer()
    by_id = {d.id: d for d in docs}
    families = {d.id: d.family for d in docs}
    out: dict[str, MethodResult] = {}
    for spec in parse_methods(methods):
        chunked = chunk_all({d.id: d.doc for d in docs}, spec, tokenizer, on_error="count", progress=progress,
                            families=families)
        res = MethodResult()
        for doc_id in sorted(chunked):
            c, item = chunked[doc_id], by_id[doc_id]
            if c.tree is None:
                res.failures += 1
                res.counts.append(SplitCounts(gt=Counter(item.truth.levels)))  # a failure finds nothing
            else:
                res.counts.append(count_tree(c.tree, item.truth, below_truth=below_outlines))
            res.seconds.append(item.load_seconds + c.seconds)
            meta = c.tree.meta if c.tree is not None else {}
            res.windows.append(int(meta.get("windows", 0)))
            res.fallbacks.append(int(meta.get("errors", 0)))
        out[spec.label] = res
    return out


WRITTEN_MARKDOWN = ("markdown", "markdown-corpus")  # Markdown whose headings keep the numbers their styles give them
NUMBERED_SHARE = 0.8  # this share of the headings numbered: "numbered"; at most 1 - this share: "no numbers"
_MARKERS = re.compile(r"^[#*_\s]+")


def heading_numbering(item: Labelled) -> str | None:
    """Whether a document's headings carry numbers: "numbered" or "no numbers" when nearly all or nearly none of
    its true headings after the first (often an unnumbered title) open with a heading number; None when mixed or
    under three headings. The trees issue sets targets for numbered and unnumbered headings apart."""
    from hichunk.engine.outline import heading_style

    clean = item.doc.clean
    lines = [_MARKERS.sub("", clean[p:clean.find("\n", p) if "\n" in clean[p:] else None]) for p in sorted(item.truth.at)]
    if len(lines) < 3:
        return None
    share = sum(bool(heading_style(line).numbering) for line in lines[1:]) / (len(lines) - 1)
    return "numbered" if share >= NUMBERED_SHARE else "no numbers" if share <= 1 - NUMBERED_SHARE else None


def group_selections(ordered: list[Labelled]) -> list[tuple[str, list[int]]]:
    """(name, document indexes) per (group, language), then written Markdown by heading numbering per language."""
    keys = sorted({(d.group, d.lang) for d in ordered})
    out = [(f"{g} [{lang}]", [i for i, d in enumerate(ordered) if (d.group, d.lang) == (g, lang)]) for g, lang in keys]
    numbering = {i: heading_numbering(d) for i, d in enumerate(ordered) if d.group in WRITTEN_MARKDOWN}
    for kind in ("numbered", "no numbers"):
        for lang in sorted({d.lang for d in ordered}):
            idx = [i for i, k in numbering.items() if k == kind and ordered[i].lang == lang]
            if idx:
                out.append((f"markdown {kind} [{lang}]", idx))
    return out


def summarise(docs: list[Labelled], results: dict[str, MethodResult], boot: int = 1000) -> list[dict]:
    """One row per (group, language) and method, and per heading numbering of written Markdown (``by_numbering``)."""
    ordered = sorted(docs, key=lambda d: d.id)
    rows = []
    for name, idx in group_selections(ordered):
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
    ap.add_argument("--lofo", action="store_true",
                    help="leave-family-out: read every split, score fold models on the families they left out, "
                    "and report the distribution over families (median, 95%% CI, worst five)")
    ap.add_argument("--per-family", type=int, default=30, metavar="N",
                    help="with --lofo: at most N documents per family, group and language (default 30)")
    ap.add_argument("--score-below-outlines", action="store_true",
                    help="real PDFs: also count starts predicted below the outline's deepest level on lines the "
                    "outline does not list as false (by default they are not scored: the outline says nothing there)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows and document ids here")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    if not args.corpus and not args.labels:
        ap.error("give --corpus and/or --labels")
    if args.per_group is not None and args.per_group < 1:
        ap.error("--per-group must be at least 1")
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, format="%(message)s")
    try:
        docs = load_benchmark_documents(args)
        if args.lofo:
            docs = with_trained_folds(docs, args.methods)
        if not docs:
            raise HichunkError("no documents to score")
        results = evaluate(docs, args.methods, progress=not args.quiet, below_outlines=args.score_below_outlines)
    except HichunkError as exc:
        print(f"split_eval: error: {exc}", file=sys.stderr)
        return 2
    if args.lofo:
        rows, fam_rows = summarise_families(docs, results, args.bootstrap)
        print(format_distribution(rows))
    else:
        rows, fam_rows = summarise(docs, results, args.bootstrap), []
        print(format_rows(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"corpus": args.corpus, "labels": args.labels, "split": "all" if args.lofo else args.split,
                       "lofo": args.lofo, "methods": args.methods, "score_below_outlines": args.score_below_outlines, "docs": sorted(d.id for d in docs), "rows": rows,
                       "families": fam_rows}, fh, indent=1, ensure_ascii=False)
    return 0


def load_benchmark_documents(args: argparse.Namespace) -> list[Labelled]:
    """The documents the command line asks for (one split, or with ``--lofo`` every split, capped per family)."""
    from hichunk.models.train.corpus.corpus import SPLITS
    from hichunk.models.train.corpus.families import family_of

    kinds = set(args.kinds.split(",")) if args.kinds else None
    if not args.lofo:
        docs = corpus_documents(args.corpus, args.split) if args.corpus else []
        if args.labels:
            docs += rendered_documents(args.labels, args.split, kinds, progress=not args.quiet)
        return even_sample(docs, args.per_group) if args.per_group else docs
    cap = args.per_family
    docs = per_family(corpus_documents(args.corpus, SPLITS, unnumbered=True), lambda d: (d.family, d.group, d.lang),
                      cap) if args.corpus else []
    if args.labels:
        def keep(items: list[dict]) -> list[dict]:
            return per_family(items, lambda r: (family_of(r.get("corpus", "")), label_group(r), r["lang"]), cap)

        docs += rendered_documents(args.labels, SPLITS, kinds, progress=not args.quiet, keep=keep)
    return docs


def with_trained_folds(docs: list[Labelled], methods: str) -> list[Labelled]:
    """The documents every fold-model method can score: a family whose fold model was not trained
    (a stopped run), or that its fold plan does not list (added to the corpus after the folds were
    trained), is left out of the benchmark for all methods, and named, so rows stay comparable."""
    from hichunk.errors import HichunkError
    from hichunk.models.train.folds import is_fold_dir, load_plan, trained_folds

    missing: set[str] = set()
    for spec in parse_methods(methods):
        if spec.model is None or not is_fold_dir(spec.model):
            continue
        plan, have = load_plan(spec.model), trained_folds(spec.model)
        if not have:
            raise HichunkError(f"{spec.model}: no fold model is trained yet")
        gone = {f for f, i in plan.fold.items() if i not in have}
        if gone:
            log.warning("%s: folds %s not trained; their families are left out: %s", spec.label,
                        ", ".join(str(i) for i in sorted(set(range(plan.k)) - have)), ", ".join(sorted(gone)))
        unplanned = {d.family for d in docs} - set(plan.fold)
        if unplanned:
            log.warning("%s: families not in its fold plan are left out: %s", spec.label, ", ".join(sorted(unplanned)))
        missing |= gone | unplanned
    return [d for d in docs if d.family not in missing]


def summarise_families(docs: list[Labelled], results: dict[str, MethodResult], boot: int = 1000):
    """Distribution-over-families rows per (group, language) and per language over all groups."""
    ordered = sorted(docs, key=lambda d: d.id)  # ``evaluate`` keeps each method's counts in this order
    selections = group_selections(ordered)
    selections += [(f"all kinds [{lang}]", [i for i, d in enumerate(ordered) if d.lang == lang])
                   for lang in sorted({d.lang for d in ordered})]
    return family_rows(selections, [d.family for d in ordered], {m: r.counts for m, r in results.items()}, boot)

if __name__ == "__main__":
    sys.exit(main())
