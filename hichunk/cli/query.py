"""``hichunk query``: retrieve a context for a question from an index, Auto-Merge on by default."""

from __future__ import annotations

import argparse
import json
import sys

from hichunk.errors import HichunkError, InputError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "query", help="retrieve a token-budgeted context from an index",
        description="Rank the index's leaves by similarity to the question, fill the token budget and merge "
        "retrieved siblings into their parent section (Auto-Merge). Prints the context and, under it, the source of "
        "each passage (document, heading path, characters, pages, score); or JSON with the passages and their provenance.",
        epilog="--queries FILE reads JSON lines with a \"query\" key (other keys are copied to the output); "
        "one JSON object per query is written in input order. Exit codes: 0 all queries answered, 1 some failed "
        "(each has an \"error\" key), 2 usage error or nothing answered. With --queries the output is always JSON lines.")
    p.add_argument("query", nargs="?", help="the question (or use --queries)")
    p.add_argument("--index", required=True, metavar="DIR", help="index directory")
    p.add_argument("--queries", metavar="FILE", help="JSON lines with a \"query\" key ('-' reads standard input)")
    p.add_argument("--budget", type=_positive, default=4096, metavar="T", help="context size in tokens (default: 4096)")
    p.add_argument("--no-auto-merge", action="store_true", help="plain greedy fill with leaves only")
    p.add_argument("--mode", default="paper", choices=["paper", "reference"],
                   help="Auto-Merge rule: the paper's (tokens) or the published code's variant (default: paper)")
    p.add_argument("--fill", default="truncate", choices=["truncate", "whole"],
                   help="a passage that does not fit: cut it at the budget, or skip it and try the next (default: truncate)")
    p.add_argument("--order", default="rank", choices=["rank", "document"], help="context order (default: rank)")
    p.add_argument("--separator", default="\n\n", help="text between passages (default: a blank line)")
    p.add_argument("--tokenizer", default=None, metavar="NAME", help="tokenizer the budget is counted in (default: the index's)")
    p.add_argument("--doc", action="append", metavar="ID", help="search only these documents (repeatable)")
    p.add_argument("--max-candidates", type=_positive, default=1000, metavar="K", help="ranked leaves looked at, at most")
    p.add_argument("--ann-expansion", type=_positive, default=None, metavar="E",
                   help="indexes built with hichunk index build --search ann: the graph search's candidate list, per "
                   "leaf of the first 128 (default: by the index's size, 8 up to 20k leaves, 16 up to 200k, 32 up to "
                   "500k, then 64); an index built with search ivf: E probes E/8 percent of its lists (default: 800 "
                   "up to 20k leaves, 200 up to 200k, 160 up to 500k, then 112); larger finds more of the exact "
                   "ranking, slower")
    p.add_argument("--no-sources", action="store_true",
                   help="print the context alone, without the list of sources under it (e.g. to paste it into a prompt)")
    p.add_argument("--json", action="store_true", help="JSON: context, passages with provenance, merges")
    p.add_argument("--html", action="store_true",
                   help="one self-contained HTML page: the context with merged and truncated passages marked, each "
                   "linked to its exact span in its document")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of standard output")
    p.set_defaults(handler=run)


def _positive(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _read_queries(path: str) -> list[dict]:
    try:
        fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from None
    out = []
    with fh:
        try:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    raise InputError(f"{path}:{n}: not a JSON object") from None
                if not isinstance(record, dict) or "query" not in record:
                    raise InputError(f"{path}:{n}: each line needs a \"query\" key")
                out.append(record)
        except UnicodeDecodeError:
            raise InputError(f"{path}: not UTF-8 text") from None
    return out


def run(args: argparse.Namespace) -> int:
    from hichunk.retrieval.index import Index
    from hichunk.retrieval.search import FillOptions
    from hichunk.tokens import load_tokenizer

    if (args.query is None) == (args.queries is None):
        raise HichunkError("give a question or --queries FILE (not both)")
    if args.html and (args.json or args.queries is not None):
        raise HichunkError("--html shows one question's answer: not with --json or --queries")
    index = Index.open(args.index)
    if not index.n_leaves and not getattr(args, "quiet", False):
        print(f"hichunk: note: the index {args.index} holds no {'leaves' if len(index) else 'documents'}: "
              "every context is empty", file=sys.stderr)
    if args.ann_expansion is not None:
        index.ann_expansion = args.ann_expansion
    options = FillOptions(budget=args.budget, auto_merge=not args.no_auto_merge, mode=args.mode, fill=args.fill,
                          order=args.order, separator=args.separator, max_candidates=args.max_candidates)
    tokenizer = load_tokenizer(args.tokenizer) if args.tokenizer else None
    if args.query is not None:
        result = index.search(args.query, options, tokenizer, args.doc)
        if args.html:
            from hichunk.htmlview import answer_page

            page = answer_page(result, {p.doc: index.tree(p.doc) for p in result.passages})
            _emit([page.rstrip("\n")], args.output)
        elif args.json:
            _emit([json.dumps(result.to_dict(), ensure_ascii=False)], args.output)
        else:
            _emit([result.context] + ([] if args.no_sources else ["", sources(result)]), args.output)
        return 0
    records = _read_queries(args.queries)
    lines, failed = [], 0
    from tqdm import tqdm

    for record in tqdm(records, desc="queries", unit="q", file=sys.stderr,
                       disable=getattr(args, "quiet", False) or len(records) < 20):
        out = dict(record)
        try:
            out.update(index.search(record["query"], options, tokenizer, args.doc).to_dict())
            out["query"] = record["query"]
        except HichunkError as exc:
            failed += 1
            out.update(error=str(exc), context=None, passages=[])
            print(f"hichunk: error: query {len(lines) + 1}: {exc}", file=sys.stderr)
        lines.append(json.dumps(out, ensure_ascii=False))
    _emit(lines, args.output)
    if failed:
        return 2 if failed == len(records) else 1
    return 0


def sources(result) -> str:
    """Where the context came from, one line per passage in context order: ``[1] doc > heading > heading,
    chars 120-980, pp. 3-4, score 0.612, merged section``."""
    from hichunk.tree.export import format_pages
    from hichunk.wording import counted

    head = (f"sources ({counted(len(result.passages), 'passage')}, {result.tokens} of {result.budget} tokens, "
            f"Auto-Merge {'on' if result.auto_merge else 'off'}):")
    lines = [head] if result.passages else ["sources: none (nothing in the index matched)"]
    for i, p in enumerate(result.passages, 1):
        facts = [" > ".join([p.doc, *p.titles]), f"chars {p.start}-{p.end}", format_pages(p.pages),
                 f"score {p.score:.3f}", "merged section" if p.merged else "", "truncated" if p.truncated else ""]
        lines.append(f"[{i}] " + ", ".join(f for f in facts if f))
    return "\n".join(lines)


def _emit(lines: list[str], output: str | None) -> None:
    out = open(output, "w", encoding="utf-8") if output else sys.stdout
    try:
        for line in lines:
            out.write(line + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
