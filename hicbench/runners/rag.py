"""``hichunk bench rag``: evidence recall per token budget, per method (and answer quality with an endpoint).

For each method, every document is chunked into a tree and the trees go into
an in-memory ``hichunk.retrieval.Index`` (``add_trees``: leaves embedded from
their encoder inputs through the embedding cache); each question searches the
leaves of its own document only (the HiCBench protocol: a per-document pool,
top 128) and the index fills the context up to each budget T, with or without
Auto-Merge; evidence recall is scored on it. Methods with the same chunking
(``HC200`` and ``HC200+AM``) share one index, so they differ only in the fill.
All methods answer the same full question set; paired bootstrap intervals
compare each with the baseline.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field

from tqdm import tqdm

from hichunk.bench.data.hicbench_format import QA, Dataset
from hichunk.bench.llm import Endpoint
from hichunk.bench.metrics.evidence import EvidenceScorer
from hichunk.bench.report import fmt_diff, fmt_estimate, header, line_plot, table, write_report
from hichunk.bench.runinfo import run_info
from hichunk.bench.runners.chunk import TreeCache, chunk_all, tree_meta
from hichunk.bench.runners.methods import MethodSpec
from hichunk.bench.stats import mean_ci, paired_diff_ci
from hichunk.errors import HichunkError
from hichunk.retrieval import FillOptions, Index, IndexConfig
from hichunk.retrieval.embedders import Embedder
from hichunk.retrieval.search import search_vector
from hichunk.tokens import Tokenizer
from hichunk.tree.model import ChunkTree

log = logging.getLogger(__name__)

POOLS = ("document", "all")


@dataclass
class RagSettings:
    budgets: list[int]
    top_k: int = 128  # leaves of the question's document looked at, best first
    mode: str = "paper"  # Auto-Merge rule (hichunk.retrieval.search: "paper" or "reference")
    fill: str = "truncate"  # a leaf that does not fit: cut it ("truncate") or skip it ("whole")
    embeddings: str | None = None  # embedding cache file kept between runs (default: in memory)
    punctuation: str = "ascii"
    glue_context: bool = True  # ". " -> "." in contexts too (see hichunk.bench.metrics.evidence)
    on_error: str = "fail"
    baseline: str | None = None
    endpoint: Endpoint | None = None
    answer_budget: int | None = None
    judge_samples: int = 1
    progress: bool = True
    cache: TreeCache | None = None
    search: str = "exact"  # the index's search backend: exact, or ann (hichunk.retrieval.index.ann)
    pool: str = "document"  # document: each question ranks its own document's leaves (HiCBench); all: every leaf


@dataclass
class RagItem:
    method: str
    qa: QA
    recall: dict[int, float] = field(default_factory=dict)  # budget -> ERec
    hits: dict[int, int] = field(default_factory=dict)
    n_evidence: int = 0
    error: str | None = None
    answer: str | None = None
    rouge_l: float | None = None
    fact_cov: float | None = None
    n_facts: int = 0
    doc_tokens: int = 0  # the whole document's tokens: a budget at least this large holds all of it

    def all_found(self, budget: int) -> bool:
        return self.error is None and self.n_evidence > 0 and self.hits.get(budget) == self.n_evidence


@dataclass
class RagRun:
    specs: list[MethodSpec]
    questions: list[QA]
    items: dict[str, list[RagItem]]  # method -> one item per question, in question order
    meta: dict
    retrieval: dict  # embedder id and fill settings, for the report header


def _chunk_groups(specs: list[MethodSpec]) -> dict[tuple, list[MethodSpec]]:
    groups: dict[tuple, list[MethodSpec]] = {}
    for spec in specs:
        groups.setdefault(spec.chunking_key, []).append(spec)
    return groups


def _pool(spec: MethodSpec, trees: dict[str, ChunkTree], embedder: Embedder, tokenizer: Tokenizer,
          settings: RagSettings) -> Index:
    """An in-memory index of one method's trees, its leaves embedded through the cache."""
    config = IndexConfig(method=spec.chunker, leaf_tokens=spec.leaf_tokens, merge_over_chunk=spec.merge_over_chunk,
                         hints=spec.hints, tokenizer=tokenizer.name, search=settings.search)
    index = Index.memory(config, embedder, settings.embeddings)
    index.add_trees(sorted(trees.items()), settings.progress)
    return index


