"""``hichunk bench``: benchmark datasets, chunking accuracy, retrieval quality, update cost."""

from __future__ import annotations

import argparse
import logging
import os

from hichunk.errors import HichunkError
from hichunk.extras import require_extra

log = logging.getLogger("hichunk")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="benchmarks: make a dataset, score chunking, retrieval and update cost",
                       description="Benchmarks in the HiCBench layout (docs/<dataset>/<id>.txt|md, "
                       "qas/<dataset>.jsonl). Each run writes OUT/report.md, OUT/results.json and plots.")
    actions = p.add_subparsers(dest="bench_action", metavar="ACTION")
    p.set_defaults(handler=lambda args: p.print_help() or 2)

    c = actions.add_parser("chunking", help="split-point precision/recall/F1 per level")
    _data_args(c)
    c.add_argument("--methods", default="hichunk,structure,semantic,fixed",
                   help="comma-separated methods (default: hichunk,structure,semantic,fixed)")
    _common_args(c)
    c.set_defaults(handler=run_chunking_cli)

    r = actions.add_parser("rag", help="evidence recall (and, with an endpoint, Rouge-L / Fact-Cov) per token budget")
    _data_args(r)
    r.add_argument("--methods", default="C200,SC,HC200,HC200+AM",
                   help="comma-separated methods: C<N>, SC, HC<N>, HC<N>-oracle, any chunker name, '+AM' for "
                   "Auto-Merge (default: C200,SC,HC200,HC200+AM)")
    r.add_argument("--budgets", default="2000,2500,3000,3500,4000", help="context budgets in tokens")
    r.add_argument("--baseline", default=None, help="method the others are compared with (default: the first)")
    r.add_argument("--embedder", default=None, help="embedder name or path (default: the offline default)")
    r.add_argument("--top-k", type=int, default=128, help="leaves ranked per question (default: 128, as HiCBench)")
    r.add_argument("--search", default="exact", choices=["exact", "ann", "ivf"],
                   help="search backend of the in-memory index: exact dot products, the ANN graph, or IVF lists "
                   "(default: exact)")
    r.add_argument("--pool", default="document", choices=["document", "all"],
                   help="leaves a question ranks: its own document's (HiCBench; default), or every document's")
    r.add_argument("--punctuation", default="ascii", choices=["ascii", "unicode"],
                   help="punctuation removed before evidence matching (default: ascii, as HiCBench)")
    r.add_argument("--evidence-match", default="glued", choices=["glued", "reference"],
                   help="glued: '. ' becomes '.' in contexts as in evidence (default; our contexts keep spaces); "
                   "reference: only in evidence, exactly as HiCBench")
    _endpoint_args(r)
    r.add_argument("--answer-budget", type=int, default=None,
                   help="budget whose contexts are answered and judged (default: the largest)")
    r.add_argument("--judge-samples", type=int, default=1, help="Fact-Cov judge samples per answer (HiCBench: 5)")
    _common_args(r)
    r.set_defaults(handler=run_rag_cli)

    u = actions.add_parser("update-cost", help="share of encoder inputs recomputed after document edits")
    _data_args(u)
    u.add_argument("--methods", default="fixed,recursive,cdc,semantic,HC200", help="comma-separated methods")
    u.add_argument("--edits", default=None, help="comma-separated edit kinds (default: all)")
    u.add_argument("--max-docs", type=int, default=None, help="use N documents evenly spaced over the sorted ids (default: all)")
    u.add_argument("--seed", type=int, default=0, help="seed for edit positions and inserted text")
    _common_args(u)
    u.set_defaults(handler=run_update_cost_cli)

    m = actions.add_parser("make", help="make a benchmark from a built corpus or a folder of documents")
    src = m.add_mutually_exclusive_group(required=True)
    src.add_argument("--from", dest="from_dir", metavar="DIR", help="folder of Markdown/HTML/reST/man pages")
    src.add_argument("--corpus", metavar="DIR", help="a built corpus (hichunk corpus build)")
    m.add_argument("--split", default="test", help="corpus split to use (default: test)")
    m.add_argument("--langs", default=None, help="languages to keep, e.g. en,zh (default: all)")
    m.add_argument("--out", required=True, metavar="DIR", help="benchmark folder to write")
    m.add_argument("--name", default=None, help="dataset name prefix (default: the folder or corpus name)")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--t1-per-doc", type=int, default=3, help="T1 questions per document at most (default: 3)")
    m.add_argument("--t2-per-doc", type=int, default=2, help="T2 questions per document at most (default: 2)")
    m.add_argument("--llm-per-doc", type=int, default=2, help="LLM questions per document with --endpoint (default: 2)")
    _endpoint_args(m)
    m.set_defaults(handler=run_make_cli)


