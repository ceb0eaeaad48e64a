"""``hichunk serve``: answer queries over HTTP from one loaded index."""

from __future__ import annotations

import argparse

from hichunk.extras import require_extra


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve", help="serve an index over HTTP (query, chunk, HTML views)",
        description="Load an index once and answer many clients at once: POST /query (the JSON of hichunk query "
        "--json), POST /chunk (a document as JSON text or a file upload -> the tree JSON of hichunk chunk --format "
        "json), POST /index/update (with --allow-update), GET /health, and HTML views at GET / and GET /tree?doc=ID. "
        "Bad input gets a 4xx status and a one-line {\"error\": ...}. SIGINT/SIGTERM stop it gracefully.",
        epilog='needs the serve extra: pip install -e ".[serve]" from the checkout')
    p.add_argument("--index", required=True, metavar="DIR", help="index directory")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one and prints it)")
    p.add_argument("--allow-update", action="store_true", help="accept POST /index/update (add, replace, remove documents)")
    p.add_argument("--max-body-mb", type=float, default=16.0, metavar="MB",
                   help="largest request body accepted, in MiB (default: 16)")
    p.add_argument("--no-query-batching", action="store_true",
                   help="encode each query alone (default: queries that arrive together are encoded in one batch, "
                   "several times the throughput under load; vectors equal to a lone encoding within float32 rounding)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    require_extra("serve", what="hichunk serve")
    import os

    from hichunk.errors import HichunkError
    from hichunk.retrieval.index import Index
    from hichunk.serve import serve

    if not 0 <= args.port <= 65535:
        raise HichunkError(f"--port must be between 0 and 65535 (got {args.port})")
    if args.max_body_mb <= 0:
        raise HichunkError("--max-body-mb must be positive")
    if not any(os.path.isfile(os.path.join(args.index, name)) for name in ("manifest.json", "store.json")):
        raise HichunkError(f"{args.index}: no index there (build one with hichunk index build)")
    serve(Index.open(args.index), args.host, args.port, args.allow_update, int(args.max_body_mb * 1024 * 1024),
          "warning" if not args.verbose else "info", batch_queries=not args.no_query_batching)
    return 0