def run_rag(dataset: Dataset, specs: list[MethodSpec], embedder: Embedder, tokenizer: Tokenizer,
            settings: RagSettings) -> RagRun:
    questions = list(dataset.qas)
    if not questions:
        raise HichunkError(f"{dataset.name}: no questions")
    if settings.pool not in POOLS:
        raise HichunkError(f"unknown pool {settings.pool!r} (choose from {', '.join(POOLS)})")
    if settings.baseline and settings.baseline not in {s.label for s in specs}:
        raise HichunkError(f"baseline {settings.baseline!r} is not among the methods")
    if settings.endpoint is not None and settings.answer_budget not in settings.budgets:
        raise HichunkError(f"the answer budget {settings.answer_budget} is not one of the budgets {settings.budgets}")
    no_evidence = [q.qid for q in questions if not q.evidences]
    if no_evidence:
        raise HichunkError(f"{len(no_evidence)} questions have no evidence (e.g. {no_evidence[0]}); evidence recall needs it")
    needed = sorted({q.doc_id for q in questions})
    docs = {d: dataset.docs[d].parse() for d in needed}
    doc_tokens = {d: tokenizer.count(doc.clean) for d, doc in docs.items()}
    scorers = [EvidenceScorer(q.evidences, settings.punctuation, settings.glue_context) for q in questions]
    qvecs = embedder.embed_queries([q.input for q in questions])
    items: dict[str, list[RagItem]] = {}
    meta: dict = {}

    def docs_of(q: QA) -> list[str] | None:
        return [q.doc_id] if settings.pool == "document" else None

    for group in _chunk_groups(specs).values():
        chunked = chunk_all(docs, group[0], tokenizer, settings.on_error, settings.progress, settings.cache)
        for spec in group:
            meta[spec.label] = tree_meta(chunked)
        index = _pool(group[0], {d: c.tree for d, c in chunked.items() if c.tree is not None}, embedder, tokenizer,
                      settings)
        for spec in group:
            fills = {b: FillOptions(budget=b, auto_merge=spec.auto_merge, mode=settings.mode, fill=settings.fill,
                                    max_candidates=settings.top_k) for b in settings.budgets}
            out = []
            for qi, q in enumerate(tqdm(questions, desc=f"retrieving {spec.label}", unit="q",
                                        disable=not settings.progress, file=sys.stderr)):
                item = RagItem(spec.label, q, n_evidence=len(q.evidences), doc_tokens=doc_tokens[q.doc_id])
                if q.doc_id not in index.docs:
                    item.error = chunked[q.doc_id].error or "document not chunked"
                    item.recall = {b: 0.0 for b in settings.budgets}  # a failure scores as a miss
                    item.hits = {b: 0 for b in settings.budgets}
                    out.append(item)
                    continue
                for budget in settings.budgets:
                    context = search_vector(index, qvecs[qi], q.input, fills[budget], tokenizer, docs_of(q)).context
                    res = scorers[qi].score(context)
                    item.recall[budget], item.hits[budget] = res.recall, res.hits
                    if settings.endpoint is not None and budget == settings.answer_budget:
                        _answer(item, context, settings, dataset.lang)
                out.append(item)
            items[spec.label] = out
        index.close()
    retrieval = {"embedder": embedder.id, "auto_merge_mode": settings.mode, "fill": settings.fill,
                 "tokenizer": tokenizer.name, "search": settings.search, "pool": settings.pool}
    return RagRun(specs, questions, items, meta, retrieval)