def _data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, metavar="DIR", help="benchmark folder (holding docs/ and qas/)")
    p.add_argument("--dataset", default=None, help="dataset name under DIR (needed when there are several)")
    p.add_argument("--out", required=True, metavar="DIR", help="where report.md, results.json and plots go")


def _common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", default=None, help="tokenizer for sizes and budgets (default: offline XLM-R)")
    p.add_argument("--leaf-tokens", type=int, default=200, help="size of methods named without one (default: 200)")
    p.add_argument("--on-error", default="fail", choices=["fail", "count"],
                   help="a document that fails to chunk: fail the run (default) or score it as a miss and count it")
    p.add_argument("--reuse-trees", default=None, metavar="DIR",
                   help="keep chunk trees (and, for rag, leaf embeddings) here and reuse them in later runs (trees are "
                   "keyed by chunker, options, tokenizer, hichunk version and document text, not by model weights: "
                   "clear it after changing a model)")


def _endpoint_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("LLM endpoint (optional, OpenAI-compatible)")
    g.add_argument("--endpoint", default=None, metavar="URL", help="e.g. http://127.0.0.1:8000/v1")
    g.add_argument("--endpoint-model", default=None, help="model name the endpoint serves")
    g.add_argument("--endpoint-api", default="chat", choices=["chat", "completions"])
    g.add_argument("--endpoint-key", default=None, help="API key, if the endpoint wants one")


def endpoint_from(args: argparse.Namespace):
    if not args.endpoint:
        return None
    from hichunk.bench.llm import Endpoint

    if not args.endpoint_model:
        raise HichunkError("--endpoint needs --endpoint-model")
    return Endpoint(args.endpoint, args.endpoint_model, args.endpoint_api, args.endpoint_key)


def _progress(args: argparse.Namespace) -> bool:
    return not getattr(args, "quiet", False)


def _cache(args: argparse.Namespace):
    if not args.reuse_trees:
        return None
    from hichunk.bench.runners.chunk import TreeCache

    return TreeCache(args.reuse_trees)


def _say(paths) -> None:
    for path in paths:
        print(path)


def run_chunking_cli(args: argparse.Namespace) -> int:
    from hichunk.bench.data.hicbench_format import load_dataset
    from hichunk.bench.runners.chunking import chunking_report, run_chunking
    from hichunk.bench.runners.methods import parse_methods
    from hichunk.tokens import load_tokenizer

    specs = parse_methods(args.methods, args.leaf_tokens)
    dataset = load_dataset(args.data, args.dataset)
    results = run_chunking(dataset, specs, load_tokenizer(args.tokenizer), args.on_error, _progress(args), _cache(args))
    _say(chunking_report(dataset, results, args.out, getattr(args, "argv", None)))
    return 0


def _budgets(text: str) -> list[int]:
    try:
        budgets = sorted({int(b) for b in text.split(",") if b.strip()})
    except ValueError:
        raise HichunkError(f"budgets must be integers (got {text!r})") from None
    if not budgets or budgets[0] <= 0:
        raise HichunkError("budgets must be positive token counts")
    return budgets