def _answer(item: RagItem, context: str, settings: RagSettings, lang: str | None) -> None:
    """Answer from the context through the endpoint; Rouge-L and Fact-Cov when references exist."""
    from hichunk.bench.answering import answer_question
    from hichunk.bench.metrics.factcov import extract_facts, judge_coverage
    from hichunk.bench.metrics.rouge import best_rouge_l

    q = item.qa
    if not q.answers and not q.facts:
        return
    item.answer = answer_question(settings.endpoint, context, q.input)
    if q.answers:
        item.rouge_l = best_rouge_l(item.answer, q.answers, cjk_chars=lang == "zh")
    facts = q.facts or extract_facts(settings.endpoint, q.input, q.answers[0])
    cov = judge_coverage(settings.endpoint, q.input, item.answer, facts, settings.judge_samples)
    item.fact_cov, item.n_facts = cov.coverage, cov.n_facts


def _recalls(items: list[RagItem], budget: int, qtype: str | None = None, longer: bool = False) -> list[float]:
    """ERec at ``budget`` (of one question type; with ``longer``, only where the document exceeds the budget)."""
    return [i.recall[budget] for i in items
            if (qtype is None or i.qa.type == qtype) and (not longer or i.doc_tokens > budget)]


def rag_report(dataset: Dataset, run: RagRun, settings: RagSettings, out_dir: str,
               argv: list[str] | None = None) -> tuple[str, ...]:
    labels = [s.label for s in run.specs]
    base = settings.baseline or labels[0]
    info = run_info(dataset, {"retrieval": run.retrieval, **run.meta}, argv)
    types = sorted({q.type for q in run.questions if q.type})
    n = len(run.questions)
    text = header("RAG benchmark: evidence recall by context budget", info)
    text += (f"\n{n} questions" + (f" ({', '.join(f'{t}: {sum(q.type == t for q in run.questions)}' for t in types)})" if types else "")
             + f" on {len({q.doc_id for q in run.questions})} documents; every method answers all of them. "
             "ERec = character-weighted share of evidence sentences found (normalised substring) in the context, "
             "in percent, mean over questions with a 95% bootstrap interval (2000 resamples, seed 0); 'all found' "
             "counts questions whose evidence is entirely in the context. "
             + (f"Each question ranks only the leaves of its own document (top {settings.top_k})"
                if settings.pool == "document" else
                f"Each question ranks the leaves of all {len({q.doc_id for q in run.questions})} documents "
                f"(top {settings.top_k})")
             + f", search backend: {settings.search}. Evidence matching: punctuation={settings.punctuation}, "
             f"'. ' glued in contexts too: {settings.glue_context}. "
             + ("A document no longer than the budget fits whole into the context, so every method finds all its "
                "evidence; " if settings.pool == "document" else "")
             + "the last two columns keep only questions whose document is longer than the budget.\n")
    if dataset.manifest and dataset.manifest.get("maker") == "hichunk bench make":
        text += ("\nThese questions were made from the documents' headings (T1: one section; T2: sibling "
                 "sections) and their text names those headings, so they favour chunkers that follow the "
                 "structure; read the numbers as retrieval of whole sections, not as general QA.\n")
    failures = {m: sum(i.error is not None for i in run.items[m]) for m in labels}
    if any(failures.values()):
        text += "\nFailed items (scored as 0): " + ", ".join(f"{m}: {k}" for m, k in failures.items()) + "\n"
    for budget in settings.budgets:
        rows = []
        n_long = sum(i.doc_tokens > budget for i in run.items[base])
        for m in labels:
            its = run.items[m]
            row = [m, fmt_estimate(mean_ci(_recalls(its, budget)))]
            row += [fmt_estimate(mean_ci(_recalls(its, budget, t))) for t in types]
            row += [f"{sum(i.all_found(budget) for i in its)}/{len(its)}"]
            row.append(fmt_diff(paired_diff_ci(_recalls(its, budget), _recalls(run.items[base], budget)))
                       if m != base else "(baseline)")
            row.append(fmt_estimate(mean_ci(_recalls(its, budget, longer=True))))
            row.append(fmt_diff(paired_diff_ci(_recalls(its, budget, longer=True), _recalls(run.items[base], budget, longer=True)))
                       if m != base else "(baseline)")
            rows.append(row)
        cols = (["method", "ERec all"] + [f"ERec {t}" for t in types] + ["all found", f"diff vs {base} (pp)",
                f"ERec, doc > {budget} tok (n={n_long})", f"diff vs {base}, doc > {budget} tok"])
        text += f"\n## Budget {budget} tokens\n\n" + table(cols, rows) + "\n"
    text += "\n## Where a method does not beat the baseline\n\n" + _losses(run, settings.budgets, base) + "\n"
    paths = []
    if len(settings.budgets) > 1:
        os.makedirs(out_dir, exist_ok=True)
        series = {m: [mean_ci(_recalls(run.items[m], b)) for b in settings.budgets] for m in labels}
        plot = line_plot(os.path.join(out_dir, "evidence_recall_vs_budget.png"), settings.budgets, series,
                         "context budget (tokens)", "evidence recall (%)", f"Evidence recall vs budget ({dataset.name})")
        text += f"\n![evidence recall vs budget]({os.path.basename(plot)})\n"
        paths.append(plot)
    if settings.endpoint is not None:
        text += _answer_section(run, settings)
    results = {"kind": "rag", "run": info, "budgets": settings.budgets, "baseline": base,
               "summary": {m: {str(b): {"erec": mean_ci(_recalls(run.items[m], b)).to_dict(),
                                        "all_found": sum(i.all_found(b) for i in run.items[m])}
                               for b in settings.budgets} for m in labels},
               "items": [{"method": i.method, "qid": i.qa.qid, "doc_id": i.qa.doc_id, "type": i.qa.type,
                          "recall": {str(b): r for b, r in i.recall.items()}, "hits": {str(b): h for b, h in i.hits.items()},
                          "n_evidence": i.n_evidence, "doc_tokens": i.doc_tokens, "error": i.error, "answer": i.answer, "rouge_l": i.rouge_l,
                          "fact_cov": i.fact_cov, "n_facts": i.n_facts}
                         for m in labels for i in run.items[m]]}
    return (*write_report(out_dir, text, results), *paths)


def _losses(run: RagRun, budgets: list[int], base: str) -> str:
    """Plain statements of every budget where a method's mean ERec is not above the baseline's."""
    lines = []
    b_items = run.items[base]
    for spec in run.specs:
        if spec.label == base:
            continue
        for budget in budgets:
            for longer, what in ((False, "all questions"), (True, f"documents longer than {budget} tokens")):
                d = paired_diff_ci(_recalls(run.items[spec.label], budget, longer=longer), _recalls(b_items, budget, longer=longer))
                if d.n and d.value <= 0:
                    lines.append(f"- {spec.label} does not beat {base} at {budget} tokens ({what}, n={d.n}): "
                                 f"{100 * d.value:+.2f} points [{100 * d.low:+.2f}, {100 * d.high:+.2f}].")
    return "\n".join(lines) or f"Every method's mean ERec is above {base}'s at every budget (see the intervals above)."


def _answer_section(run: RagRun, settings: RagSettings) -> str:
    from hichunk.bench.metrics.factcov import Coverage, pooled_fact_coverage

    rows = []
    for spec in run.specs:
        its = [i for i in run.items[spec.label] if i.answer is not None]
        rouge = [i.rouge_l for i in its if i.rouge_l is not None]
        cov = [Coverage(i.fact_cov, 0, 0, i.n_facts) for i in its if i.fact_cov is not None]
        rows.append([spec.label, len(its), fmt_estimate(mean_ci(rouge)) if rouge else "n/a",
                     f"{100 * pooled_fact_coverage(cov):.2f}" if cov else "n/a",
                     fmt_estimate(mean_ci([c.coverage for c in cov])) if cov else "n/a"])
    return (f"\n## Answer quality at {settings.answer_budget} tokens (endpoint {settings.endpoint.id})\n\n"
            "Rouge-L F with the `rouge==1.0.1` semantics of HiCBench (best over reference answers); Fact-Cov pooled "
            f"over facts, with {settings.judge_samples} judge sample(s) per answer.\n\n"
            + table(["method", "answered", "Rouge-L [95% CI]", "Fact-Cov (pooled)", "Fact-Cov mean [95% CI]"], rows) + "\n")