def run_rag_cli(args: argparse.Namespace) -> int:
    from hichunk.bench.data.hicbench_format import load_dataset
    from hichunk.bench.runners.methods import parse_methods
    from hichunk.bench.runners.rag import RagSettings, rag_report, run_rag
    from hichunk.retrieval.embedders import load_embedder
    from hichunk.tokens import load_tokenizer

    specs = parse_methods(args.methods, args.leaf_tokens)
    budgets = _budgets(args.budgets)
    if args.top_k <= 0:
        raise HichunkError("--top-k must be positive")
    endpoint = endpoint_from(args)
    if len(budgets) > 1:  # the recall-vs-budget plot
        require_extra("bench", "matplotlib", what="hichunk bench rag with several budgets")
    if endpoint is not None:  # answers scored with Rouge-L
        require_extra("bench", "rouge", what="hichunk bench rag with --endpoint")
    dataset = load_dataset(args.data, args.dataset)
    tokenizer = load_tokenizer(args.tokenizer)
    settings = RagSettings(budgets=budgets, top_k=args.top_k, punctuation=args.punctuation,
                           glue_context=args.evidence_match == "glued", on_error=args.on_error,
                           baseline=args.baseline or specs[0].label, endpoint=endpoint,
                           answer_budget=args.answer_budget or budgets[-1], judge_samples=args.judge_samples,
                           progress=_progress(args), cache=_cache(args), search=args.search, pool=args.pool,
                           embeddings=os.path.join(args.reuse_trees, "embeddings.sqlite") if args.reuse_trees else None)
    results = run_rag(dataset, specs, load_embedder(args.embedder), tokenizer, settings)
    _say(rag_report(dataset, results, settings, args.out, getattr(args, "argv", None)))
    return 0


def run_update_cost_cli(args: argparse.Namespace) -> int:
    from hichunk.bench.data.hicbench_format import load_dataset
    from hichunk.bench.runners.methods import parse_methods
    from hichunk.bench.updatecost.edits import EDIT_KINDS
    from hichunk.bench.updatecost.runner import POSITIONS, run_update_cost, update_cost_report
    from hichunk.tokens import load_tokenizer

    specs = parse_methods(args.methods, args.leaf_tokens)
    kinds = [k.strip() for k in args.edits.split(",")] if args.edits else list(EDIT_KINDS)
    unknown = [k for k in kinds if k not in EDIT_KINDS]
    if unknown:
        raise HichunkError(f"unknown edit kind {unknown[0]!r} (choose from {', '.join(EDIT_KINDS)})")
    if any(k in POSITIONS for k in kinds):  # the recompute-by-position plot
        require_extra("bench", "matplotlib", what="hichunk bench update-cost with position edits")
    dataset = load_dataset(args.data, args.dataset)
    results = run_update_cost(dataset, specs, load_tokenizer(args.tokenizer), kinds, seed=args.seed,
                              max_docs=args.max_docs, on_error=args.on_error, progress=_progress(args),
                              cache=_cache(args))
    _say(update_cost_report(dataset, results, args.out, getattr(args, "argv", None)))
    return 0


def run_make_cli(args: argparse.Namespace) -> int:
    from hichunk.bench.data.make import MakeOptions, corpus_documents, folder_documents, make_benchmark

    endpoint = endpoint_from(args)
    langs = [x.strip() for x in args.langs.split(",")] if args.langs else None
    if args.corpus:
        docs, source = corpus_documents(args.corpus, args.split, langs)
        name = args.name or f"{os.path.basename(os.path.abspath(args.corpus))}-{args.split}"
    else:
        docs, source = folder_documents(args.from_dir, _progress(args))
        if langs:
            docs = [d for d in docs if d.lang in langs]
        name = args.name or os.path.basename(os.path.abspath(args.from_dir))
    opts = MakeOptions(seed=args.seed, t1_per_doc=args.t1_per_doc, t2_per_doc=args.t2_per_doc,
                       llm_per_doc=args.llm_per_doc, endpoint=endpoint, progress=_progress(args))
    manifest = make_benchmark(docs, args.out, name, source, opts)
    for ds, info in manifest["datasets"].items():
        print(f"{ds}: {info['docs']} documents, questions {info['questions']}, data version {info['data_version'][:12]}")
    return 0
